package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// machine is what findHierarchies finds for this process, looked up once.
var machine = sync.OnceValue(func() hierarchies {
	self, _ := os.ReadFile("/proc/self/cgroup")
	mountinfo, _ := os.ReadFile("/proc/self/mountinfo")
	return findHierarchies(string(self), string(mountinfo))
})

// Confine puts process pid, already started and not yet running anything
// of the command (bwrap's first process, held on its --block-fd), and all
// it will start under l (zero fields mean their defaults, see
// Limits.Resolved):
//
//   - a fresh cgroup for the command: in cgroup v2 when statgraph's own
//     cgroup's subtree is delegated to it, else in cgroup v1's pids and
//     memory hierarchies, with pids.max = Procs and a memory limit of
//     MemoryBytes (swap included);
//   - rlimits on pid, which its children inherit: RLIMIT_FSIZE =
//     FileBytes, RLIMIT_NOFILE = OpenFiles, and RLIMIT_NPROC = Procs when
//     no pids cgroup can be made (it counts every process of the user and
//     does not bind uid 0).
//
// Without a memory cgroup memory is not bounded: RLIMIT_AS would break
// the race detector, which reserves terabytes of address space. Support
// reports which bound holds through what. TmpBytes is not Confine's: it is
// the size of the tmpfs the sandbox mounts.
//
// release kills whatever is left in the command's cgroups and removes
// them; call it once the command's processes are gone. On error nothing
// is left behind and the error says which bound could not be set. Confine
// is safe for concurrent use.
func Confine(pid int, l Limits) (release func() error, err error) {
	return confineIn(machine(), v2Parent, pid, l)
}

// confineIn is Confine in the cgroup places h, with v2parent making the
// parent of per-command cgroups in h.v2.
func confineIn(h hierarchies, v2parent func() (string, error), pid int, l Limits) (release func() error, err error) {
	l = l.Resolved()
	var dirs []string
	remove := func() error {
		var errs []error
		for _, d := range dirs {
			errs = append(errs, removeCgroup(d))
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			_ = remove()
			err = fmt.Errorf("confining process %d: %w", pid, err)
		}
	}()
	// join sets the files of cgroup dir, in order, and moves pid into it.
	join := func(dir string, files ...setting) error {
		dirs = append(dirs, dir)
		for _, f := range files {
			if f.value < 0 {
				continue
			}
			err := os.WriteFile(filepath.Join(dir, f.name), []byte(strconv.FormatInt(f.value, 10)), 0)
			if err != nil && !(errors.Is(err, os.ErrNotExist) && optional[f.name]) {
				return fmt.Errorf("setting %s: %w", filepath.Join(dir, f.name), err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("moving the process into cgroup %s: %w", dir, err)
		}
		return nil
	}
	pidsCgroup := false
	if h.v2 != "" {
		parent, err := v2parent()
		if err != nil {
			return nil, err
		}
		dir, err := newCgroup(parent)
		if err != nil {
			return nil, err
		}
		var files []setting
		if slices.Contains(h.v2Ctrls, "pids") {
			files, pidsCgroup = append(files, setting{"pids.max", int64(l.Procs)}), true
		}
		if slices.Contains(h.v2Ctrls, "memory") {
			files = append(files, setting{"memory.max", l.MemoryBytes}, setting{"memory.swap.max", 0})
		}
		if err := join(dir, files...); err != nil {
			return nil, err
		}
	}
	if h.pidsV1 != "" {
		dir, err := newCgroup(h.pidsV1)
		if err != nil {
			return nil, err
		}
		if err := join(dir, setting{"pids.max", int64(l.Procs)}); err != nil {
			return nil, err
		}
		pidsCgroup = true
	}
	if h.memV1 != "" {
		dir, err := newCgroup(h.memV1)
		if err != nil {
			return nil, err
		}
		// limit_in_bytes first: memsw (memory+swap) may not go below it.
		if err := join(dir, setting{"memory.limit_in_bytes", l.MemoryBytes}, setting{"memory.memsw.limit_in_bytes", l.MemoryBytes}); err != nil {
			return nil, err
		}
	}
	limits := []rlimit{{unix.RLIMIT_FSIZE, "RLIMIT_FSIZE", l.FileBytes}, {unix.RLIMIT_NOFILE, "RLIMIT_NOFILE", int64(l.OpenFiles)}}
	if !pidsCgroup {
		limits = append(limits, rlimit{unix.RLIMIT_NPROC, "RLIMIT_NPROC", int64(l.Procs)})
	}
	for _, r := range limits {
		if r.value < 0 {
			continue
		}
		v := uint64(r.value)
		if err := unix.Prlimit(pid, r.resource, &unix.Rlimit{Cur: v, Max: v}, nil); err != nil {
			return nil, fmt.Errorf("setting %s to %d: %w", r.name, v, err)
		}
	}
	return remove, nil
}

// setting is one value written to a cgroup file; a negative value is not
// written (no bound).
type setting struct {
	name  string
	value int64
}

// rlimit is one resource limit set on the confined process.
type rlimit struct {
	resource int
	name     string
	value    int64
}

// optional names the cgroup files a kernel may lack (swap accounting
// off), which Confine then leaves alone.
var optional = map[string]bool{"memory.swap.max": true, "memory.memsw.limit_in_bytes": true}
