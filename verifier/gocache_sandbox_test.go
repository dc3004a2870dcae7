package verifier

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxGoTestUsesLayeredCache runs go test on a small module in a
// sandbox whose GOCACHEPROG is this test binary: it passes, reusing the
// user's build cache (only a handful of entries land in the task's private
// cache, where a fresh cache would get the whole standard library).
func TestSandboxGoTestUsesLayeredCache(t *testing.T) {
	requireSandbox(t)
	if userGoCache() == "" {
		t.Fatal("this test needs a go build cache of the user's (run any go build first)")
	}
	t.Parallel()
	_, ws, sb := userRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n"), 0o644))
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	sb.GoCacheProg = []string{self, "gocacheprog"}
	res, err := Run(t.Context(), Command{Argv: []string{"go", "test", "-count=1", "./..."}, Dir: ws, Sandbox: sb, Timeout: 5 * time.Minute})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Output)
	entries, _ := filepath.Glob(filepath.Join(sb.CacheDir, "go-build", "*", "*-a"))
	assert.NotEmpty(t, entries, "the task's own build went to its private cache")
	assert.Less(t, len(entries), 40, "the standard library came from the user's cache, not rebuilt")
}

// TestSandboxReusesUsersCompiledDependencies: a dependency the user has
// compiled (google/uuid, from the user's module cache) is compiled in no
// task's sandbox, however many tasks build it; with a private module cache
// per task (the layout before issue 22) every task compiles it again,
// because build-cache keys hold the package's directory.
func TestSandboxReusesUsersCompiledDependencies(t *testing.T) {
	requireSandbox(t)
	mod := userModCache()
	if mod == "" || userGoCache() == "" {
		t.Fatal("this test needs the user's module and build caches (go mod download in the repository)")
	}
	if _, err := os.Stat(filepath.Join(mod, "github.com", "google", "uuid@v1.6.0")); err != nil {
		t.Fatalf("this test needs github.com/google/uuid v1.6.0 in %s (go mod download in the repository): %v", mod, err)
	}
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	module := func(t *testing.T) string {
		ws := t.TempDir()
		files := map[string]string{
			"go.mod":  "module example.com/m\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n",
			"go.sum":  "github.com/google/uuid v1.6.0 h1:NIvaJDMOsjHA8n1jAhLSgzrAzy1Hgr+hNrb57e+94F0=\ngithub.com/google/uuid v1.6.0/go.mod h1:TIyPZe4MgqvfeYDBFedMoGGpEw/LqOeaOT+nhxU+yHo=\n",
			"main.go": "package main\n\nimport \"github.com/google/uuid\"\n\nfunc main() { println(uuid.NewString()) }\n",
		}
		for name, body := range files {
			require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644))
		}
		return ws
	}
	// The user has built it once, outside any sandbox.
	warm := exec.Command("go", "build", "-o", os.DevNull, ".")
	warm.Dir, warm.Env = module(t), append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := warm.CombinedOutput()
	require.NoError(t, err, "%s", out)

	build := func(t *testing.T, env ...string) string {
		ws := module(t)
		sb := &Sandbox{Workspace: ws, CacheDir: filepath.Join(t.TempDir(), "cache"), GoCacheProg: []string{self, "gocacheprog"},
			ReadOnly: []string{filepath.Join(mod, "cache", "download")}}
		res, err := Run(t.Context(), Command{Argv: []string{"go", "build", "-v", "-o", os.DevNull, "."}, Dir: ws, Sandbox: sb,
			Timeout: 5 * time.Minute, Env: append([]string{"GOPROXY=off"}, env...)})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, res.Output)
		return res.Output
	}
	for task := 1; task <= 2; task++ {
		assert.NotContains(t, build(t), "github.com/google/uuid", "task %d compiled the dependency the user had compiled", task)
	}
	// The control: a private module cache per task, filled from the user's downloads.
	private := func() string { return filepath.Join(t.TempDir(), "gomod") }
	assert.Contains(t, build(t, "GOMODCACHE="+private(), "GOPROXY=file://"+filepath.Join(mod, "cache", "download")),
		"github.com/google/uuid", "with a private module cache the dependency is compiled again")
}

