//go:build scale

package tests

// End-to-end tests of the run's flags under run --queue: the unit carries
// the run's limits, the workers apply them, and the run's spend is one
// total in the queue's Postgres.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	openai "github.com/sashabaranov/go-openai"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/internal/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// llmQueueSetup is a repository with the tasks file tasksJSON, its bare
// remote and a queue database.
func llmQueueSetup(t *testing.T, tasksJSON string) queueSetup {
	t.Helper()
	repo := newRepo(t, map[string]string{"tasks.json": tasksJSON, "README": "base\n"})
	remote := filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, "", "clone", "-q", "--bare", repo, remote)
	return queueSetup{repo: repo, remote: remote, db: pgtest.Database(t)}
}

// titleOf returns the title of the task a model request is about.
func titleOf(req openai.ChatCompletionRequest) string {
	for _, m := range req.Messages {
		for _, title := range []string{"Big reply", "Slow plan", "Spend"} {
			if strings.Contains(m.Content, title) {
				return title
			}
		}
	}
	return ""
}

// modelEnv is the environment giving a worker the scripted model m.
func modelEnv(m *llmtest.Server) []string {
	return []string{"OPENAI_BASE_URL=" + m.BaseURL(), "OPENAI_API_KEY=sk-test", "STATGRAPH_MODEL=test-model"}
}

// Every run flag reaches the workers through the unit: --task-timeout
// fails a task on a worker at its deadline, --max-response-bytes refuses a
// larger reply, --request-timeout gives up on a slow request (and the
// retry succeeds), --keep-workspaces keeps a finished task's workspace on
// its worker; each worker says the limits it applies.
func TestQueueRunFlagsHonouredOnWorkers(t *testing.T) {
	const tasksJSON = `{"tasks": [
  {"id": 1, "title": "Sleeps", "executor": {"command": ["sh", "-c", "sleep 120"]}, "test_cmd": "true"},
  {"id": 2, "title": "Big reply", "timeout": "5m", "test_cmd": "true"},
  {"id": 3, "title": "Kept", "timeout": "5m", "executor": {"command": ["sh", "-c", "echo kept > keep-3.txt"]}, "test_cmd": "test -f keep-3.txt"},
  {"id": 4, "title": "Slow plan", "timeout": "5m", "test_cmd": "test -f out.txt"}
]}
`
	m := llmtest.NewServer(t)
	var mu sync.Mutex
	slowPlans := 0
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		title := titleOf(req)
		if len(req.Tools) == 0 { // a planner call
			switch title {
			case "Big reply":
				return llmtest.Text(`{"summary":"`+strings.Repeat("x", 8000)+`","steps":["a"]}`, 10)
			case "Slow plan":
				mu.Lock()
				slowPlans++
				first := slowPlans == 1
				mu.Unlock()
				r := llmtest.Text(`{"summary":"write","steps":["write out.txt"],"files":["out.txt"],"test_strategy":"test -f"}`, 10)
				if first {
					r.Delay = 30 * time.Second // past --request-timeout: given up on, then retried
				}
				return r
			}
			return llmtest.Text(`{"summary":"do it","steps":["do it"],"files":["out.txt"],"test_strategy":"run the test"}`, 10)
		}
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return llmtest.ToolCalls(10, llmtest.Finish("wrote out.txt"))
		}
		return llmtest.ToolCalls(10, llmtest.WriteFile("out.txt", "ok\n"))
	})
	s := llmQueueSetup(t, tasksJSON)
	workers := []*worker{startWorkerEnv(t, s, "60s", 2, modelEnv(m)...), startWorkerEnv(t, s, "60s", 2, modelEnv(m)...)}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, s.repo, "run", "--queue", s.db, "--remote", s.remote, "--plain", noSandbox,
		"--task-timeout", "3s", "--request-timeout", "2s", "--max-response-bytes", "4000", "--keep-workspaces", "tasks.json")
	require.NoError(t, cmd.Start())
	r := wait(t, cmd.Wait(), stdout, stderr)
	require.Equal(t, 1, r.code, "two tasks fail; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	got := readTasks(t, filepath.Join(s.repo, "tasks.json"))
	assert.Equal(t, "failed", got["1"].Status)
	assert.Contains(t, got["1"].StatusReason, "deadline of 3s passed", "--task-timeout on the worker")
	assert.Equal(t, "failed", got["2"].Status)
	assert.Contains(t, strings.Join(got["2"].ErrorHistory, "\n")+got["2"].StatusReason, "larger than the cap of 3.9 KiB", "--max-response-bytes on the worker")
	assert.Equal(t, "done", got["3"].Status, "%+v", got["3"])
	assert.Equal(t, "done", got["4"].Status, "%+v", got["4"])
	mu.Lock()
	assert.Equal(t, 2, slowPlans, "--request-timeout: the slow planner request given up on and sent again")
	mu.Unlock()

	// --keep-workspaces: task 3's workspace is still on the worker that ran it.
	kept := 0
	for _, w := range workers {
		filepath.WalkDir(filepath.Join(filepath.Dir(w.stderr), "home"), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Name() == "keep-3.txt" {
				kept++
			}
			return nil
		})
	}
	assert.Equal(t, 1, kept, "task 3's workspace kept on its worker")
	var said int
	for _, w := range workers {
		data, _ := os.ReadFile(w.stderr)
		if strings.Contains(string(data), "limits: no budget, task timeout 3s, request timeout 2s, max response 4000 bytes, workspaces kept") {
			said++
		}
	}
	assert.Positive(t, said, "a worker states the limits it applies")
}

