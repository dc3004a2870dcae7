//go:build unix

package tasks

import (
	"errors"
	"os"
	"syscall"
)

// tryFlock takes an exclusive flock on f without waiting. flock locks
// belong to the open file, so a second open in the same process conflicts
// too, and the kernel drops them when the holder dies.
func tryFlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
