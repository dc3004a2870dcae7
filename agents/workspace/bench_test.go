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

func BenchmarkPrepare(b *testing.B) {
	src := benchSource(b)
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

// BenchmarkGitCloneLocal is the yardstick for BenchmarkPrepare: git's own
// local clone (hard-linked objects plus a checkout) of the same repository
// into the same file system.
func BenchmarkGitCloneLocal(b *testing.B) {
	src := benchSource(b)
	root := b.TempDir()
	env := gitEnv(b.TempDir())
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

func BenchmarkTreeHash(b *testing.B) {
	src := benchSource(b)
	w, err := Prepare(context.Background(), Options{Source: src, TaskID: "treehash", Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	start := cpuTime()
	for b.Loop() {
		if _, err := w.TreeHash(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}
