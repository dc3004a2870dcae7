//go:build scale

package tests

// End-to-end tests of parking and prices under run --queue: the unit
// carries --park-after, --park-max, --park-default and --prices to the
// worker that runs it.

import (
	"context"
	"encoding/json"
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

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// TestQueueParkOnWorkers runs three tasks on two workers. "Limited"'s
// first model call gets a 429 with Retry-After: 3: with --park-after 1s
// (carried to the worker) it is parked, not waited for inside the call;
// the coordinator shows it parked and enqueues it again at the reset, and
// it ends done with its retries untouched. "Beyond"'s calls all get a 429
// with Retry-After: 600: with --park-max 5s the worker ends it
// interrupted at once instead of parking it for ten minutes. "Priced" runs
// on a model with no built-in price: with --prices its cost on the worker
// is its tokens at the file's price, shown by status --json.
func TestQueueParkOnWorkers(t *testing.T) {
	const tasksJSON = `{"tasks": [
  {"id": 1, "title": "Limited", "test_cmd": "test -f out.txt"},
  {"id": 2, "title": "Beyond", "test_cmd": "test -f out.txt"},
  {"id": 3, "title": "Priced", "test_cmd": "test -f out.txt"}
]}
`
	m := llmtest.NewServer(t)
	var mu sync.Mutex // guards limited
	var limited []time.Time
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		title := ""
		for _, msg := range req.Messages {
			for _, s := range []string{"Limited", "Beyond", "Priced"} {
				if strings.Contains(msg.Content, s) {
					title = s
				}
			}
		}
		switch title {
		case "Beyond":
			return llmtest.Error(http.StatusTooManyRequests, "Rate limit reached for requests", "rate_limit_exceeded").WithHeader("Retry-After", "600")
		case "Limited":
			mu.Lock()
			limited = append(limited, time.Now())
			first := len(limited) == 1
			mu.Unlock()
			if first {
				return llmtest.Error(http.StatusTooManyRequests, "Rate limit reached for requests", "rate_limit_exceeded").WithHeader("Retry-After", "3")
			}
		}
		switch {
		case len(req.Tools) == 0:
			return llmtest.Text(`{"summary":"write","steps":["write out.txt"],"files":["out.txt"],"test_strategy":"test -f"}`, 100)
		case req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool:
			return llmtest.ToolCalls(100, llmtest.Finish("wrote out.txt"))
		}
		return llmtest.ToolCalls(100, llmtest.WriteFile("out.txt", "ok\n"))
	})
	s := llmQueueSetup(t, tasksJSON)
	workers := []*worker{startWorkerEnv(t, s, "60s", 2, modelEnv(m)...), startWorkerEnv(t, s, "60s", 2, modelEnv(m)...)}
	prices := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(prices, []byte(`{"test-model": {"input": 1000, "output": 3000}}`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, s.repo, "run", "--queue", s.db, "--remote", s.remote, "--plain", noSandbox,
		"--park-after", "1s", "--park-max", "5s", "--park-default", "2s", "--prices", prices, "tasks.json")
	require.NoError(t, cmd.Start())
	r := wait(t, cmd.Wait(), stdout, stderr)
	require.Equal(t, 1, r.code, "Beyond ends interrupted; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	assert.Contains(t, r.stderr, "task 1 parked: parked until", "the coordinator shows the unit parked on a worker")
	got := readTasks(t, filepath.Join(s.repo, "tasks.json"))
	assert.Equal(t, "done", got["1"].Status, "%+v", got["1"])
	assert.Equal(t, 1, got["1"].RetryCount, "the limit used no retry")
	mu.Lock()
	require.GreaterOrEqual(t, len(limited), 2, "Limited asked again after its reset")
	assert.GreaterOrEqual(t, limited[1].Sub(limited[0]), 3*time.Second, "asked again only after the reset")
	mu.Unlock()
	assert.Equal(t, "interrupted", got["2"].Status, "%+v", got["2"])
	assert.Contains(t, got["2"].StatusReason, "beyond --park-max 5s", "--park-max on the worker")
	assert.Equal(t, "done", got["3"].Status, "%+v", got["3"])

	st := statgraph(t, s.repo, "status", "--json", "--queue", s.db, "tasks.json")
	require.Equal(t, 0, st.code, st.stderr)
	type statusCost struct {
		ID      string   `json:"id"`
		Tokens  int      `json:"tokens"`
		CostUSD *float64 `json:"cost_usd"`
	}
	var row statusCost
	for l := range strings.Lines(st.stdout) {
		var one statusCost
		require.NoError(t, json.Unmarshal([]byte(l), &one), l)
		if one.ID == "3" {
			row = one
		}
	}
	require.Equal(t, 300, row.Tokens, "Priced: three calls of 100 tokens, status --json:\n%s", st.stdout)
	require.NotNil(t, row.CostUSD, "Priced's cost is known: --prices reached the worker\n%s", st.stdout)
	// Each call is 75 input tokens at $1000/M and 25 output at $3000/M.
	assert.InDelta(t, 3*(75*1000+25*3000)/1e6, *row.CostUSD, 1e-9)

	var said int
	for _, w := range workers {
		data, _ := os.ReadFile(w.stderr)
		if strings.Contains(string(data), "park after 1s, park max 5s, park default 2s, prices of 1 models from --prices") {
			said++
		}
	}
	assert.Positive(t, said, "a worker states the park limits and prices it applies")
}
