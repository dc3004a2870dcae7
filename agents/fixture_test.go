package agents

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/verifier"
)

// Sources of add.go for the scripted executors.
const (
	fixedAdd = "// Package addmod adds.\npackage addmod\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
	// stillWrong changes add.go without fixing it, so an attempt makes
	// progress and still fails.
	stillWrong = "// Package addmod adds.\npackage addmod\n\n// Add returns the sum of a and b (first try).\nfunc Add(a, b int) int {\n\treturn b - a\n}\n"
	// vetBad is a file go vet rejects (a self-assignment, which go test's
	// own subset of vet checks does not look for) while the tests pass.
	vetBad = "package addmod\n\n// Twice doubles n.\nfunc Twice(n int) int {\n\tn = n\n\treturn 2 * n\n}\n"
	vetOK  = "package addmod\n\n// Twice doubles n.\nfunc Twice(n int) int {\n\treturn 2 * n\n}\n"
)

// sourceRepo makes a git repository holding testdata/addmod (the buggy
// module) in one commit, plus extra files (name -> content) if given.
func sourceRepo(t testing.TB, extra map[string]string) string {
	t.Helper()
	files := map[string]string{}
	entries, err := os.ReadDir(filepath.Join("testdata", "addmod"))
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata", "addmod", e.Name()))
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	maps.Copy(files, extra)
	return gittest.Repo(t, files)
}

// newWorkspace prepares the workspace of task id from a fresh source
// repository (see sourceRepo) in a temporary directory.
func newWorkspace(t testing.TB, id string, extra map[string]string) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.Prepare(context.Background(), workspace.Options{
		Source: sourceRepo(t, extra), TaskID: id, Root: t.TempDir(),
	})
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	return ws
}

// goEnv makes the go tool in checks work offline with this toolchain and
// share the build cache of the test run.
var goEnv = []string{"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off"}

// goChecks are the real checks of the tiny module: go test -json as the
// test check and go vet as the lint check.
func goChecks() []verifier.Check {
	return []verifier.Check{
		{Name: "tests", Kind: verifier.KindTest, Command: verifier.Command{Argv: []string{"go", "test", "-json", "./..."}, Env: goEnv, Timeout: 2 * time.Minute}},
		{Name: "lint", Kind: verifier.KindLint, Command: verifier.Command{Argv: []string{"go", "vet", "./..."}, Env: goEnv, Timeout: 2 * time.Minute}},
	}
}

// grepCheck is a cheap real check for tests about the model client: it
// passes once add.go adds.
func grepCheck() []verifier.Check {
	return []verifier.Check{{
		Name: "fixed", Kind: verifier.KindTest,
		Command: verifier.Command{Argv: []string{"grep", "-q", "return a + b", "add.go"}, Timeout: time.Minute},
	}}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers, for Config.Log
// and llm.Config.Logf.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
