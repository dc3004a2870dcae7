package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// groupDir is the directory, under the caller's own cgroup, that holds one
// cgroup per sandboxed command.
const groupDir = "statgraph"

// hierarchies are the cgroup places a command's cgroups can go on this
// machine, as found by findHierarchies; "" where there is none.
type hierarchies struct {
	// v2 is the caller's own cgroup in a cgroup v2 hierarchy whose
	// subtree it may change (delegated to it, or a container's root), and
	// v2Ctrls the controllers of pids and memory that it has.
	v2      string
	v2Ctrls []string
	// pidsV1 and memV1 are the parent directories of per-command cgroups
	// in the cgroup v1 pids and memory hierarchies.
	pidsV1, memV1 string
}

// findHierarchies reads /proc/self/cgroup and /proc/self/mountinfo and
// checks, without changing anything, which cgroup places this process may
// create cgroups in. It prefers cgroup v2 (each controller the v2
// hierarchy offers is taken from there) when its own v2 cgroup is writable
// and either the hierarchy's root or holds no other process (as when
// statgraph runs in a delegated scope of its own; a desktop terminal's
// scope, shared with the shell, is not), and takes cgroup v1 pids and
// memory otherwise: in the caller's own cgroup, or at the hierarchy's root
// when the own one is not writable.
func findHierarchies(selfCgroup, mountinfo string) hierarchies {
	var h hierarchies
	own := ownCgroups(selfCgroup)
	mounts := cgroupMounts(mountinfo)
	if m, ok := mounts["cgroup2"]; ok {
		dir := m.path(own[""])
		ctrls, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		for _, c := range []string{"pids", "memory"} {
			if slices.Contains(strings.Fields(string(ctrls)), c) {
				h.v2Ctrls = append(h.v2Ctrls, c)
			}
		}
		if len(h.v2Ctrls) > 0 && writable(dir) && writable(filepath.Join(dir, "cgroup.subtree_control")) && (dir == m.point || aloneIn(dir)) {
			h.v2 = dir
		} else {
			h.v2Ctrls = nil
		}
	}
	v1 := func(ctrl string) string {
		m, ok := mounts[ctrl]
		if !ok || slices.Contains(h.v2Ctrls, ctrl) {
			return ""
		}
		for _, base := range []string{m.path(own[ctrl]), m.point} {
			parent := filepath.Join(base, groupDir)
			if _, err := os.Stat(parent); err != nil {
				parent = base
			}
			if writable(parent) {
				return filepath.Join(base, groupDir)
			}
		}
		return ""
	}
	h.pidsV1, h.memV1 = v1("pids"), v1("memory")
	return h
}

// aloneIn reports whether this process is the only one in cgroup dir, so
// that it may move itself out (see v2Parent).
func aloneIn(dir string) bool {
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	return err == nil && strings.TrimSpace(string(procs)) == strconv.Itoa(os.Getpid())
}

// writable reports whether this process may write path.
func writable(path string) bool { return unix.Access(path, unix.W_OK) == nil }

// ownCgroups maps each v1 controller of selfCgroup (the text of
// /proc/self/cgroup), and "" for the v2 hierarchy, to this process's
// cgroup path in it.
func ownCgroups(selfCgroup string) map[string]string {
	own := map[string]string{}
	for line := range strings.Lines(selfCgroup) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[1] == "" {
			own[""] = f[2]
		}
		for _, c := range strings.Split(f[1], ",") {
			own[c] = f[2]
		}
	}
	return own
}

// cgroupMount is one mounted cgroup hierarchy: its mount point and the
// cgroup path shown at that point (not "/" inside some containers).
type cgroupMount struct{ point, root string }

// path returns the directory of cgroup path cg under m.
func (m cgroupMount) path(cg string) string {
	rel, ok := strings.CutPrefix(cg, m.root)
	if !ok {
		return m.point
	}
	return filepath.Join(m.point, rel)
}

