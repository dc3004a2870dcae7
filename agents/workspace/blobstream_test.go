package workspace

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/secret"
)

// streamHelperEnv names, in the environment of this test binary run as a
// helper process, the directory TestCommitLargeFileStaysBounded works in.
const streamHelperEnv = "STATGRAPH_STREAM_HELPER_DIR"

// TestCommitLargeFileStaysBounded: with the caps raised to 300 MiB, a
// 250 MiB file (sparse) is committed by a process whose peak RSS (its own
// VmHWM) stays under 200 MB, and the blob committed is the one git
// hash-object gives for the file. The old code read the file whole, and
// copied it several times (about 1 GB of RSS, measured).
func TestCommitLargeFileStaysBounded(t *testing.T) {
	if dir := os.Getenv(streamHelperEnv); dir != "" {
		commitLargeFile(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCommitLargeFileStaysBounded$", "-test.count=1")
	cmd.Env = append(os.Environ(), streamHelperEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	got := map[string]string{}
	for sc := bufio.NewScanner(strings.NewReader(string(out))); sc.Scan(); {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
			got[k] = v
		}
	}
	require.Contains(t, got, "peak", "%s", out)
	peak, err := strconv.ParseInt(got["peak"], 10, 64)
	require.NoError(t, err)
	t.Logf("peak RSS of the committing process: %.1f MB", float64(peak)/1e6)
	assert.Less(t, peak, int64(200e6), "peak RSS of the committing process")

	ws := got["workspace"]
	big := filepath.Join(ws, "big.bin")
	assert.Equal(t, gitRun(t, ws, "hash-object", big), gitRun(t, ws, "rev-parse", got["commit"]+":big.bin"), "the committed blob is git's for the file")
	assert.Equal(t, strconv.Itoa(250<<20), gitRun(t, ws, "cat-file", "-s", got["commit"]+":big.bin"))
	gitRun(t, ws, "status", "--short") // git reads the index Commit wrote
}

// commitLargeFile is the helper process of TestCommitLargeFileStaysBounded:
// it commits a 250 MiB sparse file (text at both ends) in a workspace
// under dir and prints the workspace, the commit and its own peak RSS.
func commitLargeFile(t *testing.T, dir string) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, Root: dir, TaskID: "big", MaxFileBytes: 300 << 20, MaxCommitBytes: 300 << 20})
	f, err := os.Create(filepath.Join(w.Dir(), "big.bin"))
	require.NoError(t, err)
	_, err = f.WriteString("start of a large file\n")
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("\nend of it\n"), 250<<20-11)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	h, changed, err := w.Commit(context.Background(), 1, "a large file")
	require.NoError(t, err)
	require.True(t, changed)
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			require.NoError(t, err)
			fmt.Printf("peak=%d\n", kb*1024)
		}
	}
	fmt.Printf("workspace=%s\ncommit=%s\n", w.Dir(), h)
}

// TestCommitScrubsSecretAcrossChunks: a 3 MiB file, more than the
// scrubber takes at once, dense with a secret of a dozen lines (a
// credential file's value) and a key's forms, so that nearly every line
// start the scrubber could cut at is inside the secret. The committed blob is
// exactly the file scrubbed whole, holds no form of either, is git's blob
// for those bytes, and the file is reported as scrubbed. With no overlap
// kept between the scrubber's segments, secrets across the cuts are left
// in.
func TestCommitScrubsSecretAcrossChunks(t *testing.T) {
	const key = "sk-stream-canary-8f2e41d0"
	pem := "-----BEGIN STREAM KEY-----\n" + strings.Repeat("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n", 10) + "-----END STREAM KEY-----"
	secret.Register("STATGRAPH_WORKSPACE_STREAM_KEY", key)
	secret.Register("STATGRAPH_WORKSPACE_STREAM_PEM", pem)
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "chunks"})
	var b strings.Builder
	forms := secret.Forms(key)
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "line %d %s\n%s\n", i, forms[i%len(forms)], pem)
	}
	content := b.String()
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir(), "log.txt"), []byte(content), 0o644))
	h, changed, err := w.Commit(context.Background(), 1, "a long log")
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, []string{"log.txt"}, w.Scrubbed())

	out, err := exec.Command("git", "-C", w.Dir(), "cat-file", "blob", h+":log.txt").Output()
	require.NoError(t, err)
	committed, want := string(out), secret.Scrub(content)
	require.Equal(t, len(want), len(committed), "the committed blob's size")
	assert.True(t, committed == want, "the committed blob is the file scrubbed whole")
	assert.NotContains(t, committed, pem)
	for _, f := range forms {
		assert.NotContains(t, committed, f)
	}
	scrubbed := filepath.Join(t.TempDir(), "scrubbed")
	require.NoError(t, os.WriteFile(scrubbed, []byte(want), 0o644))
	assert.Equal(t, gitRun(t, w.Dir(), "hash-object", scrubbed), gitRun(t, w.Dir(), "rev-parse", h+":log.txt"))
}