// TestSandboxChainedTasksCompilePackageOnce: two tasks build the same
// package of the repository in workspaces at different host paths. With the
// workspace shown at the repository's path (Root) and the first task's
// cache as a layer under the second's, the second compiles nothing the
// first compiled; without Root (the layout before) the package's
// directory differs, its build-cache key too, and it is compiled again.
func TestSandboxChainedTasksCompilePackageOnce(t *testing.T) {
	requireSandbox(t)
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	repo := t.TempDir()
	workspace := func(t *testing.T) string {
		ws := t.TempDir()
		files := map[string]string{
			"go.mod":     "module example.com/chain\n\ngo 1.22\n",
			"lib/lib.go": "package lib\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n",
			"main.go":    "package main\n\nimport \"example.com/chain/lib\"\n\nfunc main() { println(lib.Answer()) }\n",
		}
		for name, body := range files {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644))
		}
		return ws
	}
	build := func(t *testing.T, root string, layers ...string) (string, string) {
		ws, cache := workspace(t), filepath.Join(t.TempDir(), "cache")
		sb := &Sandbox{Workspace: ws, CacheDir: cache, GoCacheProg: []string{self, "gocacheprog"}, GoCacheLayers: layers, Root: root}
		res, err := Run(t.Context(), Command{Argv: []string{"go", "build", "-v", "-o", os.DevNull, "."}, Dir: ws, Sandbox: sb,
			Timeout: 5 * time.Minute, Env: []string{"GOPROXY=off"}})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, res.Output)
		return res.Output, filepath.Join(cache, "go-build")
	}
	out, first := build(t, repo)
	require.Contains(t, out, "example.com/chain/lib", "the first task compiles the package")
	out, _ = build(t, repo, first)
	assert.NotContains(t, out, "example.com/chain/lib", "the second task compiled the package the first had compiled")
	// The controls: at the workspace's own path, or without the layer, the
	// package is compiled again.
	out, first = build(t, "")
	require.Contains(t, out, "example.com/chain/lib")
	out, _ = build(t, "", first)
	assert.Contains(t, out, "example.com/chain/lib", "at its own path the workspace's package has another key")
	out, _ = build(t, repo)
	assert.Contains(t, out, "example.com/chain/lib", "without the first task's layer the package is compiled")
}

// TestSandboxRootShowsWorkspaceNotRepository: with Root, the workspace's
// files are at the repository's path, its .git read-only there, the
// command runs there, and none of the repository's own files show.
func TestSandboxRootShowsWorkspaceNotRepository(t *testing.T) {
	requireSandbox(t)
	repo, ws, sb := userRepo(t)
	sb.ReadOnly, sb.Hide, sb.CacheDir = []string{filepath.Join(ws, ".git")}, nil, ""
	require.NoError(t, os.WriteFile(filepath.Join(repo, "only-in-repo"), []byte("user's\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "only-in-ws"), []byte("task's\n"), 0o644))
	sb.Root = repo
	res, err := Run(t.Context(), Command{Argv: []string{"sh", "-c",
		`pwd; cat only-in-ws; test -e only-in-repo && echo REPO-VISIBLE; touch .git/planted 2>/dev/null && echo GIT-WRITABLE; touch new-file`},
		Dir: ws, Sandbox: sb})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Output)
	assert.Equal(t, repo+"\ntask's\n", res.Output)
	assert.FileExists(t, filepath.Join(ws, "new-file"), "a write at the repository's path lands in the workspace")
	assert.NoFileExists(t, filepath.Join(repo, "new-file"))
	assert.Equal(t, filepath.Join(repo, "x"), sb.Inside(filepath.Join(ws, "x")))
	// A task that reads the repository keeps the workspace at its own path.
	sb.ReadOnly = append(sb.ReadOnly, repo)
	assert.Equal(t, filepath.Join(ws, "x"), sb.Inside(filepath.Join(ws, "x")))
}
