package proc

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
