//go:build linux

package workspace

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The environment that turns this test binary into a committing child:
// TestStreamCommitChild reopens the workspace named by it and commits.
const (
	streamChildSourceEnv = "STATGRAPH_TEST_STREAM_SOURCE"
	streamChildRootEnv   = "STATGRAPH_TEST_STREAM_ROOT"
)

// TestStreamCommitChild is the body of the child process of
// TestStreamedBlobSurvivesKill9; run normally it does nothing.
func TestStreamCommitChild(t *testing.T) {
	src := os.Getenv(streamChildSourceEnv)
	if src == "" {
		return
	}
	w, err := Prepare(context.Background(), Options{Source: src, TaskID: "stream", Root: os.Getenv(streamChildRootEnv)})
	if err == nil {
		fmt.Println("committing") // the parent watches the object store from this line
		_, _, err = w.Commit(context.Background(), 1, "a large file")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(0)
}

// TestStreamedBlobSurvivesKill9 kills (SIGKILL) a process committing a
// 8 MiB file of random bytes, which is hashed and then written as a
// loose object in a stream (blobstream.go), while that object's bytes are
// being written. No object is left at the blob's name; the next commit,
// by a fresh process's state, writes it whole: git fsck --full is clean,
// the committed blob is git hash-object's for the file, and publishing the
// commit into the source repository leaves it readable there too. Writing
// the object at its final name instead of a temporary one leaves a
// truncated object that the next commit takes as present (tried: fsck
// then reports it corrupt and the blob cannot be read).
func TestStreamedBlobSurvivesKill9(t *testing.T) {
	src := newSource(t)
	root := t.TempDir()
	w := prepare(t, Options{Source: src, TaskID: "stream", Root: root})
	big := filepath.Join(w.Dir(), "big.bin")
	data := make([]byte, 8<<20) // random: zlib cannot shrink it, so the write takes a while
	rand.Read(data)
	require.NoError(t, os.WriteFile(big, data, 0o644))
	blob := gitRun(t, w.Dir(), "hash-object", big)
	final := filepath.Join(w.Dir(), ".git", "objects", blob[:2], blob[2:])

	var stderr strings.Builder
	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamCommitChild$", "-test.count=1")
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), streamChildSourceEnv+"="+src, streamChildRootEnv+"="+root)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the committing child did not start: %s", stderr.String())
	require.Equal(t, "committing\n", line)
	// Kill once a file in the object's directory holds part of it: the
	// header and at least 64 KiB of compressed bytes, far from the end
	// (random bytes compress to a little more than their size).
	var tmp string
	deadline := time.Now().Add(2 * time.Minute)
	for tmp == "" {
		matches, _ := filepath.Glob(filepath.Join(w.Dir(), ".git", "objects", blob[:2], "*"))
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Size() >= 64<<10 && st.Size() < int64(len(data)) {
				tmp = m
			} else if err == nil && st.Size() >= int64(len(data)) || time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the child wrote the whole object before it could be killed mid-write (%s)", stderr.String())
			}
		}
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	require.Error(t, err, "the child was killed")
	st, err := os.Stat(tmp)
	require.NoError(t, err)
	t.Logf("killed with %d of the object's bytes written in %s", st.Size(), filepath.Base(tmp))
	assert.NoFileExists(t, final, "a kill mid-write leaves no object at the blob's name")

	// The next run: a new workspace value (no in-memory cache) over the
	// same directory, as a resumed statgraph opens it.
	again, err := Prepare(context.Background(), Options{Source: src, TaskID: "stream", Root: root})
	require.NoError(t, err)
	defer again.Close()
	h, changed, err := again.Commit(context.Background(), 1, "a large file")
	require.NoError(t, err)
	require.True(t, changed)
	checkSource(t, again.Dir(), "")
	assert.Equal(t, blob, gitRun(t, again.Dir(), "rev-parse", h+":big.bin"), "the committed blob is git's for the file")
	out, err := exec.Command("git", "-C", again.Dir(), "cat-file", "blob", h+":big.bin").Output()
	require.NoError(t, err)
	assert.True(t, string(out) == string(data), "the committed blob reads back as the file")
	require.NoError(t, again.Finish(context.Background()))
	checkSource(t, src, again.Branch())
	assert.Equal(t, blob, gitRun(t, src, "rev-parse", again.Branch()+":big.bin"))
}
