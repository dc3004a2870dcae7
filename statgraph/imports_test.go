package statgraph_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryImportsNothingOfTheModule: the library and its sub-packages
// (checkpointers, gate, otel adapters) import nothing of the module outside
// statgraph/ but internal/clock, so that it stays usable on its own and the
// orchestrator never leaks into it (docs/library.md).
func TestLibraryImportsNothingOfTheModule(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages' imports: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v", err)
	}
	const module = "github.com/statgraph/statgraph/"
	var bad []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, module) && !strings.HasPrefix(p, module+"statgraph") && p != module+"internal/clock" {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		t.Errorf("the library imports %d packages of the module outside statgraph/ (only internal/clock is allowed):\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// TestStoreImportsOnlyTheStandardLibrary: package statgraph imports
// statgraph/store (the type of Runtime.Store), so the store package, and
// with it the library, stays free of any dependency: it imports the
// standard library only. Its database implementations live beside the
// checkpointers.
func TestStoreImportsOnlyTheStandardLibrary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages' imports: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./store").Output()
	if err != nil {
		t.Fatalf("go list -deps ./store: %v", err)
	}
	var bad []string
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/statgraph/statgraph/statgraph/store" {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		t.Errorf("statgraph/store imports %d packages outside the standard library; it must import none:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}
