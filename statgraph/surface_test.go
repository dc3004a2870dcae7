package statgraph_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// surfaceTarget is the size issue 12 asks the exported surface to reach,
// and surfaceCeiling the size it may not grow past today. The ceiling only
// goes down: whoever removes identifiers lowers it to the new count (the
// test says when), until it meets the target.
const (
	surfaceTarget  = 100
	surfaceCeiling = 100
)

// exportedSurface lists the package's exported identifiers, read with
// go/parser from the non-test .go files of dir. The counting rule: one
// identifier per exported package-level const, var, func and type; one per
// exported method of an exported type (generic receivers included); and one
// per method of an exported interface, since a caller implements or calls
// each. Struct fields are members of a type, not names of the package: they
// are returned apart, as "Type.Field", and not held to the ceiling.
func exportedSurface(t *testing.T, dir string) (idents, fields []string) {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					idents = append(idents, "func "+d.Name.Name)
					continue
				}
				if recv := receiverName(d.Recv.List[0].Type); ast.IsExported(recv) {
					idents = append(idents, "method "+recv+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								idents = append(idents, d.Tok.String()+" "+n.Name)
							}
						}
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						idents = append(idents, "type "+s.Name.Name)
						switch tt := s.Type.(type) {
						case *ast.StructType:
							for _, fl := range tt.Fields.List {
								for _, n := range fl.Names {
									if n.IsExported() {
										fields = append(fields, s.Name.Name+"."+n.Name)
									}
								}
							}
						case *ast.InterfaceType:
							for _, m := range tt.Methods.List {
								for _, n := range m.Names {
									if n.IsExported() {
										idents = append(idents, "method "+s.Name.Name+"."+n.Name)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(idents)
	slices.Sort(fields)
	return idents, fields
}

// receiverName is the type name of a method's receiver: T for T, *T, T[P]
// and *T[P].
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// TestExportedSurface holds the package's exported identifiers to the list
// in testdata/api.txt, so that the surface cannot grow unnoticed: adding or
// removing one fails until the list is rewritten (go test ./statgraph -run
// TestExportedSurface -args -update) and reviewed with the change. It
// also fails when the count exceeds surfaceCeiling.
func TestExportedSurface(t *testing.T) {
	idents, fields := exportedSurface(t, ".")
	t.Logf("exported surface: %d identifiers (target %d, ceiling %d), %d fields", len(idents), surfaceTarget, surfaceCeiling, len(fields))
	if len(idents) > surfaceCeiling {
		t.Errorf("the package exports %d identifiers, above its ceiling of %d (target %d): unexport or fold some before adding any:\n%s",
			len(idents), surfaceCeiling, surfaceTarget, strings.Join(idents, "\n"))
	}
	if len(idents) < surfaceCeiling {
		t.Errorf("the package exports %d identifiers, below its ceiling of %d: lower surfaceCeiling in surface_test.go to %d so that the gain is kept", len(idents), surfaceCeiling, len(idents))
	}
	golden := filepath.Join("testdata", "api.txt")
	got := fmt.Sprintf("# %d identifiers\n%s\n# %d fields\n%s\n", len(idents), strings.Join(idents, "\n"), len(fields), strings.Join(fields, "\n"))
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v: create it with go test ./statgraph -run TestExportedSurface -args -update", err)
	}
	if string(want) != got {
		t.Errorf("the exported surface differs from %s; if the change is meant, rewrite it with go test ./statgraph -run TestExportedSurface -args -update and review the diff.\ngot:\n%s", golden, got)
	}
}

// TestExportedSurfaceCounting checks the counting rule on a small package:
// each kind of declaration is counted once, unexported names and methods of
// unexported types are not, and fields are listed apart.
func TestExportedSurfaceCounting(t *testing.T) {
	dir := t.TempDir()
	src := `package p

const A, b = 1, 2
var V int
type T[P any] struct{ F, g int; H string }
func (T[P]) M() {}
func (*T[P]) n() {}
type u struct{ X int }
func (u) M() {}
type I interface{ Get() int; put() }
func New() {}
func helper() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\nfunc Exported() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	idents, fields := exportedSurface(t, dir)
	want := []string{"const A", "func New", "method I.Get", "method T.M", "type I", "type T", "var V"}
	if !slices.Equal(idents, want) {
		t.Errorf("identifiers: got %v; want %v", idents, want)
	}
	if wantF := []string{"T.F", "T.H"}; !slices.Equal(fields, wantF) {
		t.Errorf("fields: got %v; want %v", fields, wantF)
	}
}
