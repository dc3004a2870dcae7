package tests

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// blockingClaude stands in for claude (whose preset copies ~/.claude.json
// into the agent's private home): it marks its home and, while the file
// BLOCK (replaced by a path in the directory holding it, which is on PATH
// and so shown read-only in the sandbox) exists, waits to be killed;
// otherwise it writes done.txt.
const blockingClaude = `#!/bin/sh
cat > /dev/null
touch "$HOME/.started"
while [ -e BLOCK ]; do sleep 0.1; done
echo done > done.txt
`

// TestKilledRunLeavesNoCredentialCopies: statgraph killed with SIGKILL
// while an agent CLI runs leaves that attempt's private home (the copies
// of the agent's credentials) behind; the next statgraph clean, or the
// next resume, removes it.
func TestKilledRunLeavesNoCredentialCopies(t *testing.T) {
	for _, next := range []string{"clean", "resume"} {
		t.Run(next, func(t *testing.T) {
			t.Parallel()
			userHome := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(userHome, ".claude.json"), []byte(`{"primaryApiKey": "sk-ant-killed-run-canary"}`), 0o600))
			dir := newRepo(t, map[string]string{
				"tasks.json": `{"tasks": [{"id": 1, "title": "wait", "max_retries": 1, "executor": {"preset": "claude"}, "test_cmd": ["test", "-e", "done.txt"]}]}` + "\n",
			})
			block := filepath.Join(dir, ".bin", "block")
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".bin"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".bin", "claude"), []byte(strings.ReplaceAll(blockingClaude, "BLOCK", block)), 0o755))
			require.NoError(t, os.WriteFile(block, nil, 0o644))
			plan := planOf(t, dir, "tasks.json", "")
			env := []string{"HOME=" + userHome, "XDG_CONFIG_HOME=",
				"PATH=" + filepath.Join(dir, ".bin") + string(os.PathListSeparator) + os.Getenv("PATH")}

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd, stdout, stderr := command(ctx, dir, "run", "--plain", "tasks.json")
			cmd.Env = append(cmd.Env, env...)
			require.NoError(t, cmd.Start())
			require.Eventually(t, func() bool { return len(filesNamed(t, plan.Dir, ".started")) == 1 },
				time.Minute, 20*time.Millisecond, "the agent started in its private home\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGKILL))
			require.Error(t, cmd.Wait())
			require.Len(t, filesNamed(t, plan.Dir, ".claude.json"), 1, "the kill left the copy behind")

			require.NoError(t, os.Remove(block))
			r := statgraphEnv(t, dir, env, next, "tasks.json")
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Empty(t, filesNamed(t, plan.Dir, ".claude.json"), "%s removes the copy the killed run left", next)
			if next == "resume" {
				assert.Equal(t, "done", strings.TrimSpace(gittest.Git(t, dir, "show", plan.Branch("1")+":done.txt")))
			}
		})
	}
}

// filesNamed returns the paths of the files called name under dir.
func filesNamed(t *testing.T, dir, name string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			out = append(out, p)
		}
		return nil
	})
	return out
}
