package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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

// parkTasks are three independent LLM tasks whose check passes once the
// model wrote "ok".
const parkTasks = `{"tasks": [
  {"id": 1, "title": "Task one", "test_cmd": "grep -q ok out.txt"},
  {"id": 2, "title": "Task two", "test_cmd": "grep -q ok out.txt"},
  {"id": 3, "title": "Task three", "test_cmd": "grep -q ok out.txt"}
]}
`

// limitModel is a scripted model that answers task two's first request
// with limited (a 429) and every other request as a model that plans,
// writes out.txt and finishes. It records when each of task two's
// requests arrived.
type limitModel struct {
	*llmtest.Server
	mu    sync.Mutex // guards times
	times []time.Time
}

func newLimitModel(t testing.TB, limited llmtest.Reply) *limitModel {
	m := &limitModel{Server: llmtest.NewServer(t)}
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		two := false
		for _, msg := range req.Messages {
			two = two || strings.Contains(msg.Content, "Task two")
		}
		if two {
			m.mu.Lock()
			m.times = append(m.times, time.Now())
			first := len(m.times) == 1
			m.mu.Unlock()
			if first {
				return limited
			}
		}
		switch {
		case len(req.Tools) == 0:
			return llmtest.Text(`{"summary":"write ok","steps":["write out.txt"],"files":["out.txt"],"test_strategy":"grep"}`, 10)
		case req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool:
			return llmtest.ToolCalls(10, llmtest.Finish("wrote out.txt"))
		}
		return llmtest.ToolCalls(10, llmtest.WriteFile("out.txt", "ok\n"))
	})
	return m
}

// twoTimes returns when task two's first (limited) request and the one
// after it arrived.
func (m *limitModel) twoTimes(t testing.TB) (limited, next time.Time) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	require.GreaterOrEqual(t, len(m.times), 2, "task two was asked again after its limit")
	return m.times[0], m.times[1]
}

func (m *limitModel) env() []string {
	return []string{"OPENAI_BASE_URL=" + m.BaseURL(), "OPENAI_API_KEY=test-key"}
}

// TestParkOnRetryAfter: a 429 with Retry-After: 3 on one task of three
// parks it (the run waits with every runnable task parked, saying so)
// while the others finish; the run starts it again by itself no earlier
// than the reset, and it ends done with its retries untouched (one
// verification, as if no limit had been met).
func TestParkOnRetryAfter(t *testing.T) {
	t.Parallel()
	m := newLimitModel(t, llmtest.Error(http.StatusTooManyRequests, "Rate limit reached for requests", "rate_limit_exceeded").WithHeader("Retry-After", "3"))
	dir := newRepo(t, map[string]string{"tasks.json": parkTasks})
	r := statgraphEnv(t, dir, m.env(), "run", "--model", "scripted", "--park-after", "1s", "-j", "3", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "task 2 parked: parked until", "the park is shown with its reset time")
	assert.Contains(t, r.stderr, "every runnable task is parked")
	limited, next := m.twoTimes(t)
	assert.GreaterOrEqual(t, next.Sub(limited), 3*time.Second, "task two was not asked again before its reset")
	got := readTasks(t, dir+"/tasks.json")
	for _, id := range []string{"1", "2", "3"} {
		assert.Equal(t, "done", got[id].Status, "task %s", id)
		assert.Equal(t, 1, got[id].RetryCount, "task %s: one verification, no retry used", id)
		assert.Empty(t, got[id].ErrorHistory, "task %s", id)
	}
	assert.NotContains(t, readFile(t, dir+"/tasks.json"), "parked_until", "parked_until goes once the task ran")
}

