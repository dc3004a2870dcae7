package proc

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInitSource: the sandbox-init program's modules are the versions
// statgraph's go.mod requires, with go.sum's hashes (a dependency bumped
// in go.mod and not here fails), and its files are package main importing
// nothing of statgraph's (which its own module cannot reach).
func TestInitSource(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	gosum, err := os.ReadFile("../../go.sum")
	require.NoError(t, err)
	for _, m := range initModules {
		re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(m.Path+" "+m.Version) + `( // indirect)?$`)
		assert.True(t, re.Match(gomod), "go.mod requires %s %s", m.Path, m.Version)
		for _, line := range []string{m.Path + " " + m.Version + " " + m.Sum, m.Path + " " + m.Version + "/go.mod " + m.ModSum} {
			assert.True(t, strings.Contains(string(gosum), line+"\n"), "go.sum holds %s", line)
		}
	}
	files, name := InitSource()
	assert.Regexp(t, `^sandbox-init-[0-9a-f]{16}$`, name)
	for _, n := range []string{"go.mod", "go.sum", "main.go", "init.go", "landlock.go", "bridge.go", "splice.go"} {
		require.Contains(t, files, n)
	}
	for n, src := range files {
		if !strings.HasSuffix(n, ".go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), n, src, parser.ImportsOnly)
		require.NoError(t, err, n)
		assert.Equal(t, "main", f.Name.Name, n)
		for _, imp := range f.Imports {
			assert.NotContains(t, imp.Path.Value, "github.com/statgraph/", "%s imports %s", n, imp.Path.Value)
		}
	}
	files2, name2 := InitSource()
	assert.Equal(t, name, name2)
	assert.Equal(t, files, files2)
}
