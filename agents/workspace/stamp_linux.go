//go:build linux

package workspace

import (
	"os"
	"syscall"
)

// scanStamp returns the file system's current time in nanoseconds: it sets
// the modification time of gitDir itself to "now" (utimensat with
// UTIME_NOW, which takes the time from the file system's clock, the clock
// that stamps written files) and reads it back, so no file is made (a new
// inode is the costliest thing a scan could do). git pays no attention to
// the mtime of .git. A file whose mtime is not strictly before the stamp of
// the scan that hashed it is racy. Comparing with the file system's clock,
// not time.Now, keeps the rule exact whatever the timestamp granularity.
func scanStamp(gitDir string) (int64, error) {
	const utimeNow, utimeOmit = 1<<30 - 1, 1<<30 - 2
	if err := syscall.UtimesNano(gitDir, []syscall.Timespec{{Nsec: utimeOmit}, {Nsec: utimeNow}}); err != nil {
		return 0, &os.PathError{Op: "utimensat", Path: gitDir, Err: err}
	}
	fi, err := os.Stat(gitDir)
	if err != nil {
		return 0, err
	}
	return fi.ModTime().UnixNano(), nil
}
