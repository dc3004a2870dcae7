package workspace

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
)

// BenchmarkPushVsGit times the push of one task's commit (two changed
// files on top of this module's own history) to a bare remote of this
// machine holding that history, in process (PushLocal, the branch set and
// a work-in-progress branch deleted in one transaction, as a queue worker
// publishes) and with git push --atomic through proc.RunGit, as every
// other remote is pushed to. Each iteration runs both once, in rotating
// order, each on a commit of its own made outside the timer; it reports
// the median wall and CPU milliseconds (CPU: this process and the git
// processes it reaped) of each.
//
//	go test -run XXX -bench PushVsGit -count 5 ./agents/workspace
func BenchmarkPushVsGit(b *testing.B) {
	src := benchSource(b)
	remote := filepath.Join(b.TempDir(), "remote.git")
	gitRun(b, "", "clone", "-q", "--bare", "--no-local", src, remote)
	from := filepath.Join(b.TempDir(), "from")
	gitRun(b, "", "clone", "-q", "--no-checkout", remote, from)
	head := gitRun(b, from, "rev-parse", "HEAD")
	ctx := context.Background()
	// commit makes a task's commit on head in from (not in the remote).
	n := 0
	commit := func() string {
		n++
		blob := gitStdin(b, from, fmt.Sprintf("task %d\n", n), "hash-object", "-w", "--stdin")
		tree := gitStdin(b, from, fmt.Sprintf("100644 blob %s\tbench-%d.txt\n", blob, n), "mktree")
		return gitRun(b, from, "commit-tree", "-p", head, "-m", fmt.Sprintf("task %d", n), tree)
	}
	ways := []struct {
		name string
		push func(c, branch, wip string) error
	}{
		{"inprocess", func(c, branch, wip string) error {
			return PushLocal(ctx, from, remote, RefUpdate{Name: branch, New: c}, RefUpdate{Name: wip})
		}},
		{"git", func(c, branch, wip string) error {
			_, err := proc.RunGit(ctx, proc.Git{Dir: from}, "push", "--quiet", "--force", "--atomic", remote, c+":"+branch, ":"+wip)
			return err
		}},
	}
	wall := make([][]time.Duration, len(ways))
	cpu := make([][]time.Duration, len(ways))
	i := 0
	for b.Loop() {
		i++
		for k := range ways {
			j := (i + k) % len(ways)
			b.StopTimer()
			c := commit()
			branch, wip := fmt.Sprintf("refs/heads/statgraph/b/%s-%d", ways[j].name, i), fmt.Sprintf("refs/heads/statgraph-wip/b/%s-%d", ways[j].name, i)
			gitRun(b, from, "push", "-q", remote, head+":"+wip)
			b.StartTimer()
			c0, t0 := cpuTime(), time.Now()
			if err := ways[j].push(c, branch, wip); err != nil {
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

// gitStdin runs git in dir with input on its standard input and returns
// its trimmed output.
func gitStdin(b *testing.B, dir, input string, args ...string) string {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, testGitEnv(b.TempDir()), strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
