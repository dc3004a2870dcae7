package agents

import (
	"os"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// lockDir opens dir and takes an exclusive flock on it (fsutil.Flock),
// waiting for it unless try is set (then it fails at once when another
// holds it). The kernel drops the lock when the holder dies, so a home
// whose lock can be taken belongs to no running attempt. Without flock
// there is no lock: private homes exist only in a sandbox, which needs
// Linux.
func lockDir(dir string, try bool) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := fsutil.Flock(f, true, try); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
