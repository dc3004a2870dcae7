package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeCgroups makes, under a temporary root, the cgroup directories
// named in files (path -> content) and returns the root.
func fakeCgroups(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}

// TestFindHierarchies reads cgroup layouts as /proc/self/cgroup and
// mountinfo show them, with directories standing in for the cgroup file
// systems: this machine's hybrid one (v1 pids and memory, v2 with neither),
// a desktop's pure v2 one with statgraph alone in a delegated scope or
// sharing it with its shell, and a container whose cgroup mount shows
// only its own subtree.
func TestFindHierarchies(t *testing.T) {
	self := fmt.Sprint(os.Getpid())
	t.Run("hybrid, v1 pids and memory", func(t *testing.T) {
		root := fakeCgroups(t, map[string]string{
			"unified/cgroup.controllers":         "hugetlb\n",
			"unified/cgroup.subtree_control":     "",
			"pids/cgroup.procs":                  "",
			"memory/process_api/a9/cgroup.procs": self + "\n",
		})
		cg := "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/a9\n0::/\n"
		mi := fmt.Sprintf("34 30 0:31 / %[1]s/memory rw,relatime - cgroup cgroup rw,memory\n"+
			"38 30 0:35 / %[1]s/pids rw,relatime - cgroup cgroup rw,pids\n"+
			"40 30 0:37 / %[1]s/unified rw,relatime - cgroup2 cgroup2 rw\n", root)
		assert.Equal(t, hierarchies{pidsV1: root + "/pids/statgraph", memV1: root + "/memory/process_api/a9/statgraph"}, findHierarchies(cg, mi))
	})
	v2 := func(procs string) hierarchies {
		root := fakeCgroups(t, map[string]string{
			"user.slice/user@1000.service/app.slice/term.scope/cgroup.controllers":     "cpu memory pids\n",
			"user.slice/user@1000.service/app.slice/term.scope/cgroup.subtree_control": "",
			"user.slice/user@1000.service/app.slice/term.scope/cgroup.procs":           procs,
		})
		cg := "0::/user.slice/user@1000.service/app.slice/term.scope\n"
		mi := fmt.Sprintf("30 22 0:27 / %s rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", root)
		h := findHierarchies(cg, mi)
		h.v2 = strings.TrimPrefix(h.v2, root)
		return h
	}
	t.Run("v2, alone in a delegated scope", func(t *testing.T) {
		assert.Equal(t, hierarchies{v2: "/user.slice/user@1000.service/app.slice/term.scope", v2Ctrls: []string{"pids", "memory"}}, v2(self+"\n"))
	})
	t.Run("v2, sharing the scope with a shell", func(t *testing.T) {
		assert.Equal(t, hierarchies{}, v2("1\n"+self+"\n"))
	})
	t.Run("container, mount shows its own subtree", func(t *testing.T) {
		root := fakeCgroups(t, map[string]string{"pids/job/cgroup.procs": self})
		cg := "5:pids:/docker/abc/job\n"
		mi := fmt.Sprintf("38 30 0:35 /docker/abc %s/pids rw - cgroup cgroup rw,pids\n", root)
		assert.Equal(t, hierarchies{pidsV1: root + "/pids/job/statgraph"}, findHierarchies(cg, mi))
	})
}

// cgroupOf returns the cgroup v2 path of process pid ("0::" line).
func cgroupOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			return p
		}
	}
	return ""
}

// TestConfineCgroupV2Real runs Confine's cgroup v2 path on this machine's
// real cgroup2 hierarchy, in a subtree of the test's own standing in for a
// delegated one: the command is moved into a fresh cgroup under
// statgraph/, whatever of pids and memory the hierarchy offers is written,
// and release kills the command through cgroup.kill and removes the
// cgroup. (Where pids and memory are bound to cgroup v1, as on the
// machines this was written on, only grouping, killing and removal are
// real here; TestConfineCgroupV2Layout shows what is written.)
func TestConfineCgroupV2Real(t *testing.T) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	m, ok := cgroupMounts(string(mi))["cgroup2"]
	if !ok || !writable(m.point) {
		t.Skip("no cgroup2 hierarchy this process may change")
	}
	base := filepath.Join(m.point, fmt.Sprintf("statgraph-test-%d", os.Getpid()))
	require.NoError(t, os.Mkdir(base, 0o755))
	t.Cleanup(func() { _ = removeCgroup(filepath.Join(base, groupDir)); _ = removeCgroup(base) })
	h := hierarchies{v2: base}
	ctrls, err := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
	require.NoError(t, err)
	for _, c := range []string{"pids", "memory"} {
		if slices.Contains(strings.Fields(string(ctrls)), c) {
			h.v2Ctrls = append(h.v2Ctrls, c)
		}
	}
	t.Logf("cgroup2 at %s offers %v of pids and memory", m.point, h.v2Ctrls)

	cmd := exec.Command("sleep", "600")
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	release, err := confineIn(h, func() (string, error) { return makeV2Parent(h) }, cmd.Process.Pid, Limits{Procs: 64, MemoryBytes: 256 << 20})
	require.NoError(t, err)
	dirs, err := filepath.Glob(filepath.Join(base, groupDir, fmt.Sprintf("sg-%d-*", os.Getpid())))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	rel, err := filepath.Rel(m.point, dirs[0])
	require.NoError(t, err)
	assert.Equal(t, "/"+rel, cgroupOf(t, cmd.Process.Pid), "the command is in its cgroup")
	assert.FileExists(t, filepath.Join(dirs[0], "cgroup.kill"), "this kernel has cgroup.kill")
	if slices.Contains(h.v2Ctrls, "pids") {
		b, err := os.ReadFile(filepath.Join(dirs[0], "pids.max"))
		require.NoError(t, err)
		assert.Equal(t, "64", strings.TrimSpace(string(b)))
	}
	if slices.Contains(h.v2Ctrls, "memory") {
		b, err := os.ReadFile(filepath.Join(dirs[0], "memory.max"))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(256<<20), strings.TrimSpace(string(b)))
	}

	require.NoError(t, release())
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "release killed the command")
	assert.Equal(t, "signal: killed", ee.Error())
	assert.NoDirExists(t, dirs[0], "release removed the cgroup")
}

