package tests

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/gittest"
)

// statgraphEnv runs the binary in dir like statgraph (but for at most five
// minutes: a real agent CLI starts slowly on a loaded machine), with env
// appended to its environment (a later entry wins over an earlier one).
func statgraphEnv(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, dir, args...)
	cmd.Env = childEnv(env...)
	return wait(t, cmd.Run(), stdout, stderr)
}

// summaryRow returns the fields of task id's row in the summary table.
func summaryRow(t testing.TB, stdout, id string) []string {
	t.Helper()
	for l := range strings.Lines(stdout) {
		if f := strings.Fields(l); len(f) >= 5 && f[0] == id {
			return f
		}
	}
	t.Fatalf("no summary row for task %s in:\n%s", id, stdout)
	return nil
}

// standIn is the body of a stand-in agent CLI named NAME: it records its
// arguments (one file each), their count, environment and standard input
// under .rec/NAME in the workspace (the one place the sandbox lets it
// write; the repository's .gitignore keeps .rec out of the attempt's
// commit), creates NAME.txt in the workspace, and prints what the real CLI
// prints in its machine-readable mode.
const standIn = `#!/bin/sh
d=.rec/NAME
mkdir -p "$d"
i=0
for a in "$@"; do i=$((i+1)); printf '%s' "$a" > "$d/arg$i"; done
echo $# > "$d/argc"
env > "$d/env"
cat > "$d/stdin"
echo "made by NAME" > NAME.txt
cat <<'OUT'
OUTPUT
OUT
`

// presetCase is what one preset must do.
type presetCase struct {
	argv    []string // after the program; PROMPT stands for the prompt text, PROMPT_FILE for its file
	stdin   bool     // the prompt arrives on standard input
	env     []string // variables it must get
	noEnv   []string // variables it must not get
	output  string   // what the stand-in prints
	tokens  string   // the tokens the summary shows
	summary string   // "" or the final message the attempt records
	span    [2]int64 // the input and output tokens on its agent span; zeros for none
}

