package mcpserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestChangesReadsQuotedNames: a name git quotes in a diff header
// (core.quotePath) is listed as the path itself, and the counts of the
// files after it are kept.
func TestChangesReadsQuotedNames(t *testing.T) {
	diff := "diff --git \"a/ctl\\001name.txt\" \"b/ctl\\001name.txt\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/ctl\\001name.txt\"\n@@ -0,0 +1 @@\n+new\n" +
		"diff --git a/a b.txt b/a b.txt\n--- a/a b.txt\n+++ b/a b.txt\n@@ -1 +1,2 @@\n-x\n+y\n+z\n"
	assert.Equal(t, []FileChange{{Path: "ctl\x01name.txt", Added: 1}, {Path: "a b.txt", Added: 2, Removed: 1}}, changes(diff))
}
