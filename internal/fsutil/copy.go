package fsutil

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// CopyFile copies the regular file src to a new file dst with mode perm
// (not reduced by the umask). It never goes through a symbolic link: a
// link at src or at dst is refused (the last element of each path; where
// the system has O_NOFOLLOW), as are a dst that exists, and a src that is
// not a regular file (a directory, a device, a named pipe, which is not
// waited on). The copy is not fsynced. On failure a partly written dst is
// removed.
func CopyFile(src, dst string, perm fs.FileMode) (err error) {
	in, err := os.OpenFile(src, os.O_RDONLY|openNoFollow|openNonBlock, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("copy %s: not a regular file (%s)", src, st.Mode().Type())
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openNoFollow, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	if _, err = io.Copy(out, in); err != nil {
		return err
	}
	return out.Chmod(perm)
}
