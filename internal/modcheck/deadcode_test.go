package modcheck

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoDeadCode runs deadcode (golang.org/x/tools/cmd/deadcode, pinned by
// the tool directive in go.mod, so no network is needed once the module
// cache has it) with tests and examples as roots, and fails on every
// function it reports outside a _test.go file: such a function is called
// by nothing, not even a test. An Example without an Output comment is
// compiled but never run, so deadcode reports it too; those are allowed.
func TestNoDeadCode(t *testing.T) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	cmd := exec.Command("go", "tool", "deadcode", "-test", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool deadcode -test ./... in %s: %v\n%s", cmd.Dir, err, stderr.Bytes())
	}
	var dead []string
	for line := range strings.Lines(string(out)) {
		file, _, _ := strings.Cut(line, ":")
		if line = strings.TrimSpace(line); line != "" && !strings.HasSuffix(file, "_test.go") {
			dead = append(dead, line)
		}
	}
	if len(dead) > 0 {
		t.Errorf("deadcode found %d unreachable functions; delete each, or, when only tests use it, move it into a _test.go file:\n%s",
			len(dead), strings.Join(dead, "\n"))
	}
}
