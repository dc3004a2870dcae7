package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
