package llmtest_test

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const importPath = "github.com/statgraph/statgraph/agents/llm/llmtest"

// TestOnlyTestsImportLLMTest walks the module and fails for every non-test
// Go file that brings this package into code that is not a test, as the
// package doc forbids (see llmtestReach for what is allowed).
func TestOnlyTestsImportLLMTest(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module root is three levels up")

	r, err := llmtestReach(root, importPath)
	require.NoError(t, err)
	for _, v := range r.violations {
		t.Error(v)
	}
	assert.Greater(t, r.scanned, 20, "the walk read the module's Go files")
	assert.Positive(t, r.testers, "this package's own tests import it, so the walk can see importers")
}

// TestLLMTestRuleCatchesViolations runs the rule on small modules: a
// test-helper package that only tests import may import llmtest, directly
// or through another helper; anything that brings it into other code is
// reported, through however many helpers.
func TestLLMTestRuleCatchesViolations(t *testing.T) {
	const mod = "example.com/m"
	llm := `package llmtest` + "\n"
	helper := func(pkg string, imports ...string) string {
		s := "package " + pkg + "\n"
		for _, i := range imports {
			s += fmt.Sprintf("import _ %q\n", mod+"/"+i)
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string // one substring per violation, in order
	}{
		{"a helper imported by tests", map[string]string{
			"control/controltest/fixture.go": helper("controltest", "llmtest"),
			"control/control_test.go":        helper("control_test", "control/controltest"),
			"web/web_test.go":                helper("web_test", "control/controltest", "llmtest"),
		}, nil},
		{"helpers chained, then tests", map[string]string{
			"control/controltest/fixture.go": helper("controltest", "llmtest"),
			"web/webtest/fixture.go":         helper("webtest", "control/controltest"),
			"web/web_test.go":                helper("web_test", "web/webtest"),
		}, nil},
		{"imported by plain code", map[string]string{
			"agents/run.go": helper("agents", "llmtest"),
		}, []string{"agents/run.go imports " + mod + "/llmtest"}},
		{"a helper imported by plain code", map[string]string{
			"control/controltest/fixture.go": helper("controltest", "llmtest"),
			"control/control_test.go":        helper("control_test", "control/controltest"),
			"web/server.go":                  helper("web", "control/controltest"),
		}, []string{"web/server.go imports " + mod + "/control/controltest, which imports " + mod + "/llmtest"}},
		{"a chain of helpers reaching a binary", map[string]string{
			"control/controltest/fixture.go": helper("controltest", "llmtest"),
			"web/webtest/fixture.go":         helper("webtest", "control/controltest"),
			"cmd/app/main.go":                helper("main", "web/webtest"),
		}, []string{"cmd/app/main.go imports " + mod + "/web/webtest, which imports " + mod + "/control/controltest, which imports " + mod + "/llmtest"}},
		{"a main package named like a helper", map[string]string{
			"tools/runtest/main.go": helper("main", "llmtest"),
		}, []string{"tools/runtest/main.go is a command"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.files["go.mod"] = "module " + mod + "\n\ngo 1.26\n"
			tc.files["llmtest/llmtest.go"] = llm
			tc.files["llmtest/own_test.go"] = helper("llmtest_test", "llmtest")
			for name, body := range tc.files {
				p := filepath.Join(root, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
			}
			r, err := llmtestReach(root, mod+"/llmtest")
			require.NoError(t, err)
			require.Len(t, r.violations, len(tc.want), "%q", r.violations)
			for i, w := range tc.want {
				assert.Contains(t, r.violations[i], w)
			}
		})
	}
}

// reach is what llmtestReach found.
type reach struct {
	scanned    int      // Go files read
	testers    int      // _test.go files importing llmtest itself
	violations []string // one line per offending file, sorted
}

// llmtestReach reads the imports of every Go file of the module at root
// and reports each non-test file that brings target (llmtest) into code
// other than tests. A package is tainted when it is target or one of its
// non-test files imports a tainted package. A tainted package is allowed
// only as a test-helper package: its directory name ends in "test" and it
// is not a command (package main); since each of its non-test importers
// is then tainted too, the rule holds transitively, and only _test.go
// files may end the chain. Each violation names the file and the chain of
// imports that reaches target.
func llmtestReach(root, target string) (reach, error) {
	var r reach
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return r, err
	}
	type file struct {
		rel     string // slash path from root
		pkg     string // package clause
		imports []string
	}
	byPkg := map[string][]file{} // import path -> its non-test files
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		r.scanned++
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		var imports []string
		for _, imp := range f.Imports {
			if ip, err := strconv.Unquote(imp.Path.Value); err == nil {
				imports = append(imports, ip)
			}
		}
		if strings.HasSuffix(name, "_test.go") {
			if slices.Contains(imports, target) {
				r.testers++
			}
			return nil
		}
		pkgPath := module
		if dir := path.Dir(rel); dir != "." {
			pkgPath += "/" + dir
		}
		byPkg[pkgPath] = append(byPkg[pkgPath], file{rel, f.Name.Name, imports})
		return nil
	})
	if err != nil {
		return r, err
	}

	// via[p] is the tainted package p imports on its way to target.
	via := map[string]string{target: ""}
	for changed := true; changed; {
		changed = false
		for p, files := range byPkg {
			if _, ok := via[p]; ok {
				continue
			}
			for _, f := range files {
				if i := slices.IndexFunc(f.imports, func(ip string) bool { _, ok := via[ip]; return ok }); i >= 0 {
					via[p] = f.imports[i]
					changed = true
					break
				}
			}
		}
	}
	chain := func(p string) string {
		var s []string
		for ; p != ""; p = via[p] {
			s = append(s, p)
		}
		return strings.Join(s, ", which imports ")
	}
	for p := range via {
		if p == target {
			continue
		}
		helper := strings.HasSuffix(path.Base(p), "test")
		for _, f := range byPkg[p] {
			i := slices.IndexFunc(f.imports, func(ip string) bool { _, ok := via[ip]; return ok })
			switch {
			case i < 0:
			case helper && f.pkg == "main":
				r.violations = append(r.violations, fmt.Sprintf("%s is a command that imports %s: llmtest may reach a test-helper package, never a binary; move the code into a _test.go file",
					f.rel, chain(f.imports[i])))
			case !helper:
				r.violations = append(r.violations, fmt.Sprintf("%s imports %s, which is for _test.go files and test-helper packages (a directory ending in \"test\" that only tests import) only: move the code into a test file or such a package",
					f.rel, chain(f.imports[i])))
			}
		}
	}
	slices.Sort(r.violations)
	return r, nil
}

// modulePath reads the module line of the go.mod file at p.
func modulePath(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", p)
}
