package agents

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
)

// recorderScript is a stand-in agent CLI: it records its arguments (one
// file each), their count, its environment and its standard input in the
// directory that replaces RECDIR, then runs the rest of the script.
const recorderScript = `#!/bin/sh
d=RECDIR
i=0
for a in "$@"; do i=$((i+1)); printf '%s' "$a" > "$d/arg$i"; done
echo $# > "$d/argc"
env > "$d/env"
cat > "$d/stdin"
`

// recorder writes a recorder script followed by tail and returns its path
// and the directory it records in.
func recorder(t *testing.T, tail string) (script, rec string) {
	t.Helper()
	rec = t.TempDir()
	script = filepath.Join(t.TempDir(), "agent")
	src := strings.Replace(recorderScript, "RECDIR", rec, 1) + tail
	require.NoError(t, os.WriteFile(script, []byte(src), 0o755))
	return script, rec
}

func readRec(t *testing.T, rec, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(rec, name))
	require.NoError(t, err)
	return string(b)
}

// TestCommandFormPrompt: {prompt} is the prompt text as one argument,
// whatever it holds, and stdin true gives it on standard input.
func TestCommandFormPrompt(t *testing.T) {
	t.Parallel()
	for _, stdin := range []bool{false, true} {
		t.Run("stdin="+strconv.FormatBool(stdin), func(t *testing.T) {
			t.Parallel()
			script, rec := recorder(t, "echo agent done\n")
			prompts := t.TempDir()
			e := CommandExecutor{Argv: []string{script, "--message", "{prompt}", "{task_id}"}, Workdir: t.TempDir(), PromptDir: prompts, Stdin: stdin}
			s := TaskState{Task: Task{ID: "7", Title: "Quote 'this' and $(that)", Description: "two\nlines; rm -rf /"}, MaxRetries: 2}
			sum, err := e.Execute(context.Background(), s)
			require.NoError(t, err)
			assert.Equal(t, "agent done", sum)

			file, err := os.ReadFile(filepath.Join(prompts, "task-7-attempt-1.md"))
			require.NoError(t, err, "the prompt file is still written")
			prompt := string(file)
			assert.Contains(t, prompt, "Quote 'this' and $(that)")
			assert.Contains(t, prompt, "Attempt 1 of 2")
			assert.Equal(t, "3\n", readRec(t, rec, "argc"), "the prompt is one argument, never split or run through a shell")
			assert.Equal(t, "--message", readRec(t, rec, "arg1"))
			assert.Equal(t, prompt, readRec(t, rec, "arg2"), "{prompt} is the prompt text itself")
			assert.Equal(t, "7", readRec(t, rec, "arg3"))
			if stdin {
				assert.Equal(t, prompt, readRec(t, rec, "stdin"), "stdin: true gives the prompt on standard input")
			} else {
				assert.Empty(t, readRec(t, rec, "stdin"), "without stdin the agent reads /dev/null")
			}
		})
	}
}

// TestCommandFormEnv: the agent gets the proxies always, the variables Env
// names (NAME, PREFIX*, NAME=VALUE), and no other secret. Not parallel: it
// sets the process environment.
func TestCommandFormEnv(t *testing.T) {
	for k, v := range map[string]string{
		"AGENT_SETTING": "one", "AGENTX_A": "a", "AGENTX_B": "b",
		"HTTPS_PROXY": "http://proxy.example:3128", "no_proxy": "localhost,127.0.0.1",
		"UNNAMED_SECRET_TOKEN": "s3cret", "OPENAI_API_KEY": "sk-parent-key",
	} {
		t.Setenv(k, v)
	}
	script, rec := recorder(t, "")
	e := CommandExecutor{
		Argv: []string{script}, Workdir: t.TempDir(), PromptDir: t.TempDir(),
		Env: []string{"AGENT_SETTING", "AGENTX_*", "FIXED=a=b", "MISSING_VAR"},
	}
	_, err := e.Execute(context.Background(), TaskState{Task: task("e1")})
	require.NoError(t, err)
	env := strings.Split(readRec(t, rec, "env"), "\n")
	for _, want := range []string{"AGENT_SETTING=one", "AGENTX_A=a", "AGENTX_B=b", "FIXED=a=b",
		"HTTPS_PROXY=http://proxy.example:3128", "no_proxy=localhost,127.0.0.1"} {
		assert.Contains(t, env, want)
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		assert.NotContains(t, []string{"UNNAMED_SECRET_TOKEN", "OPENAI_API_KEY", "MISSING_VAR"}, name, "only named variables pass: %s", kv)
	}
}

// TestCommandFormTimeout: the executor's timeout ends the agent's process
// group, and the attempt says so.
func TestCommandFormTimeout(t *testing.T) {
	t.Parallel()
	script, _ := recorder(t, "sleep 30\n")
	e := CommandExecutor{Argv: []string{script}, Workdir: t.TempDir(), PromptDir: t.TempDir(), Timeout: 300 * time.Millisecond}
	start := time.Now()
	sum, err := e.Execute(context.Background(), TaskState{Task: task("e2")})
	require.NoError(t, err)
	assert.Contains(t, sum, "timed out after 300ms")
	assert.Less(t, time.Since(start), 10*time.Second)
}

