package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bom is the UTF-8 byte order mark some editors put at the start of a file.
const bom = "\xef\xbb\xbf"

// TestBadInput feeds invalid tasks files to run and validate: each exits 2,
// names the place (file:line:col) and the task, and leaves the file byte
// for byte as it was, with no lock, temporary file or run store behind.
func TestBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		args    []string // extra flags
		want    []string // substrings of stderr, after "<file>:"
	}{
		{
			name:    "malformed JSON",
			content: "{\"tasks\": [\n  {\"id\": 1, \"title\": \"a\"},\n  {\"id\": 2, \"title\": \"b\",}\n]}\n",
			want:    []string{"3:26: task 2: invalid JSON: trailing comma"},
		},
		{
			name:    "truncated JSON",
			content: "{\"tasks\": [\n  {\"id\": 1, \"title\": \"a\"},\n",
			want:    []string{"3:1: invalid JSON: unexpected end of file"},
		},
		{
			name:    "wrong types",
			content: "{\"tasks\": [\n  {\"id\": 1, \"title\": 5},\n  {\"id\": 2, \"title\": \"b\", \"dependencies\": \"1\", \"max_retries\": \"3\"}\n]}\n",
			want:    []string{"2:22: task 1: \"title\" is a number", "3:43: task 2: \"dependencies\" is a string", "3:63: task 2: \"max_retries\" is a string"},
		},
		{
			name:    "duplicate ids",
			content: "{\"tasks\": [\n  {\"id\": 1, \"title\": \"a\"},\n  {\"id\": 1, \"title\": \"b\"}\n]}\n",
			want:    []string{"3:3: task 1: duplicate id 1", "tasks.json:2:3"},
		},
		{
			name:    "null dependency",
			content: "{\"tasks\": [\n  {\"id\": 1, \"title\": \"a\"},\n  {\"id\": 2, \"title\": \"b\", \"dependencies\": [1, null]}\n]}\n",
			want:    []string{"3:47: task 2: dependencies[1] is null"},
		},
		{
			name:    "cycle",
			content: "{\"tasks\": [\n  {\"id\": 1, \"title\": \"a\", \"dependencies\": [3]},\n  {\"id\": 2, \"title\": \"b\", \"dependencies\": [1]},\n  {\"id\": 3, \"title\": \"c\", \"dependencies\": [2]}\n]}\n",
			want:    []string{"task 1: dependency cycle: 1 -> 3 -> 2 -> 1"},
		},
		{
			name:    "empty file",
			content: "",
			want:    []string{"1:1: invalid JSON: the file is empty"},
		},
		{
			name:    "BOM and invalid content",
			content: bom + "{\"tasks\": [\n  {\"id\": 1, \"title\": \"a\", \"dependencies\": [null]}\n]}\n",
			want:    []string{"2:44: task 1: dependencies[0] is null"},
		},
		{
			name:    "BOM and a problem on the first line",
			content: bom + "{\"tasks\": [{\"id\": 1, \"title\": \"a\", \"dependencies\": [null]}]}\n",
			want:    []string{"1:53: task 1: dependencies[0] is null"},
		},
		{
			name:    "BOM only",
			content: bom,
			want:    []string{"1:1: invalid JSON: the file is empty"},
		},
		{
			name:    "tagged file with a missing tag",
			content: "{\"feature\": {\"tasks\": [{\"id\": 1, \"title\": \"a\"}]}}\n",
			args:    []string{"--tag", "release"},
			want:    []string{"1:1: tag \"release\" not found", "feature"},
		},
		{
			name:    "tagged file without master",
			content: "{\"feature\": {\"tasks\": [{\"id\": 1, \"title\": \"a\"}]}}\n",
			want:    []string{"1:1: tag \"master\" not found", "--tag"},
		},
		{
			name:    "missing title",
			content: "{\"tasks\": [\n  {\"id\": 1}\n]}\n",
			want:    []string{"2:3: task 1:", "title"},
		},
		{
			name:    "negative retries",
			content: "{\"tasks\": [\n  {\"id\": 1, \"title\": \"a\", \"max_retries\": -1}\n]}\n",
			want:    []string{"task 1:", "max_retries"},
		},
		{
			name:    "ten megabytes with one cycle near the end",
			content: bigTasks(30000, 29996),
			want:    []string{"task 29996: dependency cycle: 29996 -> 29997 -> 29996"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := newRepo(t, map[string]string{"README": "bad input\n"})
			file := filepath.Join(dir, "tasks.json")
			require.NoError(t, os.WriteFile(file, []byte(tt.content), 0o644))
			for _, cmd := range []string{"validate", "run"} {
				args := append(append([]string{cmd}, tt.args...), "tasks.json")
				r := statgraph(t, dir, args...)
				assert.Equal(t, 2, r.code, "%s exit code\nstdout:\n%s\nstderr:\n%s", cmd, r.stdout, r.stderr)
				assert.Contains(t, r.stderr, "nothing was changed", cmd)
				assert.Regexp(t, `is not valid \((1 problem|[2-9][0-9]* problems)\)`, r.stderr, cmd)
				for _, w := range tt.want {
					if strings.Contains(w, ":") && w[0] >= '0' && w[0] <= '9' {
						w = "tasks.json:" + w
					}
					assert.Contains(t, clipped(r.stderr), w, "%s stderr", cmd)
				}
				assert.NotContains(t, r.stdout+r.stderr, " running: ", "%s started nothing (no progress line)", cmd)
				got, err := os.ReadFile(file)
				require.NoError(t, err)
				assert.True(t, bytes.Equal([]byte(tt.content), got), "%s changed tasks.json", cmd)
				assert.Empty(t, leftovers(t, dir, "tasks.json"), "%s left a lock or temporary file", cmd)
				assert.NoFileExists(t, planOf(t, dir, "tasks.json", "").Store(), "%s opened the run store", cmd)
			}
		})
	}
}

