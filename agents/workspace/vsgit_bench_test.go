package workspace

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// packedSource makes a repository of n files (in n/20+1 directories),
// committed and packed by git gc, as a user's repository usually is.
func packedSource(b *testing.B, n int) string {
	b.Helper()
	src := b.TempDir()
	gitRun(b, src, "init", "-q", "-b", "main")
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("pkg%02d/file%03d.go", i/20, i)] = fmt.Sprintf("package pkg%02d\n\n// File %d.\nvar V%d = %d\n", i/20, i, i, i*i)
	}
	writeFiles(b, src, files)
	gitRun(b, src, "add", "-A")
	gitRun(b, src, "commit", "-q", "-m", "initial")
	gitRun(b, src, "gc", "-q")
	return src
}

// BenchmarkPrepareVsGit times Prepare next to git's own ways of getting a
// working copy of a repository: `git clone --local` (hard-linked objects
// and a checkout) and `git worktree add`, on packed repositories of 5 and
// 300 files. Each iteration runs the three once, in rotating order, so
// that the machine's noise falls on all of them alike; it reports the
// median milliseconds of each and Prepare's ratios to them.
func BenchmarkPrepareVsGit(b *testing.B) {
	for _, n := range []int{5, 300} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			src := packedSource(b, n)
			root, clones := b.TempDir(), b.TempDir()
			env := testGitEnv(b.TempDir())
			ctx := context.Background()
			gitCmd := func(args ...string) {
				cmd := exec.Command("git", args...)
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("git %v: %v: %s", args, err, out)
				}
			}
			ways := []func(i int){
				func(i int) {
					w, err := Prepare(ctx, Options{Source: src, TaskID: fmt.Sprint(i), Root: root})
					if err != nil {
						b.Fatal(err)
					}
					w.Close()
				},
				func(i int) {
					gitCmd("clone", "--local", "-q", src, filepath.Join(clones, fmt.Sprint("c", i)))
				},
				func(i int) {
					gitCmd("-C", src, "worktree", "add", "-q", "-b", fmt.Sprint("wt", i), filepath.Join(clones, fmt.Sprint("w", i)))
				},
			}
			times := make([][]time.Duration, len(ways))
			i := 0
			for b.Loop() {
				i++
				for k := range ways {
					j := (i + k) % len(ways)
					start := time.Now()
					ways[j](i)
					times[j] = append(times[j], time.Since(start))
				}
			}
			med := make([]float64, len(ways))
			for j, ts := range times {
				slices.Sort(ts)
				med[j] = float64(ts[len(ts)/2]) / float64(time.Millisecond)
			}
			b.ReportMetric(med[0], "prepare-ms")
			b.ReportMetric(med[1], "clone-ms")
			b.ReportMetric(med[2], "worktree-ms")
			b.ReportMetric(med[0]/med[1], "x-clone")
			b.ReportMetric(med[0]/med[2], "x-worktree")
		})
	}
}
