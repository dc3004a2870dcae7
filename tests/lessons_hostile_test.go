package tests

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/secret"
)

// TestLessonCarriesNoSecretOrEscape: a hostile model (the provider, which
// sees the API key on every request) makes task 1's first attempt fail
// with a last line of check output holding the API key, the value of a
// .env that copy_files brought in, an OSC 52 clipboard write and a
// screen clear, and puts the key and the escape in the summary of the
// attempt that passes: the two places a "retry" lesson's text comes
// from. The lesson is recorded and reaches task 2's prompts, but no form
// of either secret is in any request the model server received, in
// lessons.db (its write-ahead log included), in the run store, or in
// `statgraph lessons`, whose output carries no raw control character.
func TestLessonCarriesNoSecretOrEscape(t *testing.T) {
	t.Parallel()
	key, token := newCanary(t), "tok-copy-"+newCanary(t)
	const escapes = "\x1b]52;c;cHduZWQ=\x07\x1b[2J"
	m := llmtest.NewServer(t)
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		prompt := req.Messages[1].Content
		switch {
		case len(req.Tools) == 0:
			return llmtest.Text(`{"summary":"write out.txt","steps":["write out.txt"],"files":["out.txt"],"test_strategy":"sh check.sh"}`, 10)
		case req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool:
			return llmtest.ToolCalls(10, llmtest.Finish("wrote good with "+key+" "+escapes))
		case strings.Contains(prompt, "## Task 1:") && strings.Contains(prompt, "Attempt 1 of"):
			return llmtest.ToolCalls(10, llmtest.WriteFile("out.txt", "bad "+key+" "+token+" "+escapes+"\n"))
		}
		return llmtest.ToolCalls(10, llmtest.WriteFile("out.txt", "good\n"))
	})
	dir := newRepo(t, map[string]string{
		"check.sh": "cat out.txt\ngrep -q good out.txt\n",
		"tasks.json": `{"tasks": [
		{"id": 1, "title": "Write out.txt", "test_cmd": "sh check.sh", "copy_files": [".env"]},
		{"id": 2, "title": "Write out.txt again", "dependencies": [1], "test_cmd": "sh check.sh"}]}
`})
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".env"), []byte("API_TOKEN="+token+"\n"), 0o600))
	state := filepath.Join(t.TempDir(), "state")
	env := []string{"OPENAI_BASE_URL=" + m.BaseURL(), "OPENAI_API_KEY=" + key, "STATGRAPH_HOME=" + state}
	r := statgraphEnv(t, dir, env, "run", "-j", "1", "--model", "gpt-4o", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	var task2 []string
	for _, req := range m.Requests() {
		if p := req.Messages[1].Content; strings.Contains(p, "## Task 2:") {
			task2 = append(task2, p)
		}
	}
	require.NotEmpty(t, task2, "task 2 was planned")
	assert.Contains(t, task2[0], "Lessons from earlier tasks in this repository:\n- In task 1 (Write out.txt), check \"tests\" failed on attempt 1",
		"the lesson reaches task 2's prompt")
	assert.Contains(t, task2[0], "bad "+secret.Marker+" "+secret.Marker, "the lesson's text is the check's line, scrubbed")

	leaks := func(where string, data []byte) {
		t.Helper()
		for _, s := range []string{key, token} {
			for _, f := range secret.Forms(s) {
				if bytes.Contains(data, []byte(f)) {
					t.Errorf("%s holds a secret (as %q)", where, f)
					return
				}
			}
		}
	}
	for i, b := range m.RawBodies() {
		leaks("model request "+strconv.Itoa(i+1), []byte(b))
	}
	// lessons.db and the plan's run store, with their write-ahead logs.
	var stores []string
	require.NoError(t, filepath.WalkDir(state, func(path string, d fs.DirEntry, err error) error {
		if err == nil && (strings.HasSuffix(path, ".db") || strings.HasSuffix(path, ".db-wal")) {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(state, path)
			stores = append(stores, rel)
			leaks(rel, b)
		}
		return err
	}))
	assert.Contains(t, stores, "lessons.db")
	t.Logf("searched %s and %d requests", strings.Join(stores, ", "), len(m.RawBodies()))

	r = statgraphEnv(t, dir, env, "lessons")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stdout, "retry:1")
	leaks("statgraph lessons", []byte(r.stdout))
	assert.NotContains(t, r.stdout, "\x1b", "statgraph lessons prints no raw escape")
	assert.NotContains(t, r.stdout, "\x07")
	assert.Contains(t, r.stdout, `\x1b]52;c;`, "the escape is shown escaped")
}
