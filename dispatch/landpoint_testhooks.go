//go:build statgraph_testhooks

package dispatch

import (
	"os"
	"strings"
)

// landKillEnv is a switch for end-to-end tests only (tests/land_test.go
// kills statgraph land at a point of a landing, tests/publishkill_test.go
// statgraph run once a unit's branch is published), in a binary built with
// the tag statgraph_testhooks (tests/main_test.go); its value is "POINT
// UNIT MARKER". The first process to reach POINT (see landpoint.go) while
// landing or running UNIT creates the file MARKER and kills itself with SIGKILL; once
// MARKER exists, no process does. Unset it does nothing.
const landKillEnv = "STATGRAPH_TEST_LAND_KILL"

func init() {
	f := strings.Fields(os.Getenv(landKillEnv))
	if len(f) != 3 {
		return
	}
	landPoint = func(point, unit string) {
		if point != f[0] || unit != f[1] {
			return
		}
		if m, err := os.OpenFile(f[2], os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			m.Close()
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				p.Kill() // SIGKILL on unix
			}
		}
	}
}
