//go:build !unix

package fsutil

import "os"

// Without O_NOFOLLOW or O_NONBLOCK, CopyFile opens plainly.
const (
	openNoFollow = 0
	openNonBlock = 0
)

// FlockWorks reports whether Flock takes real locks here.
const FlockWorks = false

// Flock does nothing where flock does not exist (see the unix Flock).
func Flock(*os.File, bool, bool) error { return nil }

// ProcessAlive cannot tell without platform calls, so it reports true for
// a pid above 0 (see the unix ProcessAlive).
func ProcessAlive(pid int) bool { return pid > 0 }

// OwnedByMe reports true where files have no owner uid to compare.
func OwnedByMe(os.FileInfo) bool { return true }
