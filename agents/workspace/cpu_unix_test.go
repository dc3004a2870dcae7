//go:build unix

package workspace

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user and system) used so far by this process and
// its reaped children; it is not disturbed by other load on the machine, so
// it compares Prepare with git fairly when wall-clock figures are noisy.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// reportCPU reports the CPU time per operation since start as "cpu-ns/op".
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
