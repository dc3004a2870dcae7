// Package harness gives the statgraph benchmark programs the argument
// handling, timing and result line of ../shared/bench-anchors, so their
// output sits in the same table as the peer engines'.
package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
)

// Arg returns positional argument i as an int, or def when it is absent.
func Arg(i, def int) int {
	if len(os.Args) <= i+1 {
		return def
	}
	v, err := strconv.Atoi(os.Args[i+1])
	if err != nil {
		Die(fmt.Sprintf("argument %d (%q)", i+1, os.Args[i+1]), err)
	}
	return v
}

// Env returns environment variable name as an int, or def when unset.
func Env(name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		Die(name, err)
	}
	return v
}

// Check exits with status 1 and the message when cond is false.
func Check(cond bool, format string, args ...any) {
	if !cond {
		fmt.Fprintf(os.Stderr, "check failed: "+format+"\n", args...)
		os.Exit(1)
	}
}

// Die exits with status 1 after printing what failed, and why when err
// is not nil.
func Die(what string, err error) {
	if err != nil {
		what += ": " + err.Error()
	}
	fmt.Fprintln(os.Stderr, what)
	os.Exit(1)
}

// Meter adds up wall time and heap allocations over Start/Stop spans; the
// memory statistics are read outside the timed part.
type Meter struct {
	total          time.Duration
	mallocs, bytes uint64
	t0             time.Time
	ms             runtime.MemStats
}

// Start opens a timed span.
func (m *Meter) Start() {
	runtime.ReadMemStats(&m.ms)
	m.mallocs -= m.ms.Mallocs
	m.bytes -= m.ms.TotalAlloc
	m.t0 = time.Now()
}

// Stop closes the span opened by Start.
func (m *Meter) Stop() {
	m.total += time.Since(m.t0)
	runtime.ReadMemStats(&m.ms)
	m.mallocs += m.ms.Mallocs
	m.bytes += m.ms.TotalAlloc
}

// Result describes one program's run.
type Result struct {
	Workload string
	N        int
	Unit     string // node_exec or invoke
	Units    int
	Reps     int
	Warmup   int
	Extra    []string // more key=value fields
}

// Report prints the harness's one-line result with engine "statgraph".
func Report(r Result, m *Meter) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	total := m.total.Seconds()
	var per, allocs, bytes float64
	if r.Units > 0 {
		per = total * 1e6 / float64(r.Units)
		allocs = float64(m.mallocs) / float64(r.Units)
		bytes = float64(m.bytes) / float64(r.Units)
	}
	f := []string{
		"statgraph", r.Workload, strconv.Itoa(r.N),
		strconv.FormatFloat(total, 'f', 6, 64),
		strconv.FormatFloat(per, 'f', 3, 64),
		"unit=" + r.Unit,
		"units=" + strconv.Itoa(r.Units),
		"reps=" + strconv.Itoa(r.Reps),
		"warmup=" + strconv.Itoa(r.Warmup),
		"peak_rss_kib=" + strconv.FormatInt(ru.Maxrss, 10),
		"runtime=" + runtime.Version() + "/gomaxprocs-" + strconv.Itoa(runtime.GOMAXPROCS(0)),
		"allocs_per_unit=" + strconv.FormatFloat(allocs, 'f', 1, 64),
		"bytes_per_unit=" + strconv.FormatFloat(bytes, 'f', 0, 64),
		"version=dev",
	}
	fmt.Println(strings.Join(append(f, r.Extra...), ","))
}

// Total returns the time measured so far.
func (m *Meter) Total() time.Duration { return m.total }

// Median returns the median of v (the upper one of an even count; 0 for
// none), leaving v as it is.
func Median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// LoadAvg returns the machine's 1-minute load average, or "?".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// Must exits as Die does when err is not nil.
func Must(what string, err error) {
	if err != nil {
		Die(what, err)
	}
}

// Git runs git with args in dir through statgraph's one git runner
// (proc.RunGit: git's profile, no prompts, its own process group),
// exiting with git's error when it fails, and returns its output.
func Git(dir string, args ...string) string {
	out, err := proc.RunGit(context.Background(), proc.Git{Dir: dir}, args...)
	if err != nil {
		Die("git", err)
	}
	return string(out)
}

// Sh runs name with args in dir, exiting with its output when it fails.
func Sh(dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		Die(fmt.Sprintf("%s %v: %s", name, args, out), err)
	}
}