// TestConfineCgroupV2Layout runs Confine's cgroup v2 path against a
// directory laid out as a delegated cgroupfs subtree (a desktop's
// systemd scope), where pids and memory are offered: the controllers are
// enabled for the children of the subtree and of statgraph/, and the
// command's cgroup gets pids.max, memory.max, memory.swap.max = 0 and the
// command's pid. A plain directory cannot refuse or enforce anything, so
// this shows what is written where, not that the kernel enforces it.
func TestConfineCgroupV2Layout(t *testing.T) {
	scope := fakeCgroups(t, map[string]string{"cgroup.subtree_control": "", "cgroup.controllers": "cpu memory pids\n"})
	h := hierarchies{v2: scope, v2Ctrls: []string{"pids", "memory"}}
	cmd := exec.Command("sleep", "600")
	require.NoError(t, cmd.Start())
	defer cmd.Wait()
	defer cmd.Process.Kill()
	_, err := confineIn(h, func() (string, error) { return makeV2Parent(h) }, cmd.Process.Pid, Limits{Procs: 64, MemoryBytes: 256 << 20})
	require.NoError(t, err)
	read := func(p string) string {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return string(b)
	}
	assert.Equal(t, "+pids +memory", read(filepath.Join(scope, "cgroup.subtree_control")))
	assert.Equal(t, "+pids +memory", read(filepath.Join(scope, groupDir, "cgroup.subtree_control")))
	dirs, err := filepath.Glob(filepath.Join(scope, groupDir, fmt.Sprintf("sg-%d-*", os.Getpid())))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	for file, want := range map[string]string{"pids.max": "64", "memory.max": fmt.Sprint(256 << 20),
		"memory.swap.max": "0", "cgroup.procs": fmt.Sprint(cmd.Process.Pid)} {
		assert.Equal(t, want, read(filepath.Join(dirs[0], file)), file)
	}
}

// confineSleep confines a sleep that dies with this process, as bwrap
// dies with statgraph, and with hold prints "confined" and waits to be
// killed; otherwise it releases the cgroups and returns.
func confineSleep(hold bool) int {
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return 1
	}
	release, err := Confine(cmd.Process.Pid, Limits{Procs: 64})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if hold {
		fmt.Println("confined")
		select {}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := release(); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// TestSweepAfterKill: a statgraph killed with SIGKILL while a command is
// confined leaves its cgroups behind; the next statgraph to confine a
// command removes them.
func TestSweepAfterKill(t *testing.T) {
	h := machine()
	parents := []string{h.pidsV1, h.memV1}
	if h.v2 != "" {
		parents = append(parents, filepath.Join(h.v2, groupDir))
	}
	if slices.Equal(parents, []string{"", ""}) {
		t.Skip("no cgroup can be made here")
	}
	holder := exec.Command(os.Args[0], "confine-sleep", "hold")
	out, err := holder.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	require.Equal(t, "confined\n", line)
	var left []string
	for _, p := range parents {
		if p != "" {
			found, err := filepath.Glob(filepath.Join(p, fmt.Sprintf("sg-%d-*", holder.Process.Pid)))
			require.NoError(t, err)
			left = append(left, found...)
		}
	}
	require.NotEmpty(t, left)
	require.NoError(t, holder.Process.Signal(syscall.SIGKILL))
	_ = holder.Wait()
	for _, d := range left {
		assert.DirExists(t, d, "a killed statgraph's cgroup lingers")
		// Its command dies with it (here through the parent-death signal).
		require.Eventually(t, func() bool {
			procs, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			return err == nil && strings.TrimSpace(string(procs)) == ""
		}, time.Minute, 10*time.Millisecond, "the command died with its statgraph")
	}

	later, err := exec.Command(os.Args[0], "confine-sleep", "release").CombinedOutput()
	require.NoError(t, err, "%s", later)
	for _, d := range left {
		assert.NoDirExists(t, d, "the next statgraph swept it")
	}
}
