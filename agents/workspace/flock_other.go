//go:build !unix

package workspace

import "os"

// flock does nothing where flock does not exist: merges of statgraph's
// packs are then only kept apart from the readers of this process.
func flock(*os.File, bool, bool) error { return nil }

// flockWorks reports whether flock locks exist here (see flock).
const flockWorks = false
