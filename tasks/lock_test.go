//go:build unix

package tasks

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain doubles as the lock-holding helper process: started by
// lockInOtherProcess with STATGRAPH_LOCK_HELPER set, the test binary takes
// that lock, says so and waits to be killed.
func TestMain(m *testing.M) {
	if path := os.Getenv("STATGRAPH_LOCK_HELPER"); path != "" {
		l, err := Lock(path)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked", l.Path)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lockInOtherProcess starts a real process that holds the lock on path.
func lockInOtherProcess(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STATGRAPH_LOCK_HELPER="+path)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked "+path+".lock\n", line)
	return cmd
}

func readLock(t *testing.T, lockPath string) lockInfo {
	t.Helper()
	data, err := os.ReadFile(lockPath)
	require.NoError(t, err)
	var info lockInfo
	require.NoError(t, json.Unmarshal(data, &info))
	return info
}

func TestLockExcludesSecondLocker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	l, err := Lock(path)
	require.NoError(t, err)
	assert.Equal(t, path+".lock", l.Path)
	info := readLock(t, l.Path)
	assert.Equal(t, os.Getpid(), info.PID)
	assert.WithinDuration(t, time.Now(), info.Started, time.Minute)

	_, err = Lock(path)
	require.Error(t, err)
	var locked *LockedError
	require.True(t, errors.As(err, &locked))
	assert.Equal(t, os.Getpid(), locked.PID)
	assert.Equal(t, fmt.Sprintf("another statgraph run (pid %d) is using %s; wait for it or remove %s.lock if that process is gone", os.Getpid(), path, path), err.Error())

	require.NoError(t, l.Unlock())
	assert.NoFileExists(t, path+".lock")
	require.NoError(t, l.Unlock(), "a second Unlock does nothing")

	again, err := Lock(path)
	require.NoError(t, err, "the lock can be taken again after Unlock")
	require.NoError(t, again.Unlock())
}

func TestLockHeldByOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	holder := lockInOtherProcess(t, path)

	_, err := Lock(path)
	var locked *LockedError
	require.True(t, errors.As(err, &locked), "got %v; want *LockedError", err)
	assert.Equal(t, holder.Process.Pid, locked.PID)
	assert.Contains(t, err.Error(), fmt.Sprintf("(pid %d)", holder.Process.Pid))
	assert.Contains(t, err.Error(), path+".lock")

	// kill -9 the holder: the kernel drops its flock, its pid is gone, and
	// the lock file it left behind is taken over.
	require.NoError(t, holder.Process.Kill())
	_ = holder.Wait()
	require.FileExists(t, path+".lock")
	l, err := Lock(path)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), readLock(t, l.Path).PID)
	require.NoError(t, l.Unlock())
}

func TestLockStale(t *testing.T) {
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	old := time.Now().Add(-time.Minute)

	tests := []struct {
		name    string
		content string
		mtime   time.Time
		taken   bool
	}{
		{"dead pid", fmt.Sprintf(`{"pid": %d, "started": "2025-01-01T00:00:00Z"}`, dead.Process.Pid), time.Now(), true},
		{"own pid from an earlier life", fmt.Sprintf(`{"pid": %d}`, os.Getpid()), time.Now(), true},
		{"empty and old", "", old, true},
		{"garbage and old", "not json", old, true},
		{"empty and new: its creator is writing it", "", time.Now(), false},
		{"live pid without flock", `{"pid": 1}`, old, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tasks.json")
			require.NoError(t, os.WriteFile(path+".lock", []byte(tt.content), 0o644))
			require.NoError(t, os.Chtimes(path+".lock", tt.mtime, tt.mtime))

			l, err := Lock(path)
			if !tt.taken {
				var locked *LockedError
				require.True(t, errors.As(err, &locked), "got %v; want *LockedError", err)
				data, rerr := os.ReadFile(path + ".lock")
				require.NoError(t, rerr)
				assert.Equal(t, tt.content, string(data), "a live lock is left alone")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, os.Getpid(), readLock(t, l.Path).PID)
			require.NoError(t, l.Unlock())
		})
	}
}
