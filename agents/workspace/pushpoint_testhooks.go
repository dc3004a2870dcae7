//go:build statgraph_testhooks

package workspace

import (
	"os"
	"path"
	"strings"
)

// killEnv is a switch for end-to-end tests only (tests/queue_fail_test.go
// kills a statgraph worker in the middle of its in-process publish), in a
// binary built with the tag statgraph_testhooks (tests/main_test.go); its
// value is one or more "POINT REFGLOB MARKER" separated by ";". The first
// process to reach POINT (see pushPoint) in a PushLocal that updates a ref
// matching REFGLOB (path.Match, e.g. refs/heads/statgraph/*/5) creates the
// file MARKER and kills itself with SIGKILL; once MARKER exists, no process
// does. Unset it does nothing.
const killEnv = "STATGRAPH_TEST_PUSH_KILL"

func init() {
	spec := os.Getenv(killEnv)
	if spec == "" {
		return
	}
	type kill struct{ point, glob, marker string }
	var kills []kill
	for _, k := range strings.Split(spec, ";") {
		if f := strings.Fields(k); len(f) == 3 {
			kills = append(kills, kill{f[0], f[1], f[2]})
		}
	}
	pushPoint = func(point string, updates []RefUpdate) {
		for _, k := range kills {
			if k.point != point {
				continue
			}
			for _, u := range updates {
				if ok, _ := path.Match(k.glob, u.Name); !ok {
					continue
				}
				if f, err := os.OpenFile(k.marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
					f.Close()
					if p, err := os.FindProcess(os.Getpid()); err == nil {
						p.Kill() // SIGKILL on unix
					}
				}
				return
			}
		}
	}
}
