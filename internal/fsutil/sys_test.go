//go:build unix

package fsutil_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// flockChild is the second process of TestFlock: it opens args[0] and
// tries to take the lock args[1] ("exclusive" or "shared") without
// waiting (args[2] "try") or waiting ("wait"). It exits 0 when it got the
// lock, 1 when another held it, 2 on another error.
func flockChild(args []string) int {
	f, err := os.Open(args[0])
	if err != nil {
		return 2
	}
	switch err := fsutil.Flock(f, args[1] == "exclusive", args[2] == "try"); {
	case err == nil:
		return 0
	case errors.Is(err, syscall.EWOULDBLOCK):
		return 1
	}
	return 2
}

// lockFrom runs a second process trying to lock path, and returns whether
// it got the lock.
func lockFrom(t *testing.T, path, kind string) bool {
	t.Helper()
	err := child("flock", path, kind, "try").Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return false
	}
	t.Fatalf("flock child: %v", err)
	return false
}

// TestFlock shows with a real second process that an exclusive lock
// excludes every other, a shared one only an exclusive one, and closing
// the file releases it; and that two opens in one process exclude each
// other.
func TestFlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fsutil.Flock(f, true, true); err != nil {
		t.Fatal(err)
	}
	if lockFrom(t, path, "exclusive") || lockFrom(t, path, "shared") {
		t.Error("another process took a lock while this one holds an exclusive lock")
	}
	g, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := fsutil.Flock(g, false, true); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("a second open of the file took a shared lock: %v; want it refused", err)
	}
	if err := fsutil.Flock(f, false, false); err != nil {
		t.Fatal(err)
	}
	if !lockFrom(t, path, "shared") {
		t.Error("another process could not share a shared lock")
	}
	if lockFrom(t, path, "exclusive") {
		t.Error("another process took an exclusive lock while this one holds a shared lock")
	}
	f.Close()
	if !lockFrom(t, path, "exclusive") {
		t.Error("the lock was not released when the file was closed")
	}
}

// TestProcessAlive checks this process, a process that has ended, pid 1
// (alive; of another user in a container's user namespace or not) and
// pids that are no process.
func TestProcessAlive(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pid  int
		want bool
	}{
		{os.Getpid(), true},
		{1, true},
		{cmd.Process.Pid, false},
		{0, false},
		{-1, false},
	} {
		if got := fsutil.ProcessAlive(c.pid); got != c.want {
			t.Errorf("fsutil.ProcessAlive(%d) = %v; want %v", c.pid, got, c.want)
		}
	}
}
