package proc

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Limits bounds one sandboxed command and everything it starts. A zero
// field means the built-in default (see Defaults); a negative field means
// no bound for that resource.
type Limits struct {
	// Procs bounds the number of processes (and threads) alive at once.
	Procs int
	// MemoryBytes bounds resident memory, the private /tmp's pages
	// included where a memory cgroup enforces it.
	MemoryBytes int64
	// TmpBytes is the size of the private /tmp.
	TmpBytes int64
	// FileBytes bounds the size of any one file the command writes.
	FileBytes int64
	// OpenFiles bounds the descriptors one process may hold open.
	OpenFiles int
}

// The fixed defaults of Limits; MemoryBytes depends on the machine (see
// Defaults).
const (
	// DefaultProcs: `go test -race ./...` of a real module on a 2-core
	// machine peaks at a few hundred tasks (the go command, two compilers or
	// test binaries at a time, each with a dozen threads, TSan's
	// included); 2048 leaves room for bigger machines while stopping a
	// fork bomb long before the host's pid space (tens of thousands) or its
	// scheduler suffers.
	DefaultProcs = 2048
	// DefaultMaxMemoryBytes caps the memory default: 8 GiB is more than a
	// real module's race-enabled tests need, and half of a 16 GiB laptop.
	DefaultMaxMemoryBytes = 8 << 30
	// DefaultTmpBytes: the private /tmp is RAM-backed; 1 GiB holds test
	// fixtures and go's work directories (GOTMPDIR) but not a disk image.
	DefaultTmpBytes = 1 << 30
	// DefaultFileBytes: no source, build or test artefact of a checked
	// repository comes near 4 GiB; a runaway log or sparse file does.
	DefaultFileBytes = 4 << 30
	// DefaultOpenFiles: four times the usual soft limit (1024), which
	// build tools and test runners live with; the kernel memory one
	// process's descriptors pin stays small.
	DefaultOpenFiles = 4096
)

// Defaults returns the Limits a zero field stands for on this machine:
// DefaultProcs processes, the smaller of DefaultMaxMemoryBytes and half
// of the machine's RAM (so two sandboxed commands at once cannot exhaust
// it: 8 GiB on a 24 GiB machine), DefaultTmpBytes of /tmp, DefaultFileBytes
// per file and DefaultOpenFiles descriptors. It is safe for concurrent use.
func Defaults() Limits {
	return Limits{
		Procs:       DefaultProcs,
		MemoryBytes: defaultMemory(),
		TmpBytes:    DefaultTmpBytes,
		FileBytes:   DefaultFileBytes,
		OpenFiles:   DefaultOpenFiles,
	}
}

// defaultMemory is min(DefaultMaxMemoryBytes, RAM/2), RAM read once.
var defaultMemory = sync.OnceValue(func() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return DefaultMaxMemoryBytes
	}
	half := int64(si.Totalram) * int64(si.Unit) / 2
	return min(half, DefaultMaxMemoryBytes)
})

// Resolved returns l with every zero field replaced by its default from
// Defaults; negative fields (no bound) are kept.
func (l Limits) Resolved() Limits {
	d := Defaults()
	if l.Procs == 0 {
		l.Procs = d.Procs
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.TmpBytes == 0 {
		l.TmpBytes = d.TmpBytes
	}
	if l.FileBytes == 0 {
		l.FileBytes = d.FileBytes
	}
	if l.OpenFiles == 0 {
		l.OpenFiles = d.OpenFiles
	}
	return l
}
