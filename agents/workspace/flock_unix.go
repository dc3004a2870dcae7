//go:build unix

package workspace

import (
	"os"
	"syscall"
)

// flock takes a shared (exclusive false) or exclusive flock on f, waiting
// for it unless try is set (then it fails at once when it is held). flock
// locks belong to the open file, so two opens in one process exclude each
// other too, and the kernel drops them when the holder dies.
func flock(f *os.File, exclusive, try bool) error {
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

// flockWorks reports whether flock locks exist here (see flock).
const flockWorks = true
