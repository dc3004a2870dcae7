package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/secret"
)

// dependencyWithLinks makes branch dep in src committing the symbolic
// links .env -> dir/b.txt and conf -> dir, as a dependency's work could,
// and gives the user's working tree (on main) a real .env and
// conf/local.ini to copy.
func dependencyWithLinks(t *testing.T) string {
	t.Helper()
	src := newSource(t)
	gitRun(t, src, "checkout", "-q", "-b", "dep", "main")
	require.NoError(t, os.Symlink("dir/b.txt", filepath.Join(src, ".env")))
	require.NoError(t, os.Symlink("dir", filepath.Join(src, "conf")))
	gitRun(t, src, "add", "-A")
	gitRun(t, src, "commit", "-q", "-m", "links")
	gitRun(t, src, "checkout", "-q", "main")
	writeFiles(t, src, map[string]string{".env": "API_TOKEN=copied-secret\n", "conf/local.ini": "password = copied-too\n"})
	return src
}

// TestCopyFilesNeverWritesThroughALink: a committed symbolic link in the
// workspace (the file itself, or a directory on its way) makes copy_files
// fail with an error naming it, and the file the link points to, which
// would be committed, is left as it was.
func TestCopyFilesNeverWritesThroughALink(t *testing.T) {
	src := dependencyWithLinks(t)
	for i, tc := range []struct{ copy, link string }{{".env", ".env"}, {"conf/local.ini", "conf"}} {
		t.Run(tc.copy, func(t *testing.T) {
			root := t.TempDir()
			id := string(rune('1' + i))
			_, err := Prepare(context.Background(), Options{Source: src, TaskID: id, Root: root, Base: "dep", CopyFiles: []string{tc.copy}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.link+" in the workspace is a symbolic link")
			assert.Contains(t, err.Error(), "copy_files")
			got, rerr := os.ReadFile(filepath.Join(root, id, "dir", "b.txt"))
			require.NoError(t, rerr)
			assert.Equal(t, "beta\n", string(got), "nothing is written through the link")
			assert.NoFileExists(t, filepath.Join(root, id, "dir", "local.ini"))
		})
	}
}

// TestCopyFilesValuesAreScrubbed: the values of a copied .env that look
// like secrets are known to the scrubber once the workspace is prepared,
// so a commit of a file
// the agent copied them into records them replaced and says so.
func TestCopyFilesValuesAreScrubbed(t *testing.T) {
	const token = "Canary-EnvToken-4b81c0d2"
	src := newSource(t)
	writeFiles(t, src, map[string]string{".env": "PORT=8080\nSTRIPE_SECRET=" + token + "\n"})
	o := Options{Source: src, TaskID: "1", Root: t.TempDir(), CopyFiles: []string{".env"}}
	w := prepare(t, o)
	assert.Equal(t, "key "+secret.Marker, secret.Scrub("key "+token))
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir(), "notes.txt"), []byte("the key is "+token+"\n"), 0o644))
	hash, _, err := w.Commit(context.Background(), 1, "attempt")
	require.NoError(t, err)
	assert.Equal(t, "the key is "+secret.Marker, gitRun(t, w.Dir(), "show", hash+":notes.txt"))
	assert.Equal(t, []string{"notes.txt"}, w.Scrubbed())
	assert.Contains(t, gitRun(t, w.Dir(), "log", "-1", "--format=%B", hash), "replaced a secret")
}
