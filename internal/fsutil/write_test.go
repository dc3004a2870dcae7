//go:build unix

package fsutil_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/statgraph/statgraph/internal/asuser"
	"github.com/statgraph/statgraph/internal/fsutil"
)

// TestMain lets the test binary double as the child processes the tests
// start: a writer to kill mid-write and a second locker.
func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "write":
		writeForever(os.Args[len(os.Args)-2], os.Args[len(os.Args)-1] == "cache")
	case "flock":
		os.Exit(flockChild(os.Args[len(os.Args)-3:]))
	}
	os.Exit(m.Run())
}

// childEnv names the child's job in the environment of a re-executed test
// binary.
const childEnv = "FSUTIL_TEST_CHILD"

// child returns a command running this test binary as a child doing job
// with args.
func child(job string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"="+job)
	return cmd
}

// fileSize is the size of the files the killed writer writes: large
// enough that a write takes many system calls.
const fileSize = 1 << 20

// writeForever replaces path, again and again, with fileSize bytes all
// 'a' or all 'b', announcing on stdout when the first write is done. It
// writes with WriteCache when cache is set, else with WriteFile.
func writeForever(path string, cache bool) {
	write := fsutil.WriteFile
	if cache {
		write = fsutil.WriteCache
	}
	a, b := bytes.Repeat([]byte("a"), fileSize), bytes.Repeat([]byte("b"), fileSize)
	for i := 0; ; i++ {
		data := a
		if i%2 == 1 {
			data = b
		}
		if err := write(path, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if i == 0 {
			fmt.Println("written")
		}
	}
}

// whole reports whether data is one of writeForever's files, complete.
func whole(data []byte) bool {
	return len(data) == fileSize && (data[0] == 'a' || data[0] == 'b') && bytes.Count(data, data[:1]) == fileSize
}

// TestWriteFileKilledMidWrite kills a process that keeps replacing a file
// while this one reads it: every read, and the file left after the kill,
// is one complete version, never a part. So with WriteCache.
func TestWriteFileKilledMidWrite(t *testing.T) {
	for _, fn := range []string{"file", "cache"} {
		t.Run(fn, func(t *testing.T) { killMidWrite(t, fn) })
	}
}

// killMidWrite is TestWriteFileKilledMidWrite with the child writing
// with fn ("file" or "cache").
func killMidWrite(t *testing.T, fn string) {
	path := filepath.Join(t.TempDir(), "state.json")
	cmd := child("write", path, fn)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := out.Read(make([]byte, 8)); err != nil {
		t.Fatalf("the writer did not write: %v", err)
	}
	for i := range 50 {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if !whole(data) {
			t.Fatalf("read %d saw a partial file: %d bytes", i, len(data))
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	data, err := os.ReadFile(path)
	if err != nil || !whole(data) {
		t.Fatalf("after the kill the file is %d bytes (%v), want a whole version", len(data), err)
	}
}

// TestWriteFileMode shows that an existing file keeps its mode, a new one
// gets perm despite the umask, and a symbolic link is replaced, not its
// target.
func TestWriteFileMode(t *testing.T) {
	defer syscall.Umask(syscall.Umask(0o077))
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	if err := os.WriteFile(old, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(old, 0o640)
	if err := fsutil.WriteFile(old, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	checkFile(t, old, "new", 0o640)

	fresh := filepath.Join(dir, "fresh")
	if err := fsutil.WriteFile(fresh, []byte("fresh"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkFile(t, fresh, "fresh", 0o644)

	link := filepath.Join(dir, "link")
	if err := os.Symlink(old, link); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.WriteFile(link, []byte("via link"), 0o600); err != nil {
		t.Fatal(err)
	}
	checkFile(t, link, "via link", 0o600)
	checkFile(t, old, "new", 0o640)
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("%d entries in the directory, want 3 (a temporary file left?)", len(ents))
	}
}

// checkFile fails t unless path is a regular file (not a link) holding
// want with mode perm.
func checkFile(t *testing.T, path, want string, perm fs.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm() != perm {
		t.Errorf("%s: mode %v; want a regular file with %v", path, st.Mode(), perm)
	}
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("%s holds %q; want %q", path, got, want)
	}
}

// TestWriteFileDirErrors shows WriteFile's errors reach the caller, as an
// unprivileged user (root ignores directory permissions): in a directory
// it cannot write, path is left as it was; in one it can write but not
// read, the rename succeeds and the directory's fsync, which must open
// it, fails, so the fsync is not skipped.
func TestWriteFileDirErrors(t *testing.T) {
	if os.Geteuid() == 0 && !asuser.Inner() {
		asuser.RunTests(t, "^TestWriteFileDirErrors$", []string{"TestWriteFileDirErrors"})
		return
	}
	if os.Geteuid() == 0 {
		t.Fatal("the inner run is root")
	}
	dir := t.TempDir()
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(readOnly, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(readOnly, 0o555)
	defer os.Chmod(readOnly, 0o755)
	if err := fsutil.WriteFile(path, []byte("new"), 0o644); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("WriteFile in a read-only directory: %v; want a permission error", err)
	}
	checkFile(t, path, "old", 0o644)

	unreadable := filepath.Join(dir, "wx")
	if err := os.Mkdir(unreadable, 0o300); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(unreadable, 0o755)
	path = filepath.Join(unreadable, "f")
	err := fsutil.WriteFile(path, []byte("new"), 0o644)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), unreadable) {
		t.Errorf("WriteFile in a directory it cannot open: %v; want the directory's fsync to fail opening %s", err, unreadable)
	}
	checkFile(t, path, "new", 0o644)
}

// TestWriteNew shows that WriteNew refuses a path that exists, a link
// included, and that of writers racing for one path exactly one wins and
// its content is the file's.
func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "answer")
	if err := fsutil.WriteNew(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.WriteNew(path, []byte("second"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteNew over a file: %v; want fs.ErrExist", err)
	}
	checkFile(t, path, "first", 0o600)

	link, target := filepath.Join(dir, "link"), filepath.Join(dir, "target")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.WriteNew(link, []byte("x"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteNew over a dangling link: %v; want fs.ErrExist", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteNew wrote through a link: %v", err)
	}

	race := filepath.Join(dir, "race")
	var wg sync.WaitGroup
	won := make(chan string, 16)
	for i := range 16 {
		wg.Go(func() {
			data := fmt.Sprint("writer ", i)
			if err := fsutil.WriteNew(race, []byte(data), 0o600); err == nil {
				won <- data
			} else if !errors.Is(err, fs.ErrExist) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(won)
	var winners []string
	for w := range won {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Fatalf("%d writers won: %q; want 1", len(winners), winners)
	}
	checkFile(t, race, winners[0], 0o600)
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("%d entries in the directory, want 3 (a temporary file left?)", len(ents))
	}
}

// TestWriteFileIf: the check runs once the new content is complete beside
// the file, so that only the rename is left as a window; when it says the
// file changed, the file keeps the other writer's bytes and no temporary
// file is left.
func TestWriteFileIf(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	temps := func() []string {
		names, _ := filepath.Glob(filepath.Join(dir, ".tasks.json.tmp-*"))
		return names
	}

	var sawTemp []byte
	wrote, err := fsutil.WriteFileIf(path, []byte("new"), 0o644, func() (bool, error) {
		if names := temps(); len(names) == 1 {
			sawTemp, _ = os.ReadFile(names[0])
		}
		return true, nil
	})
	if err != nil || !wrote {
		t.Fatalf("WriteFileIf = %v, %v; want true, nil", wrote, err)
	}
	if string(sawTemp) != "new" {
		t.Errorf("when the check ran the new content beside the file was %q, want %q", sawTemp, "new")
	}
	if got := readString(t, path); got != "new" {
		t.Errorf("file = %q, want %q", got, "new")
	}

	// Another writer lands while this one writes: the check sees it and
	// the file keeps it.
	wrote, err = fsutil.WriteFileIf(path, []byte("mine"), 0o644, func() (bool, error) {
		return false, os.WriteFile(path, []byte("theirs"), 0o644)
	})
	if err != nil || wrote {
		t.Fatalf("WriteFileIf after a change = %v, %v; want false, nil", wrote, err)
	}
	if got := readString(t, path); got != "theirs" {
		t.Errorf("file = %q, want the other writer's %q", got, "theirs")
	}

	boom := errors.New("cannot read")
	wrote, err = fsutil.WriteFileIf(path, []byte("mine"), 0o644, func() (bool, error) { return false, boom })
	if !errors.Is(err, boom) || wrote {
		t.Fatalf("WriteFileIf with a failing check = %v, %v; want false, %v", wrote, err, boom)
	}
	if got := readString(t, path); got != "theirs" {
		t.Errorf("file = %q, want %q", got, "theirs")
	}
	if names := temps(); len(names) != 0 {
		t.Errorf("temporary files left: %v", names)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