// spendRE finds the task of TestQueueBudgetSharedAcrossWorkers a model
// request is about.
var spendRE = regexp.MustCompile(`Spend (\d)`)

// The run's --budget is one total across its workers, checked before
// every model call. Two workers (one unit at a time each) take units X and
// Y: X's planner call spends 100 tokens, then Y's planner call (checked
// at 100 of 150) spends 100 more; Y's next call is refused at 200,
// although Y's worker spent only 100, and Y ends pending with the reason.
// X's executor call, in flight meanwhile, spends 10 and X's next call is
// refused too. The third unit is refused before any call. The queue
// records 210 tokens; three model calls were made.
func TestQueueBudgetSharedAcrossWorkers(t *testing.T) {
	var ts []string
	for i := 1; i <= 3; i++ {
		ts = append(ts, fmt.Sprintf(`{"id": %d, "title": "Spend %d", "test_cmd": "test -f out.txt"}`, i, i))
	}
	s := llmQueueSetup(t, `{"tasks": [`+strings.Join(ts, ",\n")+`]}`+"\n")
	conn, err := pgx.Connect(context.Background(), s.db)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	// ended waits until unit id has a recorded result.
	ended := func(id string) {
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var n int
			if conn.QueryRow(context.Background(), `SELECT count(*) FROM statgraph_units WHERE unit = $1 AND result IS NOT NULL`, id).Scan(&n) == nil && n > 0 {
				return
			}
		}
		t.Errorf("unit %s has no result after 2 minutes", id)
	}
	m := llmtest.NewServer(t)
	var mu sync.Mutex // guards the three below
	var calls []string
	x, y := "", ""
	xExec := make(chan struct{}) // closed when X's first executor call arrives
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		id := ""
		for _, msg := range req.Messages {
			if sub := spendRE.FindStringSubmatch(msg.Content); sub != nil {
				id = sub[1]
				break
			}
		}
		mu.Lock()
		calls = append(calls, id)
		planner := len(req.Tools) == 0
		first := false
		switch {
		case planner && x == "":
			x = id
		case planner && y == "":
			y = id
		case !planner && id == x && xExec != nil:
			close(xExec)
			xExec, first = nil, true
		}
		wait, other := xExec, y
		mu.Unlock()
		switch {
		case planner && id == other && wait != nil:
			// Y's planner reply waits until X's planner tokens are
			// charged (X's next call is here).
			select {
			case <-wait:
			case <-time.After(2 * time.Minute):
			}
		case first:
			// X's executor call is answered once Y has ended (refused).
			for deadline := time.Now().Add(2 * time.Minute); other == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				mu.Lock()
				other = y
				mu.Unlock()
			}
			ended(other)
		}
		if planner {
			return llmtest.Text(`{"summary":"write","steps":["write out.txt"],"files":["out.txt"],"test_strategy":"test -f"}`, 100)
		}
		return llmtest.ToolCalls(10, llmtest.WriteFile("out.txt", "ok\n"))
	})
	startWorkerEnv(t, s, "60s", 1, modelEnv(m)...)
	startWorkerEnv(t, s, "60s", 1, modelEnv(m)...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, s.repo, "run", "--queue", s.db, "--remote", s.remote, "--plain", noSandbox, "--budget", "150", "--json", "tasks.json")
	require.NoError(t, cmd.Start())
	r := wait(t, cmd.Wait(), stdout, stderr)
	t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	mu.Lock()
	require.NotEmpty(t, x)
	require.NotEmpty(t, y)
	assert.ElementsMatch(t, []string{x, x, y}, calls, "no model call once the run's spend reached its budget")
	mu.Unlock()
	got := readTasks(t, filepath.Join(s.repo, "tasks.json"))
	for i := 1; i <= 3; i++ {
		d := got[fmt.Sprint(i)]
		assert.Equal(t, "pending", d.Status, "task %d: %+v", i, d)
		assert.Contains(t, d.StatusReason, "the run's budget is spent", "task %d", i)
		assert.Regexp(t, `global budget of 150 tokens spent \((200|210) used\)`, d.StatusReason, "task %d", i)
		assert.Nil(t, d.FailedAt, "task %d", i)
	}
	// Each unit's own spend stayed under the budget: only the total did not.
	tokens := map[string]int{}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var u struct {
			ID     string `json:"id"`
			Tokens int    `json:"tokens"`
		}
		require.NoError(t, dec.Decode(&u))
		tokens[u.ID] = u.Tokens
	}
	assert.Equal(t, 110, tokens[x])
	assert.Equal(t, 100, tokens[y])
	var total, limit int64
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT tokens, limit_tokens FROM statgraph_spend`).Scan(&total, &limit))
	assert.Equal(t, int64(210), total)
	assert.Equal(t, int64(150), limit)
	var workersUsed int
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT count(DISTINCT worker) FROM statgraph_units WHERE unit = ANY($1)`, []string{x, y}).Scan(&workersUsed))
	assert.Equal(t, 2, workersUsed, "X and Y ran on two workers")
}

