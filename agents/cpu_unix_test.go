//go:build unix

package agents

import (
	"syscall"
	"time"
)

// processCPU returns the user and system CPU time this process has used,
// without its children (so a check's own process is left out). Unlike wall
// time it is not inflated by other load on the machine.
func processCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
