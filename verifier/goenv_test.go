package verifier

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxSeesUsersGoEnvFile: the settings of the user's go env file
// (`go env -w`) apply inside the sandbox, whose HOME is empty, and a
// GOPROXY password in it is scrubbed from the output; before, the sandbox
// saw GOFLAGS without them and GOPRIVATE empty.
func TestSandboxSeesUsersGoEnvFile(t *testing.T) {
	requireSandbox(t)
	const password = "Sup3rSecretPassw0rdInGoEnv"
	file := filepath.Join(t.TempDir(), "env")
	require.NoError(t, os.WriteFile(file, []byte("GOFLAGS=-tags=sgenvtag\nGOPRIVATE=example.com/private\n"+
		"GOPROXY=https://user:"+password+"@proxy.example.com/go,direct\n"), 0o644))
	t.Setenv("GOENV", file)
	t.Setenv("GOFLAGS", "")
	t.Setenv("GOPRIVATE", "")
	t.Setenv("GOPROXY", "")
	_, ws, sb := userRepo(t)
	res, err := Run(t.Context(), Command{Argv: []string{"go", "env", "GOFLAGS", "GOPRIVATE", "GOPROXY"}, Dir: ws, Sandbox: sb,
		Timeout: 2 * time.Minute})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Output)
	assert.Contains(t, res.Output, "-tags=sgenvtag -modcacherw\n")
	assert.Contains(t, res.Output, "example.com/private\n")
	assert.NotContains(t, res.Output, password, "the GOPROXY password is scrubbed")
}

// TestBuildGoCacheProg: the cache program builds from its embedded source
// with the go command, speaks the protocol's first line, and is reused,
// not built again, by the next call.
func TestBuildGoCacheProg(t *testing.T) {
	dir := t.TempDir()
	bin, err := BuildGoCacheProg(t.Context(), dir)
	require.NoError(t, err)
	st, err := os.Stat(bin)
	require.NoError(t, err)
	cmd := exec.Command(bin, t.TempDir(), t.TempDir())
	cmd.Stdin = nil
	out, err := cmd.Output() // stdin is /dev/null: it greets, then sees EOF
	require.NoError(t, err)
	assert.Equal(t, `{"ID":0,"KnownCommands":["get","put","close"]}`+"\n", string(out))
	again, err := BuildGoCacheProg(t.Context(), dir)
	require.NoError(t, err)
	assert.Equal(t, bin, again)
	st2, err := os.Stat(again)
	require.NoError(t, err)
	assert.Equal(t, st.ModTime(), st2.ModTime(), "the program is reused, not built again")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no build directory is left")
}

// TestSandboxDropsReadOnlyModuleCacheNoise: a go command that learns a
// module's version from a proxy cannot save it in the user's module cache,
// read-only in the sandbox, and says so ("go: writing stat cache: ...
// read-only file system"); the check's output no longer carries those
// lines, and the command's own output stays.
func TestSandboxDropsReadOnlyModuleCacheNoise(t *testing.T) {
	requireSandbox(t)
	mod := userModCache()
	if mod == "" {
		t.Fatal("this test needs the user's module cache (go mod download in the repository)")
	}
	_, ws, sb := userRepo(t)
	proxy := filepath.Join(ws, "proxy", "example.com", "sgnoise", "@v")
	require.NoError(t, os.MkdirAll(proxy, 0o755))
	for name, body := range map[string]string{"list": "v1.0.0\n", "v1.0.0.info": `{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`,
		"v1.0.0.mod": "module example.com/sgnoise\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(proxy, name), []byte(body), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644))
	res, err := Run(t.Context(), Command{Argv: []string{"go", "list", "-m", "example.com/sgnoise@v1.0.0"}, Dir: ws, Sandbox: sb,
		Timeout: 2 * time.Minute, Env: []string{"GOPROXY=file://" + filepath.Join(ws, "proxy"), "GOSUMDB=off"}})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Output)
	assert.Equal(t, "example.com/sgnoise v1.0.0\n", res.Output)
	assert.NoDirExists(t, filepath.Join(mod, "cache", "download", "example.com", "sgnoise"), "the user's module cache is unchanged")
}
