package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// Fixed token usage of the scripted model's replies. An uninterrupted run
// of tokenTasks makes one plan call and, in each of its two attempts, a
// write_file call and a finish call.
const (
	planTokens   = 100
	writeTokens  = 50
	finishTokens = 10
	wantTokens   = planTokens + 2*(writeTokens+finishTokens)
)

// tokenTasks is one LLM task whose check passes once the model has written
// "attempt 2": the first attempt fails, the second passes.
const tokenTasks = `{"tasks": [{"id": 1, "title": "Write the attempt", "max_retries": 3,
  "test_cmd": "grep -q 'attempt 2' out.txt"}]}
`

// tokenModel is a scripted model server for tokenTasks. hold, when set, is
// called when a write_file call of the given attempt arrives (before it is
// answered) and returns how long the reply waits.
type tokenModel struct {
	*llmtest.Server
	mu   sync.Mutex // guards hold
	hold func(attempt int) time.Duration
}

var attemptRE = regexp.MustCompile(`Attempt (\d+) of \d+`)

func newTokenModel(t *testing.T) *tokenModel {
	m := &tokenModel{Server: llmtest.NewServer(t)}
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Text(`{"summary":"write the attempt","steps":["write out.txt"],"files":["out.txt"],"test_strategy":"grep"}`, planTokens)
		}
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return llmtest.ToolCalls(finishTokens, llmtest.Finish("wrote out.txt"))
		}
		attempt := 0
		for _, msg := range req.Messages {
			if sub := attemptRE.FindStringSubmatch(msg.Content); sub != nil {
				attempt, _ = strconv.Atoi(sub[1])
			}
		}
		r := llmtest.ToolCalls(writeTokens, llmtest.WriteFile("out.txt", fmt.Sprintf("attempt %d\n", attempt)))
		m.mu.Lock()
		if m.hold != nil {
			r.Delay = m.hold(attempt)
		}
		m.mu.Unlock()
		return r
	})
	return m
}

// holdOnce makes the first write_file call of attempt answer after delay
// and returns a channel closed when that call arrives.
func (m *tokenModel) holdOnce(attempt int, delay time.Duration) <-chan struct{} {
	arrived := make(chan struct{})
	var once sync.Once
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hold = func(a int) time.Duration {
		if a != attempt {
			return 0
		}
		d := time.Duration(0)
		once.Do(func() { d = delay; close(arrived) })
		return d
	}
	return arrived
}

func (m *tokenModel) env() []string {
	return []string{"OPENAI_BASE_URL=" + m.BaseURL(), "OPENAI_API_KEY=test-key"}
}

// column returns the field named col of unit id's row in a whitespace-
// aligned table (the run summary or statgraph status).
func column(t *testing.T, table, id, col string) string {
	t.Helper()
	var header []string
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "TASK":
			header = f
		case header != nil && len(f) > 0 && f[0] == id:
			for i, h := range header {
				if h == col && i < len(f) {
					return f[i]
				}
			}
		}
	}
	t.Fatalf("no %s of task %s in:\n%s", col, id, table)
	return ""
}

// TestTokensSurviveResume runs an LLM task against a scripted model with a
// fixed usage per reply, uninterrupted, then stopped by Ctrl-C and resumed,
// then killed with SIGKILL mid-call and resumed. The tokens the final run's
// summary shows and the run store keeps (statgraph status) are the same in
// all three: a resumed task counts the tokens of its earlier runs, and the
// model call cut off by the kill is counted once, when it runs again.
func TestTokensSurviveResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		signal syscall.Signal
		// attempt whose write_file call is held, and for how long
		attempt int
		delay   time.Duration
	}{
		{name: "uninterrupted"},
		{name: "Ctrl-C during attempt 1", signal: syscall.SIGINT, attempt: 1, delay: time.Second},
		{name: "kill -9 during attempt 2", signal: syscall.SIGKILL, attempt: 2, delay: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newTokenModel(t)
			dir := newRepo(t, map[string]string{"tasks.json": tokenTasks})
			args := []string{"run", "--model", "scripted", "tasks.json"}
			if tt.signal != 0 {
				arrived := m.holdOnce(tt.attempt, tt.delay)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd, stdout, stderr := command(ctx, dir, args...)
				cmd.Env = append(cmd.Env, m.env()...)
				require.NoError(t, cmd.Start())
				select {
				case <-arrived:
				case <-ctx.Done():
					t.Fatal("the held model call never arrived")
				}
				require.NoError(t, syscall.Kill(cmd.Process.Pid, tt.signal))
				err := cmd.Wait()
				if tt.signal == syscall.SIGINT {
					r := wait(t, err, stdout, stderr)
					require.Equal(t, 130, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
				}
				args[0] = "resume"
			}
			r := statgraphEnv(t, dir, m.env(), args...)
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Equal(t, "2", column(t, r.stdout, "1", "ATTEMPTS"), "the task passes on its second attempt")
			assert.Equal(t, strconv.Itoa(wantTokens), column(t, r.stdout, "1", "TOKENS"), "tokens in the run's summary")

			st := statgraph(t, dir, "status", "tasks.json")
			require.Equal(t, 0, st.code, "stdout:\n%s\nstderr:\n%s", st.stdout, st.stderr)
			assert.Equal(t, strconv.Itoa(wantTokens), column(t, st.stdout, "1", "TOKENS"), "tokens in the run store")
			assert.FileExists(t, planOf(t, dir, "tasks.json", "").Store(), "the run store is kept outside the repository")
			assert.NoDirExists(t, filepath.Join(dir, ".statgraph"), "nothing of the run's state in the repository")
		})
	}
}