// TestCommandCrashIsInfrastructure: an agent that exits non-zero without
// changing the workspace, quickly or with a fatal error, is an
// infrastructure error; one that changed something, or ran past the crash
// window with no fatal error, is an ordinary failed attempt.
func TestCommandCrashIsInfrastructure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tail   string
		window time.Duration
		infra  string // "" means not an infrastructure error
	}{
		{"crash on start", "echo 'Error: invalid API key' >&2\nexit 1\n", 0, "invalid api key"},
		{"quick exit, no message", "exit 2\n", 0, "exit code 2"},
		{"fatal error after the window", "sleep 0.3\necho 'connect ECONNREFUSED 127.0.0.1:9'\nexit 1\n", 50 * time.Millisecond, "econnrefused"},
		{"changed the workspace", "echo partial > \"$PWD/partial.txt\"\necho 'Error: invalid API key'\nexit 1\n", 0, ""},
		{"slow failure", "sleep 0.3\necho 'tests still fail'\nexit 1\n", 50 * time.Millisecond, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t, "c"+strconv.Itoa(len(tc.name)), nil)
			script, _ := recorder(t, tc.tail)
			e := CommandExecutor{Argv: []string{script}, Workdir: ws.Dir(), PromptDir: t.TempDir(), Workspace: ws, CrashWindow: tc.window}
			sum, err := e.Execute(context.Background(), TaskState{Task: task("c1")})
			if tc.infra == "" {
				require.NoError(t, err)
				assert.Contains(t, sum, "exited with code 1")
				return
			}
			require.Error(t, err)
			ie, ok := AsInfraError(err)
			require.True(t, ok, "want an infrastructure error, got %v", err)
			assert.Contains(t, strings.ToLower(ie.Reason), tc.infra)
			assert.Contains(t, ie.Reason, "failed on start")
			assert.Contains(t, ie.Reason, "nothing changed")
		})
	}
}

// TestCommandUsage: a preset's token usage is charged to the budget and
// its final message becomes the summary.
func TestCommandUsage(t *testing.T) {
	t.Parallel()
	script, _ := recorder(t, `echo 'some progress on stderr' >&2
echo '{"type":"result","subtype":"success","result":"Added Greet","usage":{"input_tokens":100,"cache_read_input_tokens":20,"output_tokens":30}}'
`)
	b := llm.NewBudget(0, nil)
	e := CommandExecutor{Argv: []string{script}, Workdir: t.TempDir(), PromptDir: t.TempDir(), Usage: claudeUsage, Budget: b}
	sum, err := e.Execute(context.Background(), TaskState{Task: task("u1")})
	require.NoError(t, err)
	assert.Equal(t, "Added Greet", sum)
	assert.Equal(t, 150, b.Spent())
}

// TestUsageParsers reads each preset's documented output shape.
func TestUsageParsers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		parse UsageFunc
		out   string
		want  llm.Usage
		final string
	}{
		{"claude", claudeUsage, `{"type":"result","result":"ok","usage":{"input_tokens":10,"output_tokens":5}}`, llm.Usage{Prompt: 10, Completion: 5, Total: 15, Unpriced: 15}, "ok"},
		{"claude with its cost", claudeUsage, `{"type":"result","result":"ok","total_cost_usd":0.0421,"usage":{"input_tokens":10,"cache_read_input_tokens":300,"cache_creation_input_tokens":20,"output_tokens":5}}`,
			llm.Usage{Prompt: 330, Cached: 300, Completion: 5, Total: 335, CostUSD: 0.0421}, "ok"},
		{"qwen array", claudeUsage, "warning line\n" + `[{"type":"system","subtype":"init"},{"type":"assistant","message":{"usage":{"input_tokens":999}}},{"type":"result","result":"done","usage":{"input_tokens":40,"output_tokens":2}}]`, llm.Usage{Prompt: 40, Completion: 2, Total: 42, Unpriced: 42}, "done"},
		{"codex", codexUsage, `{"type":"thread.started","thread_id":"x"}
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":50,"output_tokens":7}}
{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"patched"}}
{"type":"turn.completed","usage":{"input_tokens":20,"output_tokens":3}}`, llm.Usage{Prompt: 120, Cached: 50, Completion: 10, Total: 130, Unpriced: 130}, "patched"},
		{"gemini", geminiUsage, `{"response":"fine","stats":{"models":{"gemini-2.5-pro":{"tokens":{"prompt":70,"candidates":9,"total":85}}}}}`, llm.Usage{Prompt: 70, Completion: 9, Total: 85, Unpriced: 85}, "fine"},
		{"opencode", opencodeUsage, `{"type":"text","part":{"type":"text","text":"hello"}}
{"type":"step_finish","part":{"type":"step-finish","tokens":{"input":17,"output":3,"total":20}}}`, llm.Usage{Prompt: 17, Completion: 3, Total: 20, Unpriced: 20}, "hello"},
		{"opencode with its cost", opencodeUsage, `{"type":"step_finish","part":{"type":"step-finish","cost":0.25,"tokens":{"input":17,"output":3,"total":20}}}
{"type":"step_finish","part":{"type":"step-finish","cost":0.5,"tokens":{"input":1,"output":1,"total":2}}}`, llm.Usage{Prompt: 18, Completion: 4, Total: 22, CostUSD: 0.75}, ""},
		{"gemini indented", geminiUsage, "Warning: 256-color support not detected.\nYOLO mode is enabled.\n{\n  \"session_id\": \"s\",\n" +
			"  \"response\": \"fine\",\n  \"stats\": {\n    \"models\": {\n      \"m\": {\n        \"tokens\": {\"prompt\": 18, \"candidates\": 12, \"total\": 30}\n" +
			"      }\n    }\n  }\n}\n", llm.Usage{Prompt: 18, Completion: 12, Total: 30, Unpriced: 30}, "fine"},
		{"aider", aiderUsage, "Applied edit to a.go\nTokens: 80 sent, 7 received. Cost: $0.00 message, $0.00 session.\n" +
			"Tokens: 2.3k sent, 1.1k cache write, 1.2k cache hit, 108 received.\nTokens: 1.5M sent, 15k received.",
			llm.Usage{Prompt: 1_502_380, Completion: 15_115, Total: 1_517_495, Unpriced: 1_517_495}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The parser reads what the runner keeps of the output.
			var kept jsonLines
			kept.Write([]byte(tc.out))
			out := kept.String()
			if strings.TrimSpace(out) == "" {
				out = tc.out
			}
			u, final, ok := tc.parse(out)
			require.True(t, ok)
			assert.Equal(t, tc.want, u)
			assert.Equal(t, tc.final, final)
		})
	}
	_, _, ok := claudeUsage("plain text, no JSON")
	assert.False(t, ok)
}

