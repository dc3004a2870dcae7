//go:build !linux

package workspace

import (
	"os"
	"path/filepath"
)

// stampFile is the file under .git whose modification time a scan takes,
// before it looks at any file, as "now" by the file system's own clock.
const stampFile = "statgraph-scan-stamp"

// scanStamp returns the file system's current time in nanoseconds, taken by
// writing the stamp file in gitDir and reading its modification time back.
// A file whose mtime is not strictly before the stamp of the scan that
// hashed it is racy. Using the file system's clock (not time.Now) keeps
// the comparison exact whatever the file system's timestamp granularity,
// from nanoseconds to the 2 s of FAT.
func scanStamp(gitDir string) (int64, error) {
	f, err := os.OpenFile(filepath.Join(gitDir, stampFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	if _, err := f.Write([]byte{'\n'}); err != nil {
		f.Close()
		return 0, err
	}
	fi, err := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return fi.ModTime().UnixNano(), nil
}
