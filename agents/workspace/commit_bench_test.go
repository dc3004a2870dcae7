package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
)

// BenchmarkCommitVsGitAdd times the commit of an attempt that rewrote one
// file two directories deep in a workspace of this module's checkout:
// Commit (the stat cache, statcache.go, and go-git's object writes) next
// to what git does for it in a local clone of the same checkout (git add
// -A, git write-tree, git commit-tree, through proc.RunGit). Each
// iteration runs both once, in rotating order; it reports the median wall
// and CPU milliseconds of each.
//
//	go test -run XXX -bench CommitVsGitAdd -count 5 ./agents/workspace
func BenchmarkCommitVsGitAdd(b *testing.B) {
	w := benchWorkspace(b, "commit-vs-git")
	clone := filepath.Join(b.TempDir(), "clone")
	gitRun(b, "", "clone", "-q", "--local", benchSource(b), clone)
	ctx := context.Background()
	if _, _, err := w.Commit(ctx, 1, "warm up"); err != nil {
		b.Fatal(err)
	}
	gitRun(b, clone, "add", "-A") // git's index stat data, as Commit's cache
	head := gitRun(b, clone, "rev-parse", "HEAD")
	ways := []struct {
		name   string
		commit func(i int) error
	}{
		{"commit", func(i int) error {
			_, changed, err := w.Commit(ctx, i, "bench")
			if err == nil && !changed {
				err = fmt.Errorf("commit %d changed nothing", i)
			}
			return err
		}},
		{"gitadd", func(i int) error {
			g := proc.Git{Dir: clone}
			if _, err := proc.RunGit(ctx, g, "add", "-A"); err != nil {
				return err
			}
			tree, err := proc.RunGit(ctx, g, "write-tree")
			if err != nil {
				return err
			}
			_, err = proc.RunGit(ctx, g, "-c", "user.name=b", "-c", "user.email=b@b", "commit-tree", "-p", head, "-m", "bench", string(tree[:len(tree)-1]))
			return err
		}},
	}
	wall := make([][]time.Duration, len(ways))
	cpu := make([][]time.Duration, len(ways))
	i := 1
	for b.Loop() {
		i++
		b.StopTimer()
		content := fmt.Sprintf("attempt %d\n", i)
		if err := w.FS().WriteFile("bench/deep/attempt.txt", content); err != nil {
			b.Fatal(err)
		}
		writeFiles(b, clone, map[string]string{"bench/deep/attempt.txt": content})
		b.StartTimer()
		for k := range ways {
			j := (i + k) % len(ways)
			c0, t0 := cpuTime(), time.Now()
			if err := ways[j].commit(i); err != nil {
				b.Fatal(err)
			}
			wall[j] = append(wall[j], time.Since(t0))
			cpu[j] = append(cpu[j], cpuTime()-c0)
		}
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	for j, w := range ways {
		b.ReportMetric(median(wall[j]), w.name+"-ms")
		b.ReportMetric(median(cpu[j]), w.name+"-cpu-ms")
	}
}
