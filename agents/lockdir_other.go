//go:build !unix

package agents

import "os"

// lockDir opens dir. Without flock there is no lock: private homes exist
// only in a sandbox, which needs Linux.
func lockDir(dir string, _ bool) (*os.File, error) { return os.Open(dir) }
