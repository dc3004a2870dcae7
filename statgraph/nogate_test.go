package statgraph_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRunLoopHasNoGate: gates are a layer over conditional edges in package
// statgraph/gate, so no identifier of this package's code (run loop,
// compiler, events, persistence, drawings) names a gate, a validator or a
// verdict. Before the gate moved out, gateKind, gateRun, the gs field and
// some fifty more did.
func TestRunLoopHasNoGate(t *testing.T) {
	gateWord := regexp.MustCompile(`(?i)gate|validator|verdict`)
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if gateWord.MatchString(name) {
			t.Errorf("file %s: the gate lives in package statgraph/gate", name)
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && gateWord.MatchString(id.Name) {
				t.Errorf("%s: identifier %s: the run loop has no gate machinery; it belongs in package statgraph/gate", fset.Position(id.Pos()), id.Name)
			}
			return true
		})
	}
	if files < 10 {
		t.Fatalf("read only %d source files; is the test running in the package directory?", files)
	}
}
