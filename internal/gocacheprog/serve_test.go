package gocacheprog

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeLayers drives Serve as the go command does: an
// entry of the lower cache is found, a put lands in the upper cache only,
// and the lower cache's files are never changed.
func TestServeLayers(t *testing.T) {
	lower, upper := t.TempDir(), t.TempDir()
	action, output := make([]byte, 32), make([]byte, 32)
	action[0], output[0] = 0xab, 0xcd
	require.NoError(t, cachePutForTest(lower, action, output, "from lower"))
	before := snapshotDir(t, lower)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(inR, outW, upper, lower); outW.Close() }()
	dec := json.NewDecoder(bufio.NewReader(outR))
	recv := func() response {
		var r response
		require.NoError(t, dec.Decode(&r))
		return r
	}
	send := func(v any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		_, err = inW.Write(append(b, '\n'))
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"get", "put", "close"}, recv().KnownCommands)

	send(request{ID: 1, Command: "get", ActionID: action})
	got := recv()
	require.False(t, got.Miss, "the lower entry is found")
	b, err := os.ReadFile(got.DiskPath)
	require.NoError(t, err)
	assert.Equal(t, "from lower", string(b))

	other := make([]byte, 32)
	other[0] = 0x11
	send(request{ID: 2, Command: "get", ActionID: other})
	assert.True(t, recv().Miss)

	body := []byte("new body")
	send(request{ID: 3, Command: "put", ActionID: action, OutputID: other, BodySize: int64(len(body))})
	send(body) // json encodes []byte as a base64 string, as the go command sends it
	put := recv()
	require.Empty(t, put.Err)
	assert.True(t, strings.HasPrefix(put.DiskPath, upper), "put writes to the upper cache: %s", put.DiskPath)

	send(request{ID: 4, Command: "get", ActionID: action})
	got = recv()
	b, err = os.ReadFile(got.DiskPath)
	require.NoError(t, err)
	assert.Equal(t, "new body", string(b), "the upper entry shadows the lower one")

	send(request{ID: 5, Command: "close"})
	assert.Equal(t, int64(5), recv().ID)
	require.NoError(t, <-done)
	inW.Close()
	assert.Equal(t, before, snapshotDir(t, lower), "the lower cache is unchanged")
}

func cachePutForTest(dir string, action, output []byte, body string) error {
	_, err := put(dir, request{ActionID: action, OutputID: output, BodySize: int64(len(body))}, []byte(body))
	return err
}

// snapshotDir maps every file under dir to its content and mtime.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = string(b) + "@" + info.ModTime().Format(time.RFC3339Nano)
		return err
	}))
	return m
}
