package workspace

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiffShowsLargeAndBinaryFilesByName: a text file one byte over
// maxDiffBlob shows as "<path>: N bytes, not shown" (its lines are never
// read), a binary file in git's "Binary files ... differ" form, a small
// change as its lines; every path is in the diff, also once committed and
// published. The old code showed the large file's lines.
func TestDiffShowsLargeAndBinaryFilesByName(t *testing.T) {
	w := prepare(t, Options{Source: newSource(t), TaskID: "big"})
	ctx := context.Background()
	line := "a line of text\n"
	big := strings.Repeat(line, maxDiffBlob/len(line)+1)[:maxDiffBlob+1]
	writeFiles(t, w.Dir(), map[string]string{"big.txt": big, "small.bin": "a\x00b", "a.txt": "alpha\nmore\n"})
	_, _, err := w.Commit(ctx, 1, "large")
	require.NoError(t, err)

	d, err := w.Diff(ctx)
	require.NoError(t, err)
	for _, want := range []string{
		"diff --git a/big.txt b/big.txt\nnew file mode 100644\nindex ",
		fmt.Sprintf("\nbig.txt: %d bytes, not shown\n", maxDiffBlob+1),
		"diff --git a/small.bin b/small.bin",
		"Binary files /dev/null and b/small.bin differ\n",
		" alpha\n+more\n",
	} {
		assert.Contains(t, d, want)
	}
	assert.NotContains(t, d, "+"+line, "the large file's lines")
	assert.Less(t, len(d), 4096)
}
