//go:build unix

package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// Flags CopyFile opens with: refuse a symbolic link, and do not wait for
// a writer when src is a named pipe.
const (
	openNoFollow = syscall.O_NOFOLLOW
	openNonBlock = syscall.O_NONBLOCK
)

// FlockWorks reports whether Flock takes real locks here.
const FlockWorks = true

// Flock takes a flock lock on f, exclusive or shared, waiting for it
// unless try is set; then it fails at once (with syscall.EWOULDBLOCK)
// when another holds a conflicting one. The lock belongs to the open file:
// two opens of one file in one process exclude each other too, closing f
// releases it, and the kernel drops it when the holder dies. Where flock
// does not exist (FlockWorks false) Flock does nothing and returns nil.
func Flock(f *os.File, exclusive, try bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if try {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// ProcessAlive reports whether a process with this pid exists (an exited
// child not yet waited for counts). A process of another user counts as
// alive. A pid of 0 or less is no process. Where the system cannot tell,
// ProcessAlive reports true, so that nothing is taken over from a process
// that may still run.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// OwnedByMe reports whether the file info describes belongs to this
// process's user.
func OwnedByMe(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
