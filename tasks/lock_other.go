//go:build !unix

package tasks

import "os"

// tryFlock does nothing where flock does not exist; the exclusive creation
// of the lock file is the lock.
func tryFlock(*os.File) error { return nil }

// processAlive cannot tell without platform calls, so it assumes the
// process runs: a lock is then never taken over automatically.
func processAlive(int) bool { return true }
