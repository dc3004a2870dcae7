package proc

import (
	"os"
	"path/filepath"
	"slices"
)

// Bound says how one resource of Limits is enforced on this machine.
type Bound struct {
	// Resource names the bounded resource: "processes", "memory",
	// "/tmp size", "file size" or "open files".
	Resource string
	// Via names the mechanism enforcing it ("cgroup v1 pids.max at
	// /sys/fs/cgroup/pids/statgraph", "RLIMIT_FSIZE", ...); "" when
	// nothing does.
	Via string
	// Note, when set, says what limits the mechanism or, when nothing
	// enforces the bound, what to enable for it.
	Note string
}

// Enforced reports whether something enforces the bound.
func (b Bound) Enforced() bool { return b.Via != "" }

// cgroupHint says how to get a cgroup statgraph may use.
const cgroupHint = "run statgraph as root with cgroup v1 pids and memory controllers mounted, " +
	"or in a cgroup v2 subtree delegated to it (systemd-run --user --scope -p Delegate=yes statgraph ...)"

// Support reports, for each resource of Limits, what Confine and the
// sandbox enforce it with on this machine, for `statgraph sandbox check`.
// It only reads /proc/self and checks the cgroup directories' permissions:
// it changes nothing, takes well under a millisecond after its first call
// and is safe for concurrent use.
func Support() []Bound {
	h := machine()
	var procs, mem Bound
	procs.Resource, mem.Resource = "processes", "memory"
	switch {
	case slices.Contains(h.v2Ctrls, "pids"):
		procs.Via = "cgroup v2 pids.max under " + filepath.Join(h.v2, groupDir)
	case h.pidsV1 != "":
		procs.Via = "cgroup v1 pids.max under " + h.pidsV1
	case os.Getuid() == 0:
		procs.Note = "no pids cgroup can be made here and RLIMIT_NPROC does not bind uid 0; " + cgroupHint
	default:
		procs.Via = "RLIMIT_NPROC"
		procs.Note = "counts every process of this user, not only the command's; " + cgroupHint + " for an exact bound"
	}
	switch {
	case slices.Contains(h.v2Ctrls, "memory"):
		mem.Via = "cgroup v2 memory.max under " + filepath.Join(h.v2, groupDir)
	case h.memV1 != "":
		mem.Via = "cgroup v1 memory.limit_in_bytes under " + h.memV1
	default:
		mem.Note = "no memory cgroup can be made here (RLIMIT_AS would break the race detector); " + cgroupHint
	}
	return []Bound{
		procs,
		mem,
		{Resource: "/tmp size", Via: "tmpfs size", Note: "its pages count as memory too where a memory cgroup holds"},
		{Resource: "file size", Via: "RLIMIT_FSIZE"},
		{Resource: "open files", Via: "RLIMIT_NOFILE"},
	}
}
