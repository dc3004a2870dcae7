package statgraph_test

import (
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// exportData finds the compiler's export data of a package with go list,
// which builds it if needed: the module's packages as well as the standard
// library's.
func exportData(t *testing.T) func(path string) (io.ReadCloser, error) {
	return func(path string) (io.ReadCloser, error) {
		out, err := exec.Command("go", "list", "-export", "-f", "{{.Export}}", path).Output()
		if err != nil {
			t.Fatalf("go list -export %s: %v", path, err)
		}
		return os.Open(string(bytes.TrimSpace(out)))
	}
}

// TestValidatorOnlyOptionsDoNotCompileOnNodes type-checks a use of
// WithSeverity and WithMode on AddNode and checks that the compiler refuses
// it (they are ValidatorOptions, not NodeOptions), while the same options on
// AddValidator, and node options on both, compile. Before node and
// validator options had their own types, the misuse compiled and was caught
// only by Compile at run time.
func TestValidatorOnlyOptionsDoNotCompileOnNodes(t *testing.T) {
	const header = `package p

import (
	"context"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

type S struct{}

func node(context.Context, S) (S, error)                    { return S{}, nil }
func check(context.Context, S) (statgraph.Verdict, error) { return statgraph.Verdict{}, nil }

var _ = time.Second
`
	check := func(body string) error {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "p.go", header+body, 0)
		if err != nil {
			t.Fatal(err)
		}
		conf := types.Config{Importer: importer.ForCompiler(fset, "gc", exportData(t))}
		_, err = conf.Check("p", fset, []*ast.File{f}, nil)
		return err
	}
	if err := check(`var _ = statgraph.New[S]().
	AddNode("a", node, statgraph.WithTimeout(time.Second)).
	AddValidator("v", check, statgraph.WithSeverity(statgraph.SeverityLow), statgraph.WithMode(statgraph.ModeAdvisory), statgraph.WithTimeout(time.Second), statgraph.WithInputKey(func(S) string { return "" }))
`); err != nil {
		t.Fatalf("valid options do not compile: %v", err)
	}
	for _, opt := range []string{"statgraph.WithSeverity(statgraph.SeverityLow)", "statgraph.WithMode(statgraph.ModeAdvisory)"} {
		err := check(`var _ = statgraph.New[S]().AddNode("a", node, ` + opt + `)
`)
		if err == nil || !strings.Contains(err.Error(), "ValidatorOption") {
			t.Errorf("AddNode with %s: got %v; want a type error naming ValidatorOption", opt, err)
		}
	}
}