// A coordinator whose units wait with no live worker says so, naming how
// many wait, and --worker-timeout ends the run interrupted with the reason.
func TestQueueNoWorkerWarnsAndTimesOut(t *testing.T) {
	s := newQueueSetup(t, dagTasks(2, "0.05"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, s.repo, "run", "--queue", s.db, "--remote", s.remote, "--plain", noSandbox, "--worker-timeout", "4s", "tasks.json")
	require.NoError(t, cmd.Start())
	r := wait(t, cmd.Wait(), stdout, stderr)
	require.Equal(t, 130, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "no live worker: 1 unit(s) wait in the queue")
	assert.Contains(t, r.stderr, "interrupted: queue: no live worker appeared within --worker-timeout 4s")
	got := readTasks(t, filepath.Join(s.repo, "tasks.json"))
	assert.Equal(t, "interrupted", got["1"].Status)
	assert.Contains(t, got["1"].StatusReason, "no live worker appeared within --worker-timeout 4s")
	assert.Contains(t, []string{"", "pending"}, got["2"].Status, "task 2 never started")
}

// statgraph status --queue lists the workers from their heartbeats: a
// worker holding a unit is alive with the unit and its run's limits, and
// one stopped says so.
func TestQueueStatusListsWorkers(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	s := newQueueSetup(t, []effectTask{{id: 1, passOn: 1, execGate: gate}})
	w := startWorker(t, s, "60s", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, s.repo, "run", "--queue", s.db, "--remote", s.remote, "--plain", noSandbox, "--task-timeout", "10m", "tasks.json")
	require.NoError(t, cmd.Start())
	waitForLine(t, s.log, "exec_1_1", time.Minute)

	st := statgraph(t, s.repo, "status", "--queue", s.db, "tasks.json")
	require.Equal(t, 0, st.code, st.stderr)
	line := ""
	for _, l := range strings.Split(st.stdout, "\n") {
		if strings.HasPrefix(l, w.id[:8]) {
			line = l
		}
	}
	require.NotEmpty(t, line, "worker %s listed:\n%s", w.id, st.stdout)
	assert.Contains(t, line, "alive")
	assert.Contains(t, line, "1 (no budget, task timeout 10m0s")
	// status --json lists the same workers, one {"worker": ...} line each
	// after the tasks' lines.
	st = statgraph(t, s.repo, "status", "--json", "--queue", s.db, "tasks.json")
	require.Equal(t, 0, st.code, st.stderr)
	var listed []workerLine
	for l := range strings.Lines(st.stdout) {
		var wl workerLine
		require.NoError(t, json.Unmarshal([]byte(l), &wl), l)
		if wl.Worker != nil {
			listed = append(listed, wl)
		}
	}
	require.Len(t, listed, 1, "status --json:\n%s", st.stdout)
	assert.Equal(t, w.id, listed[0].Worker.ID)
	assert.True(t, listed[0].Worker.Alive)
	require.Len(t, listed[0].Worker.Units, 1)
	assert.Equal(t, "1", listed[0].Worker.Units[0].Unit)
	assert.Contains(t, listed[0].Worker.Units[0].Limits, "task timeout 10m0s")

	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	r := wait(t, cmd.Wait(), stdout, stderr)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	require.NoError(t, w.cmd.Process.Signal(os.Interrupt))
	w.cmd.Wait()
	st = statgraph(t, s.repo, "status", "--queue", s.db, "tasks.json")
	require.Equal(t, 0, st.code, st.stderr)
	assert.Regexp(t, w.id[:8]+`\s+stopped`, st.stdout)
	var rows int
	conn, err := pgx.Connect(context.Background(), s.db)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var units []byte
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT count(*), max(units::text) FROM statgraph_workers`).Scan(&rows, &units))
	assert.Equal(t, 1, rows)
	var held []json.RawMessage
	require.NoError(t, json.Unmarshal(units, &held))
	assert.Empty(t, held, "a stopped worker holds nothing")
}

// workerLine is a worker's line of status --json.
type workerLine struct {
	Worker *struct {
		ID    string `json:"id"`
		Alive bool   `json:"alive"`
		Units []struct {
			Unit   string `json:"unit"`
			Limits string `json:"limits"`
		} `json:"units"`
	} `json:"worker"`
}