var presetCases = map[string]presetCase{
	"claude": {
		argv: []string{"-p", "--output-format", "json", "--permission-mode", "bypassPermissions"}, stdin: true,
		env: []string{"ANTHROPIC_API_KEY=ak-1", "CLAUDE_CONFIG_DIR=/cfg/claude"}, noEnv: []string{"OPENAI_API_KEY"},
		output: `{"type":"result","subtype":"success","is_error":false,"result":"claude made it","usage":{"input_tokens":100,"output_tokens":20}}`,
		tokens: "120", span: [2]int64{100, 20},
	},
	"codex": {
		argv: []string{"exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "-"}, stdin: true,
		env: []string{"OPENAI_API_KEY=ok-1", "OPENAI_BASE_URL=http://model.example/v1", "CODEX_HOME=/cfg/codex"}, noEnv: []string{"ANTHROPIC_API_KEY"},
		output: `{"type":"thread.started","thread_id":"t"}
{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":100,"output_tokens":30}}`,
		tokens: "230", span: [2]int64{200, 30},
	},
	"aider": {
		argv: []string{"--yes-always", "--no-auto-commits", "--no-check-update", "--no-pretty", "--no-stream", "--message-file", "PROMPT_FILE"},
		env:  []string{"AIDER_MODEL=gpt-x", "OPENAI_API_KEY=ok-1", "ANTHROPIC_API_KEY=ak-1", "GEMINI_API_KEY=gk-1"}, noEnv: []string{"CODEX_HOME"},
		output: "Tokens: 1.2k sent, 80 received. Cost: $0.0040 message, $0.0040 session.\nTokens: 15k sent, 2.1k cache write, 1.2k cache hit, 300 received.",
		tokens: "16580", span: [2]int64{16200, 380},
	},
	"gemini": {
		argv: []string{"--skip-trust", "--yolo", "--output-format", "json", "--prompt", "PROMPT"},
		env:  []string{"GEMINI_API_KEY=gk-1"}, noEnv: []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"},
		output: `{"response":"gemini made it","stats":{"models":{"gemini-2.5-pro":{"tokens":{"prompt":300,"candidates":40,"total":345}}}}}`,
		tokens: "345", span: [2]int64{300, 40},
	},
	"qwen": {
		argv: []string{"--yolo", "--output-format", "json"}, stdin: true,
		env: []string{"OPENAI_API_KEY=ok-1", "OPENAI_BASE_URL=http://model.example/v1", "OPENAI_MODEL=qwen3-coder"}, noEnv: []string{"ANTHROPIC_API_KEY", "GEMINI_API_KEY"},
		output: `[{"type":"system","subtype":"init"},{"type":"result","subtype":"success","result":"qwen made it","usage":{"input_tokens":50,"output_tokens":5}}]`,
		tokens: "55", span: [2]int64{50, 5},
	},
	"opencode": {
		argv: []string{"run", "--format", "json", "--print-logs", "--log-level", "WARN", "PROMPT"},
		env:  []string{"OPENCODE_CONFIG=/cfg/opencode.json", "OPENAI_API_KEY=ok-1"}, noEnv: []string{"CODEX_HOME", "AIDER_MODEL"},
		output: `{"type":"text","part":{"type":"text","text":"opencode made it"}}
{"type":"step_finish","part":{"type":"step-finish","tokens":{"input":60,"output":6,"total":66}}}`,
		tokens: "66", span: [2]int64{60, 6},
	},
}

// TestAgentPresets runs one task per preset, each with a stand-in for the
// CLI on PATH, and checks what each stand-in was given (argv, prompt on
// stdin or as an argument, environment) and the tokens read from its
// output. The CLIs run sandboxed, as they do for users, so what they
// record is the environment a real CLI gets inside the sandbox.
func TestAgentPresets(t *testing.T) {
	t.Parallel()
	var units []string
	for name := range presetCases {
		units = append(units, fmt.Sprintf(`{"id": %q, "title": "Work of %s", "description": "Create %s.txt; it's \"quoted\" and $(not run)", "executor": %q, "test_cmd": ["test", "-f", "%s.txt"]}`, name, name, name, name, name))
	}
	dir := newRepo(t, map[string]string{
		"tasks.json": `{"tasks": [` + strings.Join(units, ",\n") + "]}\n",
		".gitignore": "/.rec/\n/.stubs/\n",
	})
	// The stand-ins live in the repository (ignored, so not in the
	// workspaces): the sandbox hides /tmp, where t.TempDir is, but shows
	// the user's repository read-only.
	stubs := filepath.Join(dir, ".stubs")
	require.NoError(t, os.Mkdir(stubs, 0o755))
	for name, pc := range presetCases {
		src := strings.NewReplacer("NAME", name, "OUTPUT", pc.output).Replace(standIn)
		require.NoError(t, os.WriteFile(filepath.Join(stubs, name), []byte(src), 0o755))
	}
	env := []string{"PATH=" + stubs + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HTTPS_PROXY=http://proxy.example:3128", "no_proxy=localhost", "UNRELATED_SECRET_TOKEN=zzz"}
	for _, pc := range presetCases {
		env = append(env, pc.env...)
	}
	// The run is traced, so that each agent span's tokens can be compared
	// with the summary's.
	recv := newOTLPReceiver(t)
	env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL)
	// --keep-workspaces: the records are in the workspaces.
	r := statgraphEnv(t, dir, env, "run", "-j", "3", "--keep-workspaces", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	plan := planOf(t, dir, "tasks.json", "")
	spans, _, _ := recv.got()

	for name, pc := range presetCases {
		t.Run(name, func(t *testing.T) {
			d := filepath.Join(plan.WorkDir(), name, ".rec", name)
			read := func(f string) string {
				b, err := os.ReadFile(filepath.Join(d, f))
				require.NoError(t, err)
				return string(b)
			}
			stdin := read("stdin")
			if pc.stdin {
				assert.Contains(t, stdin, "Work of "+name, "the prompt arrives on stdin")
				assert.Contains(t, stdin, `it's "quoted" and $(not run)`)
				assert.Contains(t, stdin, "Attempt 1 of 3")
			} else {
				assert.Empty(t, stdin)
			}
			require.Equal(t, fmt.Sprintf("%d\n", len(pc.argv)), read("argc"), "argument count")
			for i, want := range pc.argv {
				got := read(fmt.Sprintf("arg%d", i+1))
				switch want {
				case "PROMPT":
					assert.Contains(t, got, "Work of "+name, "argument %d is the prompt text", i+1)
					assert.Contains(t, got, `it's "quoted" and $(not run)`)
				case "PROMPT_FILE":
					b, err := os.ReadFile(got)
					require.NoError(t, err, "argument %d is the prompt file", i+1)
					assert.Contains(t, string(b), "Work of "+name)
				default:
					assert.Equal(t, want, got, "argument %d", i+1)
				}
			}
			vars := strings.Split(read("env"), "\n")
			for _, want := range append(pc.env, "no_proxy=localhost,127.0.0.1,::1", "NODE_USE_ENV_PROXY=1") {
				assert.Contains(t, vars, want)
			}
			// The user's proxy is out of the closed sandbox's reach: the
			// agent's way out is statgraph's allowlisting proxy.
			assert.NotContains(t, vars, "HTTPS_PROXY=http://proxy.example:3128")
			assert.Regexp(t, `(?m)^HTTPS_PROXY=http://127\.0\.0\.1:\d+$`, read("env"))
			for _, kv := range vars {
				n, _, _ := strings.Cut(kv, "=")
				assert.NotContains(t, append(pc.noEnv, "UNRELATED_SECRET_TOKEN"), n, "%s must not reach %s", n, name)
			}
			row := summaryRow(t, r.stdout, name)
			assert.Equal(t, "done", row[1])
			assert.Equal(t, pc.tokens, row[3], "tokens read from %s's output", name)

			// The agent's span carries the same tokens, as GenAI input and
			// output tokens; a CLI that reports none has neither.
			var agent []*tracepb.Span
			for _, s := range spans {
				if s.Name == "agent "+name {
					agent = append(agent, s)
				}
			}
			require.Len(t, agent, 1, "one attempt, one agent span")
			in, out := intAttr(agent[0].Attributes, "gen_ai.usage.input_tokens"), intAttr(agent[0].Attributes, "gen_ai.usage.output_tokens")
			if pc.span == [2]int64{} {
				assert.Equal(t, [2]int64{-1, -1}, [2]int64{in, out}, "no token attributes")
				return
			}
			assert.Equal(t, pc.span, [2]int64{in, out}, "the agent span's input and output tokens")
		})
	}
	assert.Equal(t, "made by claude\n", gittest.Git(t, dir, "show", plan.Branch("claude")+":claude.txt")+"\n")
	assert.Empty(t, gittest.Git(t, dir, "ls-tree", "-r", "--name-only", plan.Branch("claude"), ".rec"), "the records are not in the published branch")
}

// TestAgentCrashOnStart: an agent CLI that fails at once without touching
// the workspace (here: a rejected key) leaves the task interrupted with the
// reason, its retry count and history as they were: after one ordinary
// failed attempt, then again on the next run while the key is still bad.
// Once fixed, the next run finishes the task within max_retries 2.
func TestAgentCrashOnStart(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	agent := `#!/bin/sh
n=$(cat "$STATE/n" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$STATE/n"
if [ "$n" = 1 ]; then
	echo wrong > done.txt
	echo "wrote the wrong thing"
	exit 0
fi
if [ ! -f "$STATE/fixed" ]; then
	echo "Error: 401 Unauthorized: invalid API key" >&2
	exit 1
fi
echo ok > done.txt
echo "wrote done.txt"
`
	tasksJSON := `{"tasks": [{"id": 1, "title": "Write ok to done.txt", "max_retries": 2, "test_cmd": ["grep", "-q", "ok", "done.txt"],
		"executor": {"command": ["./agent.sh", "{prompt_file}"], "env": ["STATE=` + state + `"], "timeout": "1m"}}]}` + "\n"
	dir := newRepo(t, map[string]string{"agent.sh": agent, "tasks.json": tasksJSON})

	// --no-sandbox: the agent keeps its call count and reads the "fixed"
	// switch in STATE, outside the workspace, across runs; the sandbox
	// would give it an empty private /tmp instead. What is tested is how a
	// crash on start is classified, not the sandbox.
	for run := 1; run <= 2; run++ {
		r := statgraph(t, dir, "run", noSandbox, "tasks.json")
		require.Equal(t, 1, r.code, "run %d\nstdout:\n%s\nstderr:\n%s", run, r.stdout, r.stderr)
		task := readTasks(t, filepath.Join(dir, "tasks.json"))["1"]
		assert.Equal(t, "interrupted", task.Status, "run %d: a crash before the agent did anything is not a failed attempt", run)
		assert.Equal(t, 1, task.RetryCount, "run %d: only the ordinary failed attempt counts", run)
		assert.Len(t, task.ErrorHistory, 1, "run %d", run)
		assert.Nil(t, task.FailedAt)
		for _, want := range []string{"setup problem, no retry used: agent CLI ./agent.sh failed on start: Error: 401 Unauthorized: invalid API key (exit code 1 after", "nothing changed", "statgraph resume"} {
			assert.Contains(t, task.StatusReason, want, "run %d", run)
		}
		// The reason is shown, not only in history: in full on stderr, where
		// progress lines go now; the summary on stdout clips its note.
		assert.Contains(t, r.stderr, "task 1 interrupted: setup problem, no retry used: agent CLI ./agent.sh failed on start: Error: 401 Unauthorized: invalid API key",
			"the reason is shown, not only in history")
		assert.Contains(t, column(t, r.stdout, "1", "NOTE"), "setup", "the summary says it is a setup problem")
	}

	require.NoError(t, os.WriteFile(filepath.Join(state, "fixed"), nil, 0o644))
	r := statgraph(t, dir, "run", noSandbox, "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	task := readTasks(t, filepath.Join(dir, "tasks.json"))["1"]
	assert.Equal(t, "done", task.Status)
	assert.Equal(t, 2, task.RetryCount, "max_retries 2 was enough: the crashes did not count")
}

// TestPreflight: what the tasks need is checked before anything is
// written; each problem exits 2, says what to do, and changes nothing.
func TestPreflight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		executor string
		env      []string
		want     []string
	}{
		{"agent CLI not on PATH", `"codex"`, []string{"PATH=/usr/bin:/bin"},
			[]string{`task 1: agent CLI "codex" is not on PATH`, "npm install -g @openai/codex"}},
		{"command not in the repository", `{"command": ["./missing-agent.sh"]}`, nil,
			[]string{"task 1: agent CLI ./missing-agent.sh not found", "commit it"}},
		{"model server down", `"llm"`, []string{"STATGRAPH_MODEL=m", "OPENAI_BASE_URL=http://127.0.0.1:9/v1"},
			[]string{"the model server at http://127.0.0.1:9/v1 does not answer", "start it"}},
		{"no key for OpenAI", `"llm"`, []string{"STATGRAPH_MODEL=gpt-4.1"},
			[]string{"OPENAI_API_KEY is not set", "OPENAI_BASE_URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tasksJSON := `{"tasks": [{"id": 1, "title": "Anything", "test_cmd": "true", "executor": ` + tc.executor + `}]}` + "\n"
			dir := newRepo(t, map[string]string{"tasks.json": tasksJSON})
			r := statgraphEnv(t, dir, tc.env, "run", "tasks.json")
			require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.stderr, w)
			}
			got, err := os.ReadFile(filepath.Join(dir, "tasks.json"))
			require.NoError(t, err)
			assert.Equal(t, tasksJSON, string(got), "tasks.json is unchanged")
			assert.NoDirExists(t, planOf(t, dir, "tasks.json", "").Dir, "no state directory is created")
			assert.NoDirExists(t, filepath.Join(dir, ".statgraph"))
		})
	}
}

