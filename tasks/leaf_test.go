package tasks

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeaf holds the file format to being a leaf: tasks (and what it
// imports) must not reach the agents, the verifier, the git workspaces,
// go-git or the process runner and sandbox (internal/proc, with its
// seccomp filters and proxy), which sit above it (DESIGN.md, "Layout"). A dependency on one of
// them drags the whole orchestrator into anything that only reads a tasks
// file.
func TestLeaf(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the package's imports: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	const module = "github.com/statgraph/statgraph/"
	forbidden := []string{module + "agents", module + "verifier", module + "internal/proc", "github.com/go-git/"}
	var bad []string
	for _, p := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if p == f || strings.HasPrefix(p, f+"/") || strings.HasSuffix(f, "/") && strings.HasPrefix(p, f) {
				bad = append(bad, p)
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("tasks imports %d packages it must not (agents, verifier, agents/workspace, internal/proc, go-git); move the code that needs them to the dispatcher (package dispatch):\n%s",
			len(bad), strings.Join(bad, "\n"))
	}
}
