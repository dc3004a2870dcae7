package dispatch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statgraph/statgraph/tasks"
)

// TestSandboxProgramsInStateRoot: a unit's sandbox starts the small
// sandbox-init and cache programs built in the state root's bin (the
// dispatcher hands the verifier that directory), not the programs the
// dispatcher was given, which stay the fallback; without them it names
// none.
func TestSandboxProgramsInStateRoot(t *testing.T) {
	root := t.TempDir()
	t.Setenv("STATGRAPH_HOME", root)
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	d := &Dispatcher{SandboxHelper: []string{self, "sandbox-init"}, GoCacheProg: []string{self, "gocacheprog"}}
	sb := d.sandbox(tasks.Task{ID: "1"}, t.TempDir(), Plan{Dir: t.TempDir()})
	bin := filepath.Join(root, "bin")
	for _, p := range []struct {
		name string
		got  []string
	}{{"sandbox-init", sb.Helper}, {"gocacheprog", sb.GoCacheProg}} {
		if len(p.got) != 1 || filepath.Dir(p.got[0]) != bin || !strings.HasPrefix(filepath.Base(p.got[0]), p.name+"-") {
			t.Errorf("the sandbox's %s = %q; want the small program in %s", p.name, p.got, bin)
		}
	}
	if sb := (&Dispatcher{}).sandbox(tasks.Task{ID: "1"}, t.TempDir(), Plan{Dir: t.TempDir()}); sb.Helper != nil || sb.GoCacheProg != nil {
		t.Errorf("with no programs given the sandbox names %q and %q; want none", sb.Helper, sb.GoCacheProg)
	}
}
