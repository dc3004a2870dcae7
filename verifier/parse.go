package verifier

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/statgraph/statgraph/internal/proc"
)

// Bounds that keep parsing memory independent of the output's size.
const (
	maxLineBytes     = 512  // a kept line is cut to this many bytes
	maxHeadLines     = 40   // first lines kept per failure
	maxTailLines     = 20   // last lines kept per failure
	maxDetailed      = 100  // failures that keep their lines; later ones keep only names
	maxFailures      = 5000 // failures recorded at all
	maxScanLineBytes = 64 << 10
)

// Failure is one failing test, or one package that failed as a whole.
type Failure struct {
	// Package is the import path, or empty when the output did not say.
	Package string
	// Test is the test's name (subtests as "TestX/case"), or empty when the
	// package failed as a whole: it did not build, or it crashed, timed out
	// or exited outside any test.
	Test string
	// BuildFailed reports a package that did not compile.
	BuildFailed bool
	// Lines explain the failure: assertion messages with file:line, panics
	// and stack traces, compiler errors; never RUN/PASS/FAIL bookkeeping.
	// Long explanations keep their first and last lines with an "omitted"
	// line between.
	Lines []string
}

// Name returns the test name, or a description of a package-level failure
// such as "build of example.com/m".
func (f Failure) Name() string {
	switch {
	case f.Test != "":
		return f.Test
	case f.BuildFailed:
		return "build of " + orUnknown(f.Package)
	default:
		return "package " + orUnknown(f.Package)
	}
}

func orUnknown(pkg string) string {
	if pkg == "" {
		return "(unknown package)"
	}
	return pkg
}

// feedLines calls line with each line of output, without its line ending.
func feedLines(output string, line func(string)) {
	for l := range strings.Lines(output) {
		line(strings.TrimRight(l, "\r\n"))
	}
}

// lineBuf keeps the first and last lines appended to it.
type lineBuf struct {
	head []string
	tail []string // ring of up to maxTailLines
	next int      // next write position in tail once it is full
	n    int      // lines appended in total
}

func (b *lineBuf) add(s string) {
	if len(s) > maxLineBytes {
		s = string(proc.DropPartialRune([]byte(s[:maxLineBytes]))) + "…"
	}
	b.n++
	switch {
	case len(b.head) < maxHeadLines:
		b.head = append(b.head, s)
	case len(b.tail) < maxTailLines:
		b.tail = append(b.tail, s)
	default:
		b.tail[b.next] = s
		b.next = (b.next + 1) % maxTailLines
	}
}

func (b *lineBuf) lines() []string {
	if b == nil || b.n == 0 {
		return nil
	}
	out := append([]string(nil), b.head...)
	if omitted := b.n - len(b.head) - len(b.tail); omitted > 0 {
		out = append(out, fmt.Sprintf("… %d lines omitted …", omitted))
	}
	out = append(out, b.tail[b.next:]...)
	return append(out, b.tail[:b.next]...)
}

// failureList collects failures in order within the memory bounds.
type failureList struct {
	list []Failure
}

func (l *failureList) add(f Failure) {
	if len(l.list) >= maxFailures {
		return
	}
	if len(l.list) >= maxDetailed {
		f.Lines = nil
	}
	f.Lines = dropStdFrames(f.Lines)
	l.list = append(l.list, f)
}

// hasSubtestOf reports whether a failure of a subtest of test in pkg is
// already recorded, so the parent's bare "--- FAIL" adds nothing.
func (l *failureList) hasSubtestOf(pkg, test string) bool {
	for _, f := range l.list {
		if f.Package == pkg && strings.HasPrefix(f.Test, test+"/") {
			return true
		}
	}
	return false
}

// isBookkeeping reports go test lines that carry no explanation.
func isBookkeeping(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" || t == "PASS" || t == "FAIL" {
		return true
	}
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- FAIL", "--- SKIP", "ok  \t", "FAIL\t", "?   \t", "coverage:"} {
		if strings.HasPrefix(t, p) || strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// testEvent is one line of `go test -json` (see `go doc test2json`).
type testEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build-output and build-fail events
	FailedBuild string // on a package's fail event: the ImportPath that failed
}

type goTestJSONParser struct {
	events   int
	running  map[[2]string]*lineBuf // output of tests still running, by {package, test}
	pkgOut   map[string]*lineBuf    // package-level output, by package
	builds   map[string]*lineBuf    // build-output, by ImportPath
	badBuild map[string]bool        // ImportPaths with a build-fail event not yet reported
	stray    map[string]*lineBuf    // non-JSON lines after a "# pkg" header, by package
	strayPkg string                 // package of the last "# pkg" header
	failedIn map[string]bool        // packages with a recorded test failure
	out      failureList
}

func newGoTestJSONParser() *goTestJSONParser {
	return &goTestJSONParser{
		running:  map[[2]string]*lineBuf{},
		pkgOut:   map[string]*lineBuf{},
		builds:   map[string]*lineBuf{},
		badBuild: map[string]bool{},
		stray:    map[string]*lineBuf{},
		failedIn: map[string]bool{},
	}
}

