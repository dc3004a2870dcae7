package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaults: the defaults are positive, memory is at most half of RAM
// and 8 GiB, and Resolved fills only zero fields.
func TestDefaults(t *testing.T) {
	d := Defaults()
	assert.Equal(t, Limits{Procs: 2048, MemoryBytes: d.MemoryBytes, TmpBytes: 1 << 30, FileBytes: 4 << 30, OpenFiles: 4096}, d)
	assert.Positive(t, d.MemoryBytes)
	assert.LessOrEqual(t, d.MemoryBytes, int64(8<<30))
	got := Limits{Procs: -1, TmpBytes: 5}.Resolved()
	assert.Equal(t, Limits{Procs: -1, MemoryBytes: d.MemoryBytes, TmpBytes: 5, FileBytes: d.FileBytes, OpenFiles: d.OpenFiles}, got)
}

// TestConfine starts a shell held on its standard input, confines it, and
// lets it report its own limits and cgroups: the rlimits are set, and
// where Support names a cgroup the shell is in a fresh one under it with
// the bound written; release removes those cgroups.
func TestConfine(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read go; cat /proc/self/limits /proc/self/cgroup")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	release, err := Confine(cmd.Process.Pid, Limits{Procs: 64, MemoryBytes: 256 << 20, FileBytes: 1 << 20, OpenFiles: 100})
	require.NoError(t, err)
	h := machine()
	parents := map[string]string{"pids": h.pidsV1, "memory": h.memV1}
	if h.v2 != "" {
		parents["v2"] = filepath.Join(h.v2, groupDir)
	}
	dirs := map[string]string{}
	for kind, parent := range parents {
		if parent == "" {
			continue
		}
		found, err := filepath.Glob(filepath.Join(parent, fmt.Sprintf("sg-%d-*", os.Getpid())))
		require.NoError(t, err)
		require.Len(t, found, 1, "one cgroup of this process under %s", parent)
		dirs[kind] = found[0]
		procs, err := os.ReadFile(filepath.Join(found[0], "cgroup.procs"))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(cmd.Process.Pid), strings.TrimSpace(string(procs)), "the process is in %s", found[0])
	}
	for kind, file := range map[string]string{"pids": "pids.max", "memory": "memory.limit_in_bytes"} {
		if dirs[kind] != "" {
			max, err := os.ReadFile(filepath.Join(dirs[kind], file))
			require.NoError(t, err)
			assert.Equal(t, map[string]string{"pids": "64", "memory": fmt.Sprint(256 << 20)}[kind], strings.TrimSpace(string(max)), file)
		}
	}

	_, err = stdin.Write([]byte("go\n"))
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), out.String())
	limits := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 3 && strings.HasPrefix(sc.Text(), "Max ") {
			limits[strings.Join(f[:len(f)-3], " ")] = f[len(f)-3] + " " + f[len(f)-2]
		}
	}
	assert.Equal(t, "1048576 1048576", limits["Max file size"])
	assert.Equal(t, "100 100", limits["Max open files"])
	if h.pidsV1 == "" && len(h.v2Ctrls) == 0 {
		assert.Equal(t, "64 64", limits["Max processes"], "RLIMIT_NPROC stands in for the missing pids cgroup")
	}

	require.NoError(t, release())
	for _, d := range dirs {
		assert.NoDirExists(t, d, "release removes the command's cgroup")
	}
}

// TestSupport: every resource is listed once, and an unenforced one says
// what to enable.
func TestSupport(t *testing.T) {
	var names []string
	for _, b := range Support() {
		names = append(names, b.Resource)
		if !b.Enforced() {
			assert.Contains(t, b.Note, "Delegate=yes", "%s: an unenforced bound says what to enable", b.Resource)
		}
	}
	assert.Equal(t, []string{"processes", "memory", "/tmp size", "file size", "open files"}, names)
	if os.Getuid() == 0 && machine().pidsV1 != "" {
		assert.Equal(t, "cgroup v1 pids.max under "+machine().pidsV1, Support()[0].Via)
	}
}
