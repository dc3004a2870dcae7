package verifier

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNamespaceEndWithoutParentDeathSignal: when bwrap dies while the
// namespace's first process has no parent-death signal yet (bwrap sets it
// only after forking the command, so a check cancelled just after it
// started on a loaded machine hits this window), the check's processes
// keep running; pidNamespace.end, which Run calls, kills them all and
// returns only when they are gone. The window is made permanent here by
// leaving --die-with-parent out.
func TestNamespaceEndWithoutParentDeathSignal(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	_, ws, sb := userRepo(t)
	marker := fmt.Sprintf("sgns%d", time.Now().UnixNano())
	ready := filepath.Join(ws, "ready")
	argv, env, err := sb.wrap([]string{"sh", "-c", escapeScript, "sh", marker, ready}, ws)
	require.NoError(t, err)
	i := slices.Index(argv, "--die-with-parent")
	require.GreaterOrEqual(t, i, 0, "wrap passes --die-with-parent: %q", argv)
	argv = withInfoFD(slices.Delete(argv, i, i+1))

	infoR, infoW, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.ExtraFiles = ws, append(os.Environ(), env...), []*os.File{infoW}
	require.NoError(t, cmd.Start())
	infoW.Close()
	ns := followNamespace(infoR)
	defer survivors(t, marker) // kills whatever a failure leaves
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		require.False(t, time.Now().After(deadline), "the sandboxed script never became ready")
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	time.Sleep(200 * time.Millisecond)
	require.NotEmpty(t, marked(marker), "without a parent-death signal the namespace outlives bwrap (the window end closes)")

	assert.True(t, ns.end(nsDrain), "end reports the namespace gone")
	assert.Empty(t, marked(marker), "processes of the namespace outlived end")
}
