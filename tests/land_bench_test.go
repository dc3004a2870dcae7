package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// landBenchTasks is how many done tasks BenchmarkLand lands.
const landBenchTasks = 8

// landBenchReps is how many times each side is measured; medians are
// reported.
const landBenchReps = 3

// BenchmarkLand compares `statgraph land` with a plain loop doing the
// least a person would on the same branches: in a fresh clone, `git merge
// --no-edit` each task's branch onto main in the same order and run its
// check (`go vet ./...` on a small module) after each merge. land does
// that and more per task: a workspace of its own for each merge, the
// check in the sandbox, the compare-and-swap of main and its record. Both
// are measured in the same run, each landBenchReps times alternately from
// the same start (main reset, land's record removed); it reports the
// medians per task of wall time and of CPU (user+system of the child
// processes, from rusage), and their ratios.
func BenchmarkLand(b *testing.B) {
	dir, branches, initial := landBenchRepo(b)
	var landWall, landCPU, plainWall, plainCPU []time.Duration
	for b.Loop() {
		for range landBenchReps {
			w, c := landOnce(b, dir, initial)
			landWall, landCPU = append(landWall, w), append(landCPU, c)
			w, c = plainMergeLoop(b, dir, initial, branches)
			plainWall, plainCPU = append(plainWall, w), append(plainCPU, c)
		}
	}
	per := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond) / landBenchTasks
	}
	lw, lc, pw, pc := per(landWall), per(landCPU), per(plainWall), per(plainCPU)
	b.ReportMetric(lw, "land-ms/task")
	b.ReportMetric(lc, "land-cpu-ms/task")
	b.ReportMetric(pw, "plain-ms/task")
	b.ReportMetric(pc, "plain-cpu-ms/task")
	b.ReportMetric(lw/pw, "x-plain-wall")
	b.ReportMetric(lc/pc, "x-plain-cpu")
}

// landBenchRepo makes a Go module with landBenchTasks done tasks, each
// adding its own file, and returns the repository, the tasks' branches in
// the order land takes them, and main's first commit.
func landBenchRepo(b *testing.B) (dir string, branches []string, initial string) {
	b.Helper()
	var tasks []string
	for i := 1; i <= landBenchTasks; i++ {
		tasks = append(tasks, fmt.Sprintf(`{"id": %d, "title": "file %d"}`, i, i))
	}
	dir = newRepo(b, map[string]string{
		"go.mod":   "module example.com/bench\n\ngo 1.22\n",
		"doc.go":   "// Package bench is landed on.\npackage bench\n",
		"agent.sh": "#!/bin/sh\nprintf 'package bench\\n\\n// F%s is task %s'\"'\"'s.\\nfunc F%s() int { return %s }\\n' \"$1\" \"$1\" \"$1\" \"$1\" > \"f$1.go\"\n",
		"tasks.json": `{"defaults": {"test_cmd": ["go", "vet", "./..."], "executor": {"command": ["./agent.sh", "{task_id}"]}},
 "tasks": [` + strings.Join(tasks, ",\n  ") + `]}
`,
	})
	r := statgraph(b, dir, "run", "--plain", "-j", "1", "tasks.json")
	require.Equal(b, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	gittest.Git(b, dir, "switch", "-q", "--detach")
	plan := planOf(b, dir, "tasks.json", "")
	for i := 1; i <= landBenchTasks; i++ {
		branches = append(branches, plan.Branch(fmt.Sprint(i)))
	}
	return dir, branches, gittest.Git(b, dir, "rev-parse", "main")
}

// landOnce resets main to initial, lands every task and returns the wall
// time and the CPU of the statgraph process.
func landOnce(b *testing.B, dir, initial string) (wall, cpu time.Duration) {
	b.Helper()
	gittest.Git(b, dir, "update-ref", "refs/heads/main", initial)
	require.NoError(b, os.RemoveAll(planOf(b, dir, "tasks.json", "").LandFile()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, dir, "land", "tasks.json")
	start := time.Now()
	err := cmd.Run()
	wall = time.Since(start)
	require.NoError(b, err, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Equal(b, landBenchTasks, strings.Count(stdout.String(), " landed: "), stdout.String())
	return wall, rusageCPU(cmd.ProcessState)
}

// plainMergeLoop clones the repository at initial and, in one shell, merges
// each branch onto main and runs go vet after each; it returns the wall
// time and the CPU of that shell and its children.
func plainMergeLoop(b *testing.B, dir, initial string, branches []string) (wall, cpu time.Duration) {
	b.Helper()
	clone := filepath.Join(b.TempDir(), "plain")
	script := `set -e
git clone -q --no-checkout "$1" "$2"
cd "$2"
git checkout -q -B main "$3"
shift 3
for br in "$@"; do
  git fetch -q origin "$br"
  git merge -q --no-edit FETCH_HEAD
  go vet ./...
done
`
	args := append([]string{"-c", script, "sh", dir, clone, initial}, branches...)
	cmd := exec.Command("sh", args...)
	cmd.Env = append(childEnv(), gittest.Env()...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall = time.Since(start)
	require.NoError(b, err, "%s", out)
	return wall, rusageCPU(cmd.ProcessState)
}

// rusageCPU is the user and system time of a finished process and the
// children it waited for.
func rusageCPU(ps *os.ProcessState) time.Duration {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return ps.UserTime() + ps.SystemTime()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
