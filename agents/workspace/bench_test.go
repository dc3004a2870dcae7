package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// benchSource returns this module's own checkout, the repository Prepare is
// measured on, skipping the benchmark when it is not a git repository.
func benchSource(b *testing.B) string {
	b.Helper()
	src, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, ".git")); err != nil {
		b.Skipf("%s is not a git repository: %v", src, err)
	}
	return src
}

// benchPrepare times Prepare of a new workspace of src per iteration.
func benchPrepare(b *testing.B, src string) {
	root := b.TempDir()
	ctx := context.Background()
	i := 0
	start := cpuTime()
	for b.Loop() {
		i++
		w, err := Prepare(ctx, Options{Source: src, TaskID: fmt.Sprint(i), Root: root})
		if err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
	reportCPU(b, start)
}

func BenchmarkPrepare(b *testing.B) {
	src := benchSource(b)
	benchPrepare(b, src)
}

// BenchmarkGitCloneLocal is the yardstick for BenchmarkPrepare: git's own
// local clone (hard-linked objects plus a checkout) of the same repository
// into the same file system.
func BenchmarkGitCloneLocal(b *testing.B) {
	src := benchSource(b)
	root := b.TempDir()
	env := testGitEnv(b.TempDir())
	i := 0
	start := cpuTime()
	for b.Loop() {
		i++
		cmd := exec.Command("git", "clone", "--local", "-q", src, filepath.Join(root, fmt.Sprint(i)))
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git clone: %v: %s", err, out)
		}
	}
	reportCPU(b, start)
}

// benchWorkspace prepares a workspace of this module's checkout.
func benchWorkspace(b *testing.B, id string) *Workspace {
	b.Helper()
	w, err := Prepare(context.Background(), Options{Source: benchSource(b), TaskID: id, Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	return w
}

// BenchmarkCommitUnchanged is the commit of an attempt that changed nothing:
// the orchestrator commits once per attempt, so this is its floor.
func BenchmarkCommitUnchanged(b *testing.B) {
	w := benchWorkspace(b, "commit-unchanged")
	ctx := context.Background()
	if _, _, err := w.Commit(ctx, 1, "warm up"); err != nil {
		b.Fatal(err)
	}
	start := cpuTime()
	for b.Loop() {
		if _, changed, err := w.Commit(ctx, 1, "bench"); err != nil || changed {
			b.Fatalf("changed %v, %v", changed, err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkCommitOneFileChanged is the commit of an attempt that rewrote one
// file two directories deep.
func BenchmarkCommitOneFileChanged(b *testing.B) {
	w := benchWorkspace(b, "commit-one")
	ctx := context.Background()
	if _, _, err := w.Commit(ctx, 1, "warm up"); err != nil {
		b.Fatal(err)
	}
	i := 0
	start := cpuTime()
	for b.Loop() {
		i++
		if err := w.FS().WriteFile("bench/deep/attempt.txt", fmt.Sprintf("attempt %d\n", i)); err != nil {
			b.Fatal(err)
		}
		if _, changed, err := w.Commit(ctx, i, "bench"); err != nil || !changed {
			b.Fatalf("commit %d: changed %v, %v", i, changed, err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkPrepareSmall prepares workspaces of a 5-file repository, the size
// of examples/quickstart, where the fixed costs of Prepare dominate.
func BenchmarkPrepareSmall(b *testing.B) {
	src := b.TempDir()
	gitT(b, src, "init", "-q", "-b", "main")
	writeFiles(b, src, map[string]string{
		"go.mod": "module example.com/small\n\ngo 1.22\n", "README.md": "small\n",
		"calc/calc.go": "package calc\n", "calc/calc_test.go": "package calc\n", "tasks.json": "{\"tasks\":[]}\n",
	})
	gitT(b, src, "add", "-A")
	gitT(b, src, "commit", "-q", "-m", "initial")
	benchPrepare(b, src)
}

func BenchmarkTreeHash(b *testing.B) {
	w := benchWorkspace(b, "treehash")
	start := cpuTime()
	for b.Loop() {
		if _, err := w.TreeHash(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}
