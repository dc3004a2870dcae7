package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
	"github.com/stretchr/testify/require"
)

// Dispatch benchmark sizes (issue 7, "Performance").
const (
	benchTasks = 200
	benchJobs  = 8
)

// benchChain is the length of the dependency chains of
// BenchmarkDispatch200Chains (issue 11, "Figures to report").
const benchChain = 10

// benchTasksJSON has n tasks whose executor and tests are `true`:
// independent when chain is 1, else in chains of that length, each task
// depending on the one before it, so that each starts from its
// predecessor's published branch.
func benchTasksJSON(n, chain int) string {
	var b strings.Builder
	b.WriteString(`{"defaults": {"executor": {"command": ["true"]}, "test_cmd": ["true"]}, "tasks": [` + "\n")
	for i := 1; i <= n; i++ {
		sep := ","
		if i == n {
			sep = ""
		}
		deps := ""
		if (i-1)%chain != 0 {
			deps = fmt.Sprintf(", \"dependencies\": [%d]", i-1)
		}
		fmt.Fprintf(&b, "  {\"id\": %d, \"title\": \"trivial task %d\"%s}%s\n", i, i, deps, sep)
	}
	b.WriteString("]}\n")
	return b.String()
}

// benchRepo returns a fresh copy of the quickstart repository with the
// benchmark's tasks.json (n tasks in chains of length chain) committed.
func benchRepo(b *testing.B, n, chain int) string {
	b.Helper()
	dir := quickstart(b)
	require.NoError(b, os.WriteFile(filepath.Join(dir, "tasks.json"), []byte(benchTasksJSON(n, chain)), 0o644))
	gittest.Git(b, dir, "commit", "-qam", "benchmark tasks")
	return dir
}

// BenchmarkDispatch200 runs `statgraph run -j 8` on 200 trivial tasks in a
// quickstart repository: clones, checkpoints, commits and write-backs
// included. It reports tasks/s and, against the plain loop measured once
// before the timed runs, the per-task overhead and the ratio of wall times.
func BenchmarkDispatch200(b *testing.B) { benchDispatch(b, 1) }

// BenchmarkDispatch200Chains is BenchmarkDispatch200 with the tasks in 20
// chains of 10: each task starts from the branch its predecessor
// published, and the workspaces are removed as they finish. The plain loop
// it is compared with is the same (8 at a time; 20 chains keep 8 busy).
func BenchmarkDispatch200Chains(b *testing.B) { benchDispatch(b, benchChain) }

func benchDispatch(b *testing.B, chain int) { benchDispatchN(b, benchTasks, chain) }

// BenchmarkDispatchScale is BenchmarkDispatch200 at 200, 1,000, 3,000 and 10,000
// independent tasks (issue 13: the per-task time must not grow with the
// file), each size with its own plain loop as the floor, and the peak RSS
// of the statgraph process. -benchtime=1x is enough for the larger sizes.
func BenchmarkDispatchScale(b *testing.B) {
	for _, n := range []int{200, 1000, 3000, 10000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) { benchDispatchN(b, n, 1) })
	}
}

func benchDispatchN(b *testing.B, n, chain int) {
	plain, plainCPU := plainBaseline(b, n)
	var total, cpu time.Duration
	var peak int64
	for b.Loop() {
		b.StopTimer()
		dir := benchRepo(b, n, chain)
		b.StartTimer()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		cmd, stdout, stderr := command(ctx, dir, "run", "-j", fmt.Sprint(benchJobs), "tasks.json")
		err := cmd.Run()
		total += time.Since(start)
		cancel()
		b.StopTimer()
		r := wait(b, err, stdout, stderr)
		require.Equal(b, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss) // KiB on Linux
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		b.StartTimer()
	}
	reportDispatch(b, n, total, plain)
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
	// CPU time of statgraph and every process it waited for (bwrap, the
	// commands, git): what the run costs whatever else loads the machine.
	perCPU := cpu / time.Duration(b.N)
	b.ReportMetric(float64(perCPU)/float64(time.Millisecond)/float64(n), "cpu-ms/task")
	b.ReportMetric(float64(perCPU)/float64(plainCPU), "x-plain-cpu")
}

// BenchmarkDispatch200API is BenchmarkDispatch200 through the
// dispatch.Dispatcher API in this process, so that -cpuprofile shows where the
// dispatcher spends its time. Loading the file and opening the run store
// are timed too, as the binary does them.
func BenchmarkDispatch200API(b *testing.B) {
	plain, _ := plainBaseline(b, benchTasks)
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		dir := benchRepo(b, benchTasks, 1)
		b.StartTimer()
		start := time.Now()
		f, err := tasks.Load(filepath.Join(dir, "tasks.json"), "")
		require.NoError(b, err)
		store := planOf(b, dir, "tasks.json", "").Store()
		require.NoError(b, os.MkdirAll(filepath.Dir(store), 0o755))
		st, err := sqlite.Open(ctx, store)
		require.NoError(b, err)
		d := &dispatch.Dispatcher{File: f, Repo: dir, Checkpointer: st, Jobs: benchJobs}
		sum, err := d.Run(ctx)
		require.NoError(b, err)
		require.NoError(b, st.Close())
		total += time.Since(start)
		require.False(b, sum.Failed(), "every task is done: %+v", sum)
	}
	reportDispatch(b, benchTasks, total, plain)
}

// reportDispatch reports tasks/s, the wall time per task, the per-task
// overhead beyond the plain loop and the ratio of wall times, for a run of
// n tasks.
func reportDispatch(b *testing.B, n int, total, plain time.Duration) {
	per := total / time.Duration(b.N)
	b.ReportMetric(float64(n)/per.Seconds(), "tasks/s")
	b.ReportMetric(float64(per)/float64(time.Millisecond)/float64(n), "ms/task")
	b.ReportMetric(float64(per-plain)/float64(time.Millisecond)/float64(n), "overhead-ms/task")
	b.ReportMetric(float64(per)/float64(plain), "x-plain")
}

// BenchmarkPlainLoop runs the commands the dispatcher runs for 200 trivial
// tasks (the executor and the tests, `true` each), 8 tasks at a time, with
// nothing else: the floor BenchmarkDispatch200 is compared with.
func BenchmarkPlainLoop(b *testing.B) {
	var total time.Duration
	for b.Loop() {
		total += plainLoop(b, benchTasks)
	}
	b.ReportMetric(float64(benchTasks)/(total/time.Duration(b.N)).Seconds(), "tasks/s")
}

// plainBaseline returns the median wall time and the median CPU time
// (of the commands, from getrusage of this process's children) of five
// plain loops of n tasks, the baseline the dispatch benchmarks compare with
// (one loop is too noisy).
func plainBaseline(b *testing.B, n int) (wall, cpu time.Duration) {
	b.Helper()
	var runs, cpus []time.Duration
	for range 5 {
		before := childrenCPU(b)
		runs = append(runs, plainLoop(b, n))
		cpus = append(cpus, childrenCPU(b)-before)
	}
	slices.Sort(runs)
	slices.Sort(cpus)
	return runs[len(runs)/2], cpus[len(cpus)/2]
}

// childrenCPU returns the user and system time of this process's
// terminated, waited-for children so far.
func childrenCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// plainLoop runs executor and tests for each of n tasks, benchJobs tasks at
// a time, and returns the wall time.
func plainLoop(b *testing.B, n int) time.Duration {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	sem := make(chan struct{}, benchJobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	for range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			for _, argv := range [][]string{{"true"}, {"true"}} {
				cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
				cmd.Dir = dir
				if err := cmd.Run(); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	require.NoError(b, firstErr)
	return d
}
