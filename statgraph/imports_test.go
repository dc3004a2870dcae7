package statgraph_test

import (
	"os/exec"
	"slices"
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

// TestLibraryCoreImports: package statgraph itself imports of the module
// only internal/clock and the standard-library-only sub-packages its
// signatures name (statgraph/cache, the node cache's seam;
// statgraph/store, the type of Runtime.Store; statgraph/drain, the drain
// request), and those import only the standard library, so that the core
// builds without any driver. Their database implementations live beside
// the checkpointers.
func TestLibraryCoreImports(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages' imports: %v", err)
	}
	const module = "github.com/statgraph/statgraph/"
	for pkg, allowed := range map[string][]string{
		".":       {module + "internal/clock", module + "statgraph/cache", module + "statgraph/store", module + "statgraph/drain"},
		"./cache": nil,
		"./store": nil,
		"./drain": nil,
	} {
		out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		self, err := exec.Command(goTool, "list", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		var bad []string
		for _, p := range strings.Fields(string(out)) {
			if p != strings.TrimSpace(string(self)) && !slices.Contains(allowed, p) {
				bad = append(bad, p)
			}
		}
		if len(bad) > 0 {
			t.Errorf("package %s imports %s; only the standard library and %v are allowed", pkg, strings.Join(bad, ", "), allowed)
		}
	}
}