// clipped returns the first 4 KiB of s, enough for every message above and
// short enough to print when an assertion fails.
func clipped(s string) string {
	if len(s) > 4096 {
		return s[:4096]
	}
	return s
}

// TestBOMFileRuns checks that a valid file starting with a UTF-8 BOM is
// accepted: validate passes, run completes, and the BOM and every other
// byte statgraph does not own are kept.
func TestBOMFileRuns(t *testing.T) {
	t.Parallel()
	content := bom + "{\n  \"tasks\": [\n    {\n      \"id\": 1,\n      \"title\": \"Nothing to do\",\n      \"executor\": {\"command\": [\"true\"]},\n      \"test_cmd\": \"true\"\n    }\n  ]\n}\n"
	dir := newRepo(t, map[string]string{"tasks.json": content})
	file := filepath.Join(dir, "tasks.json")

	r := statgraph(t, dir, "validate", "tasks.json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "is valid: 1 tasks")

	r = statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(got, []byte(bom+"{\n  \"tasks\": [\n    {\n      \"id\": 1,\n      \"title\": \"Nothing to do\",\n")), "BOM and layout kept:\n%q", got)
	assert.Equal(t, "done", readTasksBOM(t, got)["1"].Status)
}

// readTasksBOM decodes tasks.json content that may start with a BOM.
func readTasksBOM(t *testing.T, data []byte) map[string]taskDoc {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plain.json")
	require.NoError(t, os.WriteFile(p, bytes.TrimPrefix(data, []byte(bom)), 0o644))
	return readTasks(t, p)
}

// bigTasks returns a valid tasks file of n chained tasks, about 10 MB,
// except that task bad depends on task bad+1, which depends on it: a cycle.
func bigTasks(n, bad int) string {
	var b strings.Builder
	b.Grow(n * 360)
	b.WriteString("{\n  \"tasks\": [\n")
	pad := strings.Repeat("lorem ipsum ", 25)
	for i := 1; i <= n; i++ {
		dep := i - 1
		if i == bad {
			dep = bad + 1 // which depends on bad: a cycle
		}
		deps := "[]"
		if dep > 0 {
			deps = fmt.Sprintf("[%d]", dep)
		}
		sep := ","
		if i == n {
			sep = ""
		}
		fmt.Fprintf(&b, "    {\"id\": %d, \"title\": \"task %d\", \"description\": %q, \"dependencies\": %s}%s\n", i, i, pad, deps, sep)
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}
