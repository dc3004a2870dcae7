package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bin is the statgraph binary TestMain builds once for every test.
var bin string

// root is the module root (the parent of tests/).
var root string

// stateHome is STATGRAPH_HOME for the whole run: where the plans' state goes.
var stateHome string

// goCache is the go build cache every child process shares, so the
// quickstart's go test and go vet runs compile each package once.
var goCache string

func TestMain(m *testing.M) {
	os.Exit(setup(m))
}

func setup(m *testing.M) int {
	dir, err := os.MkdirTemp("", "statgraph-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if root, err = filepath.Abs(".."); err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	bin = filepath.Join(dir, "statgraph")
	// The tag compiles in the test hooks (agents/workspace's
	// pushpoint_testhooks.go) that queue_fail_test.go uses; the shipped
	// binary has none (TestVersionFromBuildInfo checks its default build).
	build := exec.Command("go", "build", "-tags", "statgraph_testhooks", "-o", bin, "./cmd/statgraph")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "tests: go build ./cmd/statgraph: %v\n%s", err, out)
		return 1
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests: go env GOCACHE:", err)
		return 1
	}
	goCache = strings.TrimSpace(string(out))
	// Every run keeps its state (run stores, workspaces) here, never in the
	// real home directory; children inherit it through childEnv.
	if stateHome, err = os.MkdirTemp("", "statgraph-e2e-home-"); err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	defer os.RemoveAll(stateHome)
	os.Setenv("STATGRAPH_HOME", stateHome)
	return m.Run()
}

// childEnv is the environment of every statgraph child process: the test's
// own, without model or tracing configuration (so no test reaches a real
// endpoint), with the shared build cache, and with extra entries appended.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OPENAI_") || strings.HasPrefix(name, "OTEL_") || name == "STATGRAPH_MODEL" || name == "STATGRAPH_TRACE" || name == "GOCACHE" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GOCACHE="+goCache, "GOTOOLCHAIN=local")
	return append(env, extra...)
}
