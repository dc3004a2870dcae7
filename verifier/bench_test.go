package verifier

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRunTrue measures Run's overhead on the cheapest command; compare
// it with BenchmarkExecTrue from the same run (target: at most 1.5x).
func BenchmarkRunTrue(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		res, err := Run(ctx, Command{Argv: []string{"true"}})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Run(true) = %+v, %v", res, err)
		}
	}
}

// BenchmarkExecTrue is the baseline: a bare exec.Command("true").Run().
func BenchmarkExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunVsExecInterleaved alternates the two so that load from other
// processes hits both alike, and reports their ratio as run/exec.
func BenchmarkRunVsExecInterleaved(b *testing.B) {
	ctx := context.Background()
	var runTotal, execTotal time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := Run(ctx, Command{Argv: []string{"true"}}); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
		runTotal += mid.Sub(start)
		execTotal += time.Since(mid)
	}
	b.ReportMetric(float64(runTotal.Nanoseconds())/float64(b.N), "run-ns/op")
	b.ReportMetric(float64(execTotal.Nanoseconds())/float64(b.N), "exec-ns/op")
	b.ReportMetric(float64(runTotal)/float64(execTotal), "run/exec")
}

// BenchmarkSandboxOverhead alternates a sandboxed and an unsandboxed `true`
// in the same loop, so load from other processes hits both alike, and
// reports the median of each and the median of their per-pair difference
// (target: at most 20 ms per check).
func BenchmarkSandboxOverhead(b *testing.B) {
	requireSandbox(b)
	ws := b.TempDir()
	ctx := context.Background()
	plain := Command{Argv: []string{"true"}, Dir: ws}
	boxed := Command{Argv: []string{"true"}, Dir: ws, Sandbox: &Sandbox{Workspace: ws, ReadOnly: []string{filepath.Join(ws, ".git")}}}
	var ps, ss, ds []time.Duration
	for b.Loop() {
		start := time.Now()
		if res, err := Run(ctx, boxed); err != nil || res.ExitCode != 0 {
			b.Fatalf("sandboxed true = %+v, %v", res, err)
		}
		mid := time.Now()
		if _, err := Run(ctx, plain); err != nil {
			b.Fatal(err)
		}
		s, p := mid.Sub(start), time.Since(mid)
		ss, ps, ds = append(ss, s), append(ps, p), append(ds, s-p)
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(ss), "sandboxed-ms")
	b.ReportMetric(median(ps), "plain-ms")
	b.ReportMetric(median(ds), "overhead-ms")
}

// BenchmarkSandboxStartup runs `true` each of these ways in turn, so that load
// from other processes hits all alike, and reports each one's median wall
// time and median CPU time (this process's and its waited-for children's:
// bwrap and everything in the sandbox):
//
//   - plain: Run without a sandbox;
//   - bwrap-9d8edc4: Run of the bwrap command line that commit 9d8edc4
//     built (its baseArgs, the workspace bound, no bounds, no filter);
//   - bounded: Run with a Sandbox as now (--block-fd, proc.Confine's
//     cgroups and rlimits, the seccomp filter, a sized /tmp), no Helper;
//   - helper: the same through Helper (this test binary as sandbox-init,
//     as statgraph's own binary serves it) without the Landlock layer;
//   - landlock: the same with it, as statgraph ran checks before the
//     small program;
//   - small: the same through the small sandbox-init program
//     (SandboxInitProgram), as statgraph runs checks.
//
// The CPU time of what runs inside bwrap's PID namespace (the helper,
// the command) is not counted: bwrap does not wait for that namespace's
// first process, so getrusage never sees it.
func BenchmarkSandboxStartup(b *testing.B) {
	requireSandbox(b)
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	ctx := context.Background()
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		b.Fatal(err)
	}
	helper := []string{self, "sandbox-init"}
	small, err := SandboxInitProgram(b.TempDir(), helper)
	if err != nil {
		b.Fatal(err)
	}
	old := []string{bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--new-session", "--unshare-net",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", ws, ws, "--chdir", ws, "--", "true"}
	variants := []struct {
		name string
		cmd  Command
	}{
		{"plain", Command{Argv: []string{"true"}, Dir: ws}},
		{"bwrap-9d8edc4", Command{Argv: old, Dir: ws}},
		{"bounded", Command{Argv: []string{"true"}, Dir: ws, Sandbox: &Sandbox{Workspace: ws}}},
		{"helper", Command{Argv: []string{"true"}, Dir: ws, Sandbox: &Sandbox{Workspace: ws, Helper: helper, noLandlock: true}}},
		{"landlock", Command{Argv: []string{"true"}, Dir: ws, Sandbox: &Sandbox{Workspace: ws, Helper: helper}}},
		{"small", Command{Argv: []string{"true"}, Dir: ws, Sandbox: &Sandbox{Workspace: ws, Helper: small}}},
	}
	wall := make([][]time.Duration, len(variants))
	cpu := make([][]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			cpu0, start := cpuTime(), time.Now()
			if res, err := Run(ctx, v.cmd); err != nil || res.ExitCode != 0 {
				b.Fatalf("%s: %+v, %v", v.name, res, err)
			}
			wall[i] = append(wall[i], time.Since(start))
			cpu[i] = append(cpu[i], cpuTime()-cpu0)
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	for i, v := range variants {
		b.ReportMetric(median(wall[i]), v.name+"-ms")
		b.ReportMetric(median(cpu[i]), v.name+"-cpu-ms")
	}
}

// cpuTime is the user and system time of this process and of its
// children that were waited for.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