// TestParkSurvivesKill: with the run killed (SIGKILL) while a task is
// parked, statgraph status shows it parked with its reset time, and the
// next statgraph run waits for that time and finishes it, retries
// untouched.
func TestParkSurvivesKill(t *testing.T) {
	t.Parallel()
	m := newLimitModel(t, llmtest.Error(http.StatusTooManyRequests, "Rate limit reached for requests", "rate_limit_exceeded").WithHeader("Retry-After", "8"))
	dir := newRepo(t, map[string]string{"tasks.json": parkTasks})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, _, _ := command(ctx, dir, "run", "--model", "scripted", "--park-after", "1s", "-j", "3", "tasks.json")
	cmd.Env = append(cmd.Env, m.env()...)
	require.NoError(t, cmd.Start())
	var parked statusRow
	for deadline := time.Now().Add(2 * time.Minute); ; {
		require.True(t, time.Now().Before(deadline), "task 2 was never shown parked")
		// Killed once only task two is left, parked: this tests the park's
		// durability, not a kill while task one or three publishes.
		row, ok := statusRowOf(t, dir, "2")
		one, ok1 := statusRowOf(t, dir, "1")
		three, ok3 := statusRowOf(t, dir, "3")
		if ok && ok1 && ok3 && row.Status == "parked" && one.Status == "done" && three.Status == "done" {
			parked = row
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGKILL))
	cmd.Wait()
	require.NotNil(t, parked.ParkedUntil, "status --json gives the reset time")
	limited, _ := func() (time.Time, int) { m.mu.Lock(); defer m.mu.Unlock(); return m.times[0], len(m.times) }()
	assert.WithinDuration(t, limited.Add(8*time.Second), *parked.ParkedUntil, 2*time.Second)
	assert.Contains(t, parked.Reason, "parked until")

	r := statgraphEnv(t, dir, m.env(), "run", "--model", "scripted", "-j", "3", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	_, next := m.twoTimes(t)
	assert.False(t, next.Before(*parked.ParkedUntil), "task two asked again at %v, before its reset %v", next, *parked.ParkedUntil)
	got := readTasks(t, dir+"/tasks.json")
	assert.Equal(t, "done", got["2"].Status)
	assert.Equal(t, 1, got["2"].RetryCount, "no retry used by the limit")
}

// TestQuotaStopsRun: insufficient_quota has no reset: the first task ends
// interrupted with the reason, no other task starts, and the run exits 1
// saying what to do.
func TestQuotaStopsRun(t *testing.T) {
	t.Parallel()
	m := llmtest.NewServer(t)
	m.SetFallback(llmtest.Always(llmtest.Error(http.StatusTooManyRequests, "You exceeded your current quota, please check your plan and billing details.", "insufficient_quota")))
	dir := newRepo(t, map[string]string{"tasks.json": parkTasks})
	r := statgraphEnv(t, dir, []string{"OPENAI_BASE_URL=" + m.BaseURL(), "OPENAI_API_KEY=test-key"}, "run", "--model", "scripted", "-j", "1", "tasks.json")
	assert.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "quota or credit exhausted")
	assert.Contains(t, r.stderr, "add credit")
	assert.Equal(t, 1, m.Count(), "one request: not retried, and no other task asked the model")
	got := readTasks(t, dir+"/tasks.json")
	assert.Equal(t, "interrupted", got["1"].Status)
	assert.Contains(t, got["1"].StatusReason, "quota or credit exhausted")
	assert.Equal(t, 0, got["1"].RetryCount)
	for _, id := range []string{"2", "3"} {
		assert.Contains(t, []string{"", "pending"}, got[id].Status, "task %s never started", id)
	}
}

// statusRow is one line of statgraph status --json.
type statusRow struct {
	ID          string     `json:"id"`
	Status      string     `json:"status"`
	Reason      string     `json:"reason"`
	ParkedUntil *time.Time `json:"parked_until"`
	Attempts    int        `json:"attempts"`
}

// statusRowOf returns task id's row of statgraph status --json in dir.
func statusRowOf(t *testing.T, dir, id string) (statusRow, bool) {
	t.Helper()
	r := statgraph(t, dir, "status", "--json", "tasks.json")
	if r.code != 0 {
		return statusRow{}, false
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var row statusRow
		if dec.Decode(&row) != nil {
			return statusRow{}, false
		}
		if row.ID == id {
			return row, true
		}
	}
	return statusRow{}, false
}

// readFile returns the content of path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// limitStandIn is the body of a stand-in agent CLI named NAME that meets
// its provider's usage limit on its first run: it prints LIMIT (the real
// CLI's message, in which $UNTIL is the Unix time two seconds on) and
// exits 1, changing nothing. Later runs create NAME.txt and exit 0. Each
// run appends its start time to .rec/NAME/runs in the workspace.
const limitStandIn = `#!/bin/sh
d=.rec/NAME
mkdir -p "$d"
cat > /dev/null
if [ ! -f "$d/runs" ]; then
  date +%s.%N >> "$d/runs"
  UNTIL=$(( $(date +%s) + 2 ))
  cat <<MSG
LIMIT
MSG
  exit 1
fi
date +%s.%N >> "$d/runs"
echo "made by NAME" > NAME.txt
`