func (p *goTestJSONParser) line(line string) {
	var ev testEvent
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &ev) != nil || ev.Action == "" {
		p.strayLine(line)
		return
	}
	p.events++
	switch {
	case ev.Action == "build-output":
		if !strings.HasPrefix(ev.Output, "# ") {
			buf(p.builds, ev.ImportPath).add(strings.TrimRight(ev.Output, "\n"))
		}
	case ev.Action == "build-fail":
		p.badBuild[ev.ImportPath] = true
	case ev.Test != "":
		p.testEvent(ev)
	default:
		p.packageEvent(ev)
	}
}

func (p *goTestJSONParser) strayLine(line string) {
	if pkg, ok := strings.CutPrefix(line, "# "); ok {
		p.strayPkg, _, _ = strings.Cut(pkg, " ")
		return
	}
	if p.strayPkg != "" && strings.TrimSpace(line) != "" {
		buf(p.stray, p.strayPkg).add(line)
	}
}

func (p *goTestJSONParser) testEvent(ev testEvent) {
	key := [2]string{ev.Package, ev.Test}
	switch ev.Action {
	case "run":
		buf(p.running, key)
	case "output":
		if l := strings.TrimRight(ev.Output, "\n"); !isBookkeeping(l) {
			buf(p.running, key).add(strings.TrimPrefix(l, "    "))
		}
	case "pass", "skip":
		delete(p.running, key)
	case "fail":
		lines := p.running[key].lines()
		delete(p.running, key)
		p.failedIn[ev.Package] = true
		if len(lines) == 0 && p.out.hasSubtestOf(ev.Package, ev.Test) {
			return
		}
		p.out.add(Failure{Package: ev.Package, Test: ev.Test, Lines: lines})
	}
}

func (p *goTestJSONParser) packageEvent(ev testEvent) {
	switch ev.Action {
	case "output":
		l := strings.TrimRight(ev.Output, "\n")
		if isBuildFailedLine(l) || !isBookkeeping(l) {
			buf(p.pkgOut, ev.Package).add(l)
		}
	case "pass", "skip":
		delete(p.pkgOut, ev.Package)
	case "fail":
		p.packageFailed(ev)
	}
}

func (p *goTestJSONParser) packageFailed(ev testEvent) {
	out := p.pkgOut[ev.Package].lines()
	delete(p.pkgOut, ev.Package)
	build := ev.FailedBuild != ""
	var explained []string
	for _, l := range out {
		if isBuildFailedLine(l) {
			build = true
		} else {
			explained = append(explained, l)
		}
	}
	if build {
		lines := p.builds[ev.FailedBuild].lines()
		delete(p.builds, ev.FailedBuild)
		delete(p.badBuild, ev.FailedBuild)
		if len(lines) == 0 {
			lines = p.stray[ev.Package].lines()
		}
		p.out.add(Failure{Package: ev.Package, BuildFailed: true, Lines: append(lines, explained...)})
		return
	}
	// Tests still running when their package failed crashed or hung it.
	var hung []string
	for key := range p.running {
		if key[0] == ev.Package {
			hung = append(hung, key[1])
		}
	}
	slices.Sort(hung)
	for _, test := range hung {
		key := [2]string{ev.Package, test}
		p.out.add(Failure{Package: ev.Package, Test: test, Lines: p.running[key].lines()})
		delete(p.running, key)
		p.failedIn[ev.Package] = true
	}
	if len(explained) > 0 || !p.failedIn[ev.Package] {
		p.out.add(Failure{Package: ev.Package, Lines: explained})
	}
}

func isBuildFailedLine(l string) bool {
	return strings.HasPrefix(l, "FAIL") && (strings.HasSuffix(l, "[build failed]") || strings.HasSuffix(l, "[setup failed]"))
}

func (p *goTestJSONParser) failures() []Failure {
	// Builds that failed without a package result, as with `go build -json`
	// or `go vet -json`, still count.
	for _, path := range slices.Sorted(maps.Keys(p.badBuild)) {
		pkg, _, _ := strings.Cut(path, " ")
		p.out.add(Failure{Package: pkg, BuildFailed: true, Lines: p.builds[path].lines()})
	}
	clear(p.badBuild)
	return p.out.list
}

func buf[K comparable](m map[K]*lineBuf, k K) *lineBuf {
	b := m[k]
	if b == nil {
		b = &lineBuf{}
		m[k] = b
	}
	return b
}

// dropStdFrames removes the runtime's and the testing package's frames from
// a stack trace in lines (a function line followed by its "\tfile:line"),
// which only show how the test was called. Everything else is kept.
func dropStdFrames(lines []string) []string {
	out := lines[:0:0]
	for i := 0; i < len(lines); i++ {
		if i+1 < len(lines) && isStdFrame(lines[i], lines[i+1]) {
			i++
			continue
		}
		out = append(out, lines[i])
	}
	return out
}

func isStdFrame(fn, file string) bool {
	if !strings.HasPrefix(file, "\t") || (!strings.Contains(file, "/src/runtime/") && !strings.Contains(file, "/src/testing/")) {
		return false
	}
	return hasAnyPrefix(fn, "runtime.", "testing.", "panic(", "created by testing.")
}
