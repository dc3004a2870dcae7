package dispatch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// TestHiddenState: a sandbox hides the whole state root (other plans' run
// stores and workspaces), not only the plan's own directory, unless the
// root holds the repository.
func TestHiddenState(t *testing.T) {
	root := t.TempDir()
	t.Setenv("STATGRAPH_HOME", root)
	repo := t.TempDir()
	plan, err := NewPlan(repo, filepath.Join(repo, "tasks.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := hiddenState(plan); !slices.Contains(got, root) || !slices.Contains(got, plan.Dir) {
		t.Errorf("hiddenState = %v; want the plan's directory %s and the state root %s", got, plan.Dir, root)
	}

	inside := filepath.Join(root, "repo")
	plan, err = NewPlan(inside, filepath.Join(inside, "tasks.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := hiddenState(plan); slices.Contains(got, root) {
		t.Errorf("hiddenState = %v; the state root %s holds the repository and must stay visible", got, root)
	}
}

// TestCheckSandboxHidesAgentHomesAndPrompts: a check in a task's sandbox
// can read neither an agent's private home (its own task's included,
// while it exists) nor any task's prompts. The state root lives outside
// /tmp here, since the sandbox's private /tmp would hide it anyway.
func TestCheckSandboxHidesAgentHomesAndPrompts(t *testing.T) {
	if err := verifier.SandboxAvailable(); err != nil {
		t.Fatal("the sandbox is a required part of statgraph (.ci/run installs bubblewrap): ", err)
	}
	root, err := os.MkdirTemp("/var/tmp", "statgraph-state-")
	if err != nil {
		t.Skip("no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	t.Setenv("STATGRAPH_HOME", root)
	repo := filepath.Join(root, "..", filepath.Base(root)+"-repo")
	plan, err := NewPlan(repo, filepath.Join(repo, "tasks.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(plan.WorkDir(), "1")
	secrets := []string{
		filepath.Join(plan.HomeDir("1"), "attempt-1-x", ".claude.json"),
		filepath.Join(plan.UnitPromptDir("1"), "task-1-attempt-1.md"),
		filepath.Join(plan.UnitPromptDir("2"), "task-2-attempt-1.md"),
	}
	for _, p := range append(secrets, filepath.Join(ws, "ok.txt")) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("canary\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb := (&Dispatcher{}).sandbox(tasks.Task{ID: "1"}, ws, plan)
	for _, p := range append(secrets, filepath.Join(ws, "ok.txt")) {
		// The workspace appears at the repository's path (Sandbox.Root).
		res, err := verifier.Run(context.Background(), verifier.Command{Argv: []string{"cat", sb.Inside(p)}, Dir: ws, Sandbox: sb})
		if err != nil {
			t.Fatal(err)
		}
		if visible, want := res.ExitCode == 0, filepath.Dir(p) == ws; visible != want {
			t.Errorf("cat %s in the check's sandbox: exit %d (%s); want visible %v", p, res.ExitCode, strings.TrimSpace(res.Output), want)
		}
	}
}
