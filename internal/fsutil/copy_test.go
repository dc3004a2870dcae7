//go:build unix

package fsutil_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// TestCopyFile copies a file with its new mode, and refuses a symbolic
// link at either end, an existing destination, a directory and a named
// pipe (without waiting for a writer), leaving nothing behind.
func TestCopyFile(t *testing.T) {
	defer syscall.Umask(syscall.Umask(0o077))
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "dst")
	if err := fsutil.CopyFile(src, dst, 0o755); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dst, "secret", 0o755)

	link := filepath.Join(dir, "link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.CopyFile(link, filepath.Join(dir, "from-link"), 0o644); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("CopyFile from a link: %v; want ELOOP", err)
	}
	elsewhere := filepath.Join(dir, "elsewhere")
	toLink := filepath.Join(dir, "to-link")
	if err := os.Symlink(elsewhere, toLink); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.CopyFile(src, toLink, 0o644); err == nil {
		t.Error("CopyFile to a dangling link succeeded")
	}
	if _, err := os.Lstat(elsewhere); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CopyFile wrote through a link: %v", err)
	}
	if err := fsutil.CopyFile(src, dst, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CopyFile over a file: %v; want fs.ErrExist", err)
	}
	if err := fsutil.CopyFile(dir, filepath.Join(dir, "from-dir"), 0o644); err == nil {
		t.Error("CopyFile of a directory succeeded")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.CopyFile(fifo, filepath.Join(dir, "from-fifo"), 0o644); err == nil {
		t.Error("CopyFile of a named pipe succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 5 {
		t.Errorf("%d entries in the directory, want 5 (src, dst, link, to-link, fifo)", len(ents))
	}
}