// presetLimits are the limit messages of each preset's real CLI.
var presetLimits = map[string]string{
	"claude":   `{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached|$UNTIL"}`,
	"codex":    `{"type":"error","message":"You've hit your usage limit. Upgrade to Pro or try again in 2 seconds."}`,
	"gemini":   `Quota exceeded for quota metric 'Gemini 2.5 Pro Requests'. Please retry in 2s.`,
	"qwen":     `[API Error: 429 Rate limit exceeded. Please try again in 2 seconds]`,
	"opencode": `AI_APICallError: Rate limit reached for requests. Please try again in 2s.`,
}

// TestPresetLimitParks runs one task per preset with a stand-in CLI that
// prints its real CLI's usage limit message on the first run: each task is
// parked, not failed, and the run starts its CLI again after the reset, by
// itself; each ends done with one verification.
func TestPresetLimitParks(t *testing.T) {
	t.Parallel()
	var units []string
	for name := range presetLimits {
		units = append(units, fmt.Sprintf(`{"id": %q, "title": "Work of %s", "executor": %q, "test_cmd": ["test", "-f", "%s.txt"]}`, name, name, name, name))
	}
	dir := newRepo(t, map[string]string{
		"tasks.json": `{"tasks": [` + strings.Join(units, ",\n") + "]}\n",
		".gitignore": "/.rec/\n/.stubs/\n",
	})
	stubs := filepath.Join(dir, ".stubs")
	require.NoError(t, os.Mkdir(stubs, 0o755))
	for name, msg := range presetLimits {
		src := strings.NewReplacer("NAME", name, "LIMIT", msg).Replace(limitStandIn)
		require.NoError(t, os.WriteFile(filepath.Join(stubs, name), []byte(src), 0o755))
	}
	env := []string{"PATH=" + stubs + string(os.PathListSeparator) + os.Getenv("PATH")}
	r := statgraphEnv(t, dir, env, "run", "-j", "5", "--keep-workspaces", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	plan := planOf(t, dir, "tasks.json", "")
	for name := range presetLimits {
		t.Run(name, func(t *testing.T) {
			assert.Contains(t, r.stderr, "task "+name+" parked: parked until")
			row, ok := statusRowOf(t, dir, name)
			require.True(t, ok, "status shows task %s", name)
			assert.Equal(t, "done", row.Status)
			assert.Equal(t, 1, row.Attempts, "the limit used no retry")
			runs := strings.Fields(readFile(t, filepath.Join(plan.WorkDir(), name, ".rec", name, "runs")))
			require.Len(t, runs, 2, "the CLI ran again after its reset")
			first, err := strconv.ParseFloat(runs[0], 64)
			require.NoError(t, err)
			second, err := strconv.ParseFloat(runs[1], 64)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, second-first, 1.0, "started again only after the reset")
		})
	}
}

// TestNotifyAllParked: when every task left waits for a limit's reset
// (tasks one and three done, task two parked), --notify receives an
// "all-parked" notification naming the reset time, and the run's end
// notification follows once task two is done.
func TestNotifyAllParked(t *testing.T) {
	t.Parallel()
	m := newLimitModel(t, llmtest.Error(http.StatusTooManyRequests, "Rate limit reached for requests", "rate_limit_exceeded").WithHeader("Retry-After", "3"))
	l := newListener(t, http.StatusOK)
	dir := newRepo(t, map[string]string{"tasks.json": parkTasks})
	r := statgraphEnv(t, dir, m.env(), "run", "--model", "scripted", "--park-after", "1s", "-j", "3", "--notify", l.URL, "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got := l.events()
	parked, ok := got["all-parked"]
	require.True(t, ok, "an all-parked notification: %+v", got)
	assert.Contains(t, parked.Text, "waits for a usage limit's reset")
	end, ok := got["end"]
	require.True(t, ok, "an end notification: %+v", got)
	assert.Equal(t, map[string]int{"done": 3}, end.Counts)
}
