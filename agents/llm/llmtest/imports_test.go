package llmtest_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const importPath = "github.com/statgraph/statgraph/agents/llm/llmtest"

// TestOnlyTestsImportLLMTest walks the module and fails for every non-test
// Go file that imports this package, as the package doc forbids.
func TestOnlyTestsImportLLMTest(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module root is three levels up")

	fset := token.NewFileSet()
	var scanned, testers int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		scanned++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
				if strings.HasSuffix(name, "_test.go") {
					testers++
					continue
				}
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s imports %s, which is for _test.go files only: move the code into a test file", rel, importPath)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, scanned, 20, "the walk read the module's Go files")
	assert.Positive(t, testers, "this package's own tests import it, so the walk can see importers")
}
