//go:build linux

package verifier

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gocacheprog"
)

// buildChildEnv names, in the environment of this test binary run as a
// child, the directory TestGoCacheProgBuildChild builds the program in.
const buildChildEnv = "STATGRAPH_TEST_GOCACHEPROG_DIR"

// TestGoCacheProgBuildChild is the body of the child process of
// TestGoCacheProgBuildSurvivesKill9; run normally it does nothing.
func TestGoCacheProgBuildChild(t *testing.T) {
	dir := os.Getenv(buildChildEnv)
	if dir == "" {
		return
	}
	fmt.Println("building")
	if _, err := BuildGoCacheProg(t.Context(), dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(0)
}

// TestGoCacheProgBuildSurvivesKill9 kills (SIGKILL) a process building the
// cache program, with its go command and linker, while the linker runs:
// no program is left at the program's name (a truncated one there would
// be taken as built and run by every sandboxed go command), the next
// build makes a program that speaks the protocol, and the build directory
// the killed build left is gone after it. Before, each killed build left
// its .build-* directory (source, go's config and a partial binary) in
// statgraph's bin directory for good.
func TestGoCacheProgBuildSurvivesKill9(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	dir := t.TempDir()
	_, name := gocacheprog.Source()
	var stderr strings.Builder
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoCacheProgBuildChild$", "-test.count=1")
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), buildChildEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the building child did not start: %s", stderr.String())
	require.Equal(t, "building\n", line)

	// Wait for the linker (go tool link), the step that writes the
	// program; then kill the child and everything it started.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		tree := processTree(cmd.Process.Pid)
		if strings.Contains(commsOf(tree), " link ") {
			for _, pid := range tree {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			break
		}
		if syscall.Kill(cmd.Process.Pid, 0) != nil || time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the build ended before its linker was seen: %s", stderr.String())
		}
		time.Sleep(time.Millisecond)
	}
	require.Error(t, cmd.Wait(), "the child was killed")
	left, _ := filepath.Glob(filepath.Join(dir, ".build-*"))
	require.NotEmpty(t, left, "the killed build left its build directory (what the next build sweeps)")
	if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
		t.Fatalf("a killed build left a program of %d bytes at %s", st.Size(), name)
	}

	bin, err := BuildGoCacheProg(t.Context(), dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, name), bin)
	out, err := exec.Command(bin, t.TempDir(), t.TempDir()).Output() // stdin is /dev/null: it greets, then sees EOF
	require.NoError(t, err)
	assert.Equal(t, `{"ID":0,"KnownCommands":["get","put","close"]}`+"\n", string(out))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{name}, names, "only the program is left: the killed build's directory is swept")
}

// processTree returns pid and its descendants, parents first.
func processTree(pid int) []int {
	parent := map[int]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		n, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// the fields after the command name, which is in parentheses
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 {
			parent[n], _ = strconv.Atoi(f[1])
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		for child, p := range parent {
			if p == tree[i] {
				tree = append(tree, child)
			}
		}
	}
	return tree
}

// commsOf returns the command names of pids, space-separated and with a
// space at both ends.
func commsOf(pids []int) string {
	var b strings.Builder
	b.WriteString(" ")
	for _, pid := range pids {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		b.WriteString(strings.TrimSpace(string(comm)) + " ")
	}
	return b.String()
}