// cgroupMounts maps "cgroup2" and each v1 controller to where its
// hierarchy is mounted, from mountinfo (the text of /proc/self/mountinfo).
func cgroupMounts(mountinfo string) map[string]cgroupMount {
	mounts := map[string]cgroupMount{}
	for line := range strings.Lines(mountinfo) {
		pre, post, ok := strings.Cut(strings.TrimSpace(line), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 3 {
			continue
		}
		m := cgroupMount{point: a[4], root: a[3]}
		switch b[0] {
		case "cgroup2":
			if _, seen := mounts["cgroup2"]; !seen {
				mounts["cgroup2"] = m
			}
		case "cgroup":
			for _, opt := range strings.Split(b[2], ",") {
				if _, seen := mounts[opt]; !seen && (opt == "pids" || opt == "memory") {
					mounts[opt] = m
				}
			}
		}
	}
	return mounts
}

// v2Parent is makeV2Parent of this machine's hierarchies, made once per
// process.
var v2Parent = sync.OnceValues(func() (string, error) { return makeV2Parent(machine()) })

// makeV2Parent makes the directory of per-command cgroups in the
// delegated v2 subtree h.v2 with h.v2Ctrls enabled for its children. The
// no-internal-processes rule lets a non-root cgroup hand controllers to
// children only while it has no processes of its own, so when enabling
// them fails with EBUSY this process moves itself into a leaf beside the
// per-command cgroups (statgraph-main, as systemd asks of a delegated
// service); if others share its cgroup, it moves back and reports why.
func makeV2Parent(h hierarchies) (string, error) {
	parent := filepath.Join(h.v2, groupDir)
	if len(h.v2Ctrls) == 0 {
		// Nothing to hand down: the cgroups only group, kill and remove.
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("creating cgroup %s: %w", parent, err)
		}
		return parent, nil
	}
	enable := "+" + strings.Join(h.v2Ctrls, " +")
	ctl := filepath.Join(h.v2, "cgroup.subtree_control")
	if err := os.WriteFile(ctl, []byte(enable), 0); errors.Is(err, unix.EBUSY) {
		leaf := filepath.Join(h.v2, groupDir+"-main")
		if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("creating cgroup %s: %w", leaf, err)
		}
		if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte("0"), 0); err != nil {
			return "", fmt.Errorf("moving statgraph into cgroup %s: %w", leaf, err)
		}
		if err := os.WriteFile(ctl, []byte(enable), 0); err != nil {
			_ = os.WriteFile(filepath.Join(h.v2, "cgroup.procs"), []byte("0"), 0)
			return "", fmt.Errorf("enabling %s in %s (other processes share statgraph's cgroup %s; "+
				"start statgraph in a delegated cgroup of its own, e.g. systemd-run --user --scope -p Delegate=yes): %w", enable, ctl, h.v2, err)
		}
	} else if err != nil {
		return "", fmt.Errorf("enabling %s in %s: %w", enable, ctl, err)
	}
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("creating cgroup %s: %w", parent, err)
	}
	if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte(enable), 0); err != nil {
		return "", fmt.Errorf("enabling %s in cgroup %s: %w", enable, parent, err)
	}
	return parent, nil
}

// seq numbers the cgroups this process makes.
var seq atomic.Int64

// swept records the parent directories swept of stale cgroups.
var swept sync.Map

// newCgroup creates a fresh cgroup under parent, named after this process
// so that cgroups left by a statgraph that died can be told apart and
// removed (which the first call per parent does).
func newCgroup(parent string) (string, error) {
	if _, done := swept.LoadOrStore(parent, true); !done {
		sweep(parent)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("creating cgroup %s: %w", parent, err)
	}
	dir := filepath.Join(parent, fmt.Sprintf("sg-%d-%d", os.Getpid(), seq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating cgroup %s: %w", dir, err)
	}
	return dir, nil
}

// sweep removes the empty cgroups under parent left by statgraph
// processes that are gone (killed, or crashed: their commands died with
// them). It leaves a cgroup that still holds processes alone: its owner
// may live in another PID namespace, where its pid means nothing here.
func sweep(parent string) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		f := strings.Split(e.Name(), "-")
		if len(f) != 3 || f[0] != "sg" {
			continue
		}
		if pid, err := strconv.Atoi(f[1]); err == nil && pid != os.Getpid() && !fsutil.ProcessAlive(pid) {
			_ = unix.Rmdir(filepath.Join(parent, e.Name()))
		}
	}
}

// removeCgroup kills whatever is left in cgroup dir and removes it,
// retrying while the killed processes exit (at most ~5 s).
func removeCgroup(dir string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
			procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, p := range strings.Fields(string(procs)) {
				if pid, err := strconv.Atoi(p); err == nil {
					_ = unix.Kill(pid, unix.SIGKILL)
				}
			}
		}
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("removing cgroup %s: %w", dir, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
