//go:build !unix

package agents

import "time"

// processCPU is unavailable here, so benchmarks report 0 cpu-ms.
func processCPU() time.Duration { return 0 }
