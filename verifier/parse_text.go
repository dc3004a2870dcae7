package verifier

import (
	"maps"
	"slices"
	"strings"
)

// goTestTextParser reads plain `go test` and `go test -v` output. Test logs
// appear under "=== RUN X" (with -v) or after "--- FAIL: X" (without), so
// lines go to the test that was last announced either way; the package is
// known only from the "FAIL\tpkg" or "ok  \tpkg" summary that follows.
type goTestTextParser struct {
	results   int                 // summary and --- lines seen
	current   string              // test of the last === line
	running   map[string]*lineBuf // -v output of tests not yet finished
	attach    int                 // index in out of the failure whose --- FAIL came last, or -1
	attached  lineBuf             // lines after that --- FAIL line
	panicking bool                // the attached lines include "panic: "
	loose     lineBuf             // lines outside any test since the last summary
	firstNew  int                 // index in out of the first failure without a package
	out       failureList
}

func newGoTestTextParser() *goTestTextParser {
	return &goTestTextParser{running: map[string]*lineBuf{}, attach: -1}
}

func (p *goTestTextParser) line(line string) {
	t := strings.TrimSpace(line)
	switch {
	case hasAnyPrefix(t, "=== RUN", "=== CONT", "=== NAME", "=== PAUSE"):
		p.flush()
		if f := strings.Fields(t); len(f) >= 3 {
			p.current = f[2]
		}
	case strings.HasPrefix(t, "--- FAIL:"):
		p.results++
		p.testFailed(testName(t))
	case hasAnyPrefix(t, "--- PASS:", "--- SKIP:"):
		p.results++
		p.flush()
		p.current = ""
		delete(p.running, testName(t))
	case hasAnyPrefix(line, "ok  \t", "FAIL\t", "?   \t"):
		p.results++
		p.summary(line)
	case t == "" || t == "PASS" || t == "FAIL" || hasAnyPrefix(t, "coverage:", "# "):
	case p.attach >= 0 && (p.panicking || line[0] == ' ' || line[0] == '\t' || strings.HasPrefix(line, "panic: ")):
		// Logs after a --- FAIL line are indented; a panic's trace is not,
		// but everything after "panic: " up to the summary belongs to it.
		p.panicking = p.panicking || strings.HasPrefix(line, "panic: ")
		p.attached.add(strings.TrimPrefix(line, "    "))
	case p.current != "":
		buf(p.running, p.current).add(strings.TrimPrefix(line, "    "))
	default:
		p.loose.add(line)
	}
}

func (p *goTestTextParser) testFailed(name string) {
	lines := p.running[name].lines()
	delete(p.running, name)
	p.current = ""
	p.flush()
	if name == "" {
		return
	}
	p.out.add(Failure{Test: name, Lines: lines})
	if n := len(p.out.list); n <= maxDetailed && p.out.list[n-1].Test == name {
		p.attach = n - 1
	}
}

// flush moves the lines gathered after a --- FAIL line into its failure.
func (p *goTestTextParser) flush() {
	if p.attach >= 0 {
		f := &p.out.list[p.attach]
		f.Lines = dropStdFrames(append(f.Lines, p.attached.lines()...))
	}
	p.attach, p.attached, p.panicking = -1, lineBuf{}, false
}

// summary handles "ok  \tpkg\t0.1s", "FAIL\tpkg\t0.1s", "FAIL\tpkg [build failed]".
func (p *goTestTextParser) summary(line string) {
	fields := strings.Fields(line)
	pkg := ""
	if len(fields) >= 2 {
		pkg = fields[1]
	}
	p.flush()
	failedTests := false
	for i := p.firstNew; i < len(p.out.list); i++ {
		p.out.list[i].Package = pkg
		failedTests = true
	}
	if fields[0] == "FAIL" {
		switch {
		case isBuildFailedLine(line):
			p.out.add(Failure{Package: pkg, BuildFailed: true, Lines: p.loose.lines()})
		case !failedTests || len(p.running) > 0:
			p.packageFailed(pkg)
		}
	}
	p.dedupeParents()
	p.firstNew = len(p.out.list)
	p.loose = lineBuf{}
	p.current = ""
	clear(p.running)
}

// packageFailed records a package that failed outside a finished test:
// tests still running crashed or hung it.
func (p *goTestTextParser) packageFailed(pkg string) {
	for _, name := range slices.Sorted(maps.Keys(p.running)) {
		p.out.add(Failure{Package: pkg, Test: name, Lines: p.running[name].lines()})
	}
	if lines := p.loose.lines(); len(lines) > 0 || len(p.running) == 0 {
		p.out.add(Failure{Package: pkg, Lines: lines})
	}
}

// dedupeParents drops a parent test's failure when it only repeats that
// one of its subtests failed.
func (p *goTestTextParser) dedupeParents() {
	kept := p.out.list[:p.firstNew]
	for i, f := range p.out.list[p.firstNew:] {
		if len(f.Lines) == 0 && f.Test != "" && hasSubtest(p.out.list[p.firstNew:], i, f) {
			continue
		}
		kept = append(kept, f)
	}
	p.out.list = kept
}

func hasSubtest(list []Failure, self int, parent Failure) bool {
	for i, f := range list {
		if i != self && f.Package == parent.Package && strings.HasPrefix(f.Test, parent.Test+"/") {
			return true
		}
	}
	return false
}

func (p *goTestTextParser) failures() []Failure {
	if len(p.out.list) > p.firstNew || len(p.running) > 0 {
		// Output ended without a summary line: keep what was found.
		p.flush()
		for _, name := range slices.Sorted(maps.Keys(p.running)) {
			p.out.add(Failure{Test: name, Lines: p.running[name].lines()})
		}
		clear(p.running)
		p.dedupeParents()
	}
	return p.out.list
}

// testName returns X from "--- FAIL: X (0.00s)".
func testName(t string) string {
	_, rest, _ := strings.Cut(t, ":")
	f := strings.Fields(rest)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
