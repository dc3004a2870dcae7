//go:build !unix

package workspace

import (
	"testing"
	"time"
)

// cpuTime is unavailable here; benchmarks report wall-clock time only.
func cpuTime() time.Duration { return 0 }

func reportCPU(*testing.B, time.Duration) {}
