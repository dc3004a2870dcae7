//go:build unix

package agents

import (
	"os"
	"syscall"
)

// lockDir opens dir and takes an exclusive flock on it, waiting for it
// unless try is set (then it fails at once when another holds it). The
// kernel drops the lock when the holder dies, so a home whose lock can be
// taken belongs to no running attempt.
func lockDir(dir string, try bool) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX
	if try {
		how |= syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
