package tasks

import (
	"path/filepath"
	"slices"
	"testing"
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