// TestAsInfraError: model errors from the setup are infrastructure errors,
// the task's own are not.
func TestAsInfraError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&llm.APIError{Kind: llm.KindAuth, Status: 401}, true},
		{&llm.APIError{Kind: llm.KindConnection}, true},
		{&llm.APIError{Kind: llm.KindServer, Status: 503}, true},
		{llm.ErrNoModel, true},
		{&InfraError{Reason: "agent CLI qwen cannot be started"}, true},
		{&llm.APIError{Kind: llm.KindContextLength, Status: 400}, false},
		{llm.ErrBudget, false},
		{context.Canceled, false},
		{errors.New("tests failed"), false},
	} {
		_, got := AsInfraError(errors.Join(errors.New("task 1 attempt 1: executor"), tc.err))
		assert.Equal(t, tc.want, got, "%v", tc.err)
	}
}

// TestCommandUsageLongOutput: usage is read from all of a long output, not
// only the head and tail the runner keeps: three codex turns separated by
// 100 KiB of progress each, and qwen's one-line array longer than the cap.
func TestCommandUsageLongOutput(t *testing.T) {
	t.Parallel()
	noise := `i=0; while [ $i -lt 1000 ]; do echo "progress line $i ....................................................................................."; i=$((i+1)); done` + "\n"
	turn := `echo '{"type":"turn.completed","usage":{"input_tokens":100,"output_tokens":10}}'` + "\n"
	for _, tc := range []struct {
		name  string
		tail  string
		parse UsageFunc
		want  int
	}{
		{"codex turns", turn + noise + turn + noise + turn, codexUsage, 330},
		{"qwen array", `printf '[{"type":"system","subtype":"init"}'
i=0; while [ $i -lt 2000 ]; do printf ',{"type":"assistant","message":{"content":[{"type":"text","text":"..................................................."}]}}'; i=$((i+1)); done
printf ',{"type":"result","subtype":"success","result":"all done","usage":{"input_tokens":700,"output_tokens":70}}]\n'
`, claudeUsage, 770},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script, _ := recorder(t, tc.tail)
			b := llm.NewBudget(0, nil)
			e := CommandExecutor{Argv: []string{script}, Workdir: t.TempDir(), PromptDir: t.TempDir(), Usage: tc.parse, Budget: b}
			_, err := e.Execute(context.Background(), TaskState{Task: task("u2")})
			require.NoError(t, err)
			assert.Equal(t, tc.want, b.Spent())
		})
	}
}

// TestCommandFormPromptTooLong: a prompt too long for one argument is
// refused with what to use instead, before anything runs.
func TestCommandFormPromptTooLong(t *testing.T) {
	t.Parallel()
	script, rec := recorder(t, "")
	e := CommandExecutor{Argv: []string{script, "{prompt}"}, Workdir: t.TempDir(), PromptDir: t.TempDir()}
	s := TaskState{Task: Task{ID: "8", Title: "long", Details: strings.Repeat("detail ", 20000)}}
	_, err := e.Execute(context.Background(), s)
	require.Error(t, err)
	assert.ErrorContains(t, err, "more than one argument may hold")
	assert.ErrorContains(t, err, `{prompt_file} or with "stdin": true`)
	assert.NoFileExists(t, filepath.Join(rec, "argc"), "the agent did not run")
}