// TestServerDownMidRun: the model server goes away after the plan (it
// answers the executor's first request with a 503 and shuts down, so the
// client's retries find nothing listening). The task is left interrupted
// with its retry unused; once a server is back, run continues it from its
// checkpoint (the executor again, not the planner) and finishes it.
func TestServerDownMidRun(t *testing.T) {
	t.Parallel()
	tasksJSON := `{"tasks": [{"id": 1, "title": "Write hello.txt", "max_retries": 1, "test_cmd": ["test", "-f", "hello.txt"]}]}` + "\n"
	dir := newRepo(t, map[string]string{"tasks.json": tasksJSON})
	plan := llmtest.Text(`{"summary": "write it", "steps": ["write hello.txt"], "files": ["hello.txt"], "test_strategy": "test -f hello.txt"}`, 10)
	first := llmtest.NewServer(t, plan)
	var once sync.Once
	first.SetFallback(func(openai.ChatCompletionRequest) llmtest.Reply {
		once.Do(func() { go first.Close() })
		return llmtest.Error(http.StatusServiceUnavailable, "going down", "")
	})
	model := func(s *llmtest.Server) []string {
		return []string{"STATGRAPH_MODEL=" + llmtest.Model, "OPENAI_BASE_URL=" + s.BaseURL()}
	}

	r := statgraphEnv(t, dir, model(first), "run", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	task := readTasks(t, filepath.Join(dir, "tasks.json"))["1"]
	assert.Equal(t, "interrupted", task.Status)
	assert.Contains(t, task.StatusReason, "server failed or unreachable")
	assert.Contains(t, task.StatusReason, "statgraph resume")
	assert.Equal(t, 0, task.RetryCount)
	assert.Nil(t, task.FailedAt)

	second := llmtest.NewServer(t, llmtest.ToolCalls(10, llmtest.WriteFile("hello.txt", "hi\n"), llmtest.Finish("wrote hello.txt")))
	r = statgraphEnv(t, dir, model(second), "run", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	task = readTasks(t, filepath.Join(dir, "tasks.json"))["1"]
	assert.Equal(t, "done", task.Status)
	assert.Equal(t, 1, task.RetryCount, "max_retries 1 was enough: the outage did not use the retry")
	assert.Equal(t, 1, second.Count(), "the plan was kept: only the executor ran again")
	assert.Equal(t, "hi\n", gittest.Git(t, dir, "show", planOf(t, dir, "tasks.json", "").Branch("1")+":hello.txt")+"\n")
}
