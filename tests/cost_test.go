package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// replyCost is the cost at pr of a scripted reply of tokens tokens, split
// as llmtest.Completion splits them (three quarters, rounded down, input).
func replyCost(pr llm.Price, tokens int) float64 {
	in := tokens * 3 / 4
	return (float64(in)*pr.Input + float64(tokens-in)*pr.Output) / 1e6
}

// historyDoc is the part of history --json the cost tests read.
type historyDoc struct {
	CostUSD  *float64 `json:"cost_usd"`
	Tokens   int      `json:"tokens"`
	Warnings []string `json:"warnings"`
	Attempts []struct {
		N     int       `json:"n"`
		Usage llm.Usage `json:"usage"`
	} `json:"attempts"`
}

func historyOf(t *testing.T, dir, id string) historyDoc {
	t.Helper()
	r := statgraph(t, dir, "history", "--json", "--no-diff", id)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	var h historyDoc
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &h), r.stdout)
	return h
}

// statusCosts returns each task's cost_usd from status --json (nil:
// unknown).
func statusCosts(t *testing.T, dir string) map[string]*float64 {
	t.Helper()
	r := statgraph(t, dir, "status", "--json", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	out := map[string]*float64{}
	for l := range strings.Lines(r.stdout) {
		var row struct {
			ID      string   `json:"id"`
			CostUSD *float64 `json:"cost_usd"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &row), l)
		out[row.ID] = row.CostUSD
	}
	return out
}

// TestCostPerAttempt runs tokenTasks (a plan call, then two attempts of a
// write_file and a finish call each, at fixed usages) on the built binary
// and checks the cost of each attempt, of the task (status, history, run
// --json) against the tokens times the prices: the built-in table's, a
// --prices file's over tasks.json's defaults.prices, and none (unknown,
// said once, never $0).
func TestCostPerAttempt(t *testing.T) {
	t.Parallel()
	table, ok := llm.DefaultPrices().Price("gpt-4o")
	require.True(t, ok)
	house := llm.Price{Input: 3, CachedInput: 3, Output: 7}
	for _, tc := range []struct {
		name     string
		model    string
		defaults string // tasks.json's defaults object, "" for none
		file     string // the --prices file, "" for none
		price    *llm.Price
	}{
		{name: "built-in table", model: "gpt-4o", price: &table},
		{name: "prices file over defaults.prices", model: "house-model",
			defaults: `{"prices": {"house-model": {"input": 1, "cached_input": 0.5, "output": 2}}}`,
			file:     `{"house-model": {"input": 3, "output": 7}}`, price: &house},
		{name: "unknown model", model: "house-model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newTokenModel(t)
			file := tokenTasks
			if tc.defaults != "" {
				file = `{"defaults": ` + tc.defaults + `, "tasks": [{"id": 1, "title": "Write the attempt", "max_retries": 3,
  "test_cmd": "grep -q 'attempt 2' out.txt"}]}` + "\n"
			}
			dir := newRepo(t, map[string]string{"tasks.json": file})
			args := []string{"run", "--json", "--model", tc.model}
			if tc.file != "" {
				p := filepath.Join(t.TempDir(), "prices.json")
				require.NoError(t, os.WriteFile(p, []byte(tc.file), 0o644))
				args = append(args, "--prices", p)
			}
			r := statgraphEnv(t, dir, m.env(), append(args, "tasks.json")...)
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			var run struct {
				CostUSD *float64  `json:"cost_usd"`
				Usage   llm.Usage `json:"usage"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &run), r.stdout)
			h := historyOf(t, dir, "1")
			require.Len(t, h.Attempts, 2)
			st := statusCosts(t, dir)
			if tc.price == nil {
				assert.Nil(t, run.CostUSD, "unknown, not $0")
				assert.Nil(t, h.CostUSD)
				assert.Nil(t, st["1"])
				assert.Equal(t, wantTokens, run.Usage.Unpriced)
				assert.Equal(t, 1, strings.Count(r.stderr, "model house-model has no price"), "said once:\n%s", r.stderr)
				table := statgraph(t, dir, "status", "tasks.json")
				assert.Equal(t, "unknown", column(t, table.stdout, "1", "COST"))
				return
			}
			attempt := replyCost(*tc.price, writeTokens) + replyCost(*tc.price, finishTokens)
			task := replyCost(*tc.price, planTokens) + 2*attempt
			t.Logf("attempt $%.7f, task $%.7f", attempt, task)
			for _, a := range h.Attempts {
				assert.InDelta(t, attempt, a.Usage.CostUSD, 1e-12, "attempt %d's cost", a.N)
				assert.Equal(t, writeTokens+finishTokens, a.Usage.Tokens(), "attempt %d's tokens", a.N)
			}
			require.NotNil(t, h.CostUSD)
			assert.InDelta(t, task, *h.CostUSD, 1e-12, "the task's cost in history")
			require.NotNil(t, st["1"])
			assert.InDelta(t, task, *st["1"], 1e-12, "the task's cost in status")
			require.NotNil(t, run.CostUSD)
			assert.InDelta(t, task, *run.CostUSD, 1e-12, "the task's cost in run --json")
		})
	}
}

// passModel is a scripted model under which every LLM task passes its
// first attempt: a plan (planTokens), a write_file of out.txt
// (writeTokens), a finish (finishTokens). write, when set, replaces the
// write_file reply.
func passModel(t *testing.T, write func(llmtest.Reply) llmtest.Reply) *tokenModel {
	m := &tokenModel{Server: llmtest.NewServer(t)}
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		switch {
		case len(req.Tools) == 0:
			return llmtest.Text(`{"summary":"write out.txt","steps":["write out.txt"],"files":["out.txt"],"test_strategy":"test -f"}`, planTokens)
		case req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool:
			return llmtest.ToolCalls(finishTokens, llmtest.Finish("wrote out.txt"))
		}
		r := llmtest.ToolCalls(writeTokens, llmtest.WriteFile("out.txt", "ok\n"))
		if write != nil {
			r = write(r)
		}
		return r
	})
	return m
}

// TestBudgetUSDStopsBetweenTasks: with --budget-usd, the run stops
// starting tasks once its spend reaches the budget: the tasks done stay
// done, the one not started stays pending with the reason, tasks.json is
// whole, and resume runs the rest without redoing anything.
func TestBudgetUSDStopsBetweenTasks(t *testing.T) {
	t.Parallel()
	pr, _ := llm.DefaultPrices().Price("gpt-4o")
	perTask := replyCost(pr, planTokens) + replyCost(pr, writeTokens) + replyCost(pr, finishTokens)
	// Reached by the second task's last call, which the budget allows as
	// it is checked before each call: the third task does not start.
	budget := 2*perTask - replyCost(pr, finishTokens)/2
	m := passModel(t, nil)
	var units []string
	for _, id := range []string{"1", "2", "3"} {
		units = append(units, `{"id": `+id+`, "title": "Write out.txt `+id+`", "test_cmd": "test -f out.txt"}`)
	}
	dir := newRepo(t, map[string]string{"tasks.json": `{"tasks": [` + strings.Join(units, ", ") + "]}\n"})
	r := statgraphEnv(t, dir, m.env(), "run", "-j", "1", "--model", "gpt-4o", "--budget-usd", jsonNumber(budget), "tasks.json")
	require.Equal(t, 1, r.code, "a run stopped by its budget exits 1\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "run stopped: not started: llm: budget exhausted: global budget of $")
	doc := readTasks(t, filepath.Join(dir, "tasks.json")) // whole JSON
	assert.Equal(t, "done", doc["1"].Status)
	assert.Equal(t, "done", doc["2"].Status)
	assert.Equal(t, "pending", doc["3"].Status, "the task not started stays pending")
	assert.Contains(t, doc["3"].StatusReason, "raise --budget-usd")
	assert.Contains(t, doc["3"].StatusReason, "statgraph resume")
	calls := m.Count()
	assert.Equal(t, 6, calls, "two tasks of three calls each, none of the third")

	r = statgraphEnv(t, dir, m.env(), "resume", "-j", "1", "--model", "gpt-4o", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	doc = readTasks(t, filepath.Join(dir, "tasks.json"))
	for _, id := range []string{"1", "2", "3"} {
		assert.Equal(t, "done", doc[id].Status, "task %s", id)
		assert.Empty(t, doc[id].StatusReason, "task %s", id)
	}
	assert.Equal(t, calls+3, m.Count(), "resume ran only the third task")
}

// jsonNumber formats f for a flag.
func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// claudeStandIn is a stand-in for the claude CLI: it counts its runs in
// $CLAUDE_STATE/runs, writes out.txt and prints a result with a usage of
// 800 input and 200 output tokens and, when COST is not empty, that
// total_cost_usd.
const claudeStandIn = `#!/bin/sh
cat > /dev/null
echo run >> "$CLAUDE_STATE/runs"
echo x > out.txt
printf '{"type":"result","subtype":"success","result":"wrote out.txt",COST"usage":{"input_tokens":800,"output_tokens":200}}\n'
`

// cliRepo returns a repository with tasks (a tasks.json body) and the
// claude stand-in on a PATH it also returns, and its state directory.
func cliRepo(t *testing.T, tasksJSON, cost string) (dir string, env []string, state string) {
	dir = newRepo(t, map[string]string{"tasks.json": tasksJSON, ".gitignore": "/.stubs/\n"})
	stubs := filepath.Join(dir, ".stubs")
	require.NoError(t, os.Mkdir(stubs, 0o755))
	if cost != "" {
		cost = `"total_cost_usd":` + cost + ","
	}
	require.NoError(t, os.WriteFile(filepath.Join(stubs, "claude"), []byte(strings.Replace(claudeStandIn, "COST", cost, 1)), 0o755))
	state = t.TempDir()
	return dir, []string{"PATH=" + stubs + string(os.PathListSeparator) + os.Getenv("PATH"), "CLAUDE_STATE=" + state}, state
}

func runsOf(t *testing.T, state string) int {
	b, err := os.ReadFile(filepath.Join(state, "runs"))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

// TestBudgetStopsAgentCLI: --budget holds for agent CLI tasks too. The
// stand-in's first run spends 1,000 tokens of a budget of 500 and its
// check fails; the budget, checked before each agent CLI start, refuses
// the second attempt (the task is left pending with the reason, no retry
// used) and the second task never starts (pending, with the reason).
func TestBudgetStopsAgentCLI(t *testing.T) {
	t.Parallel()
	tasksJSON := `{"tasks": [
  {"id": 1, "title": "Never passes", "executor": "claude", "max_retries": 3, "test_cmd": ["grep", "-q", "never", "out.txt"]},
  {"id": 2, "title": "Another", "executor": "claude", "test_cmd": ["test", "-f", "out.txt"]}]}` + "\n"
	dir, env, state := cliRepo(t, tasksJSON, "")
	r := statgraphEnv(t, dir, env, "run", noSandbox, "-j", "1", "--budget", "500", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, 1, runsOf(t, state), "the agent CLI does not start again once the budget is spent")
	doc := readTasks(t, filepath.Join(dir, "tasks.json"))
	assert.Equal(t, "pending", doc["1"].Status)
	assert.Contains(t, doc["1"].StatusReason, "the run's budget is spent")
	assert.Contains(t, doc["1"].StatusReason, "global budget of 500 tokens spent (1000 used); raise --budget")
	assert.Equal(t, 1, doc["1"].RetryCount, "the refused attempt used no retry")
	assert.Equal(t, "pending", doc["2"].Status)
	assert.Contains(t, doc["2"].StatusReason, "not started: llm: budget exhausted: global budget of 500 tokens spent")
}

// TestNegativeUsageRefused: a model reply whose usage is negative is not
// counted (it would lower the spend): the task's tokens are those of the
// other calls, and a warning says what was refused, in the run's log and
// the task's history.
func TestNegativeUsageRefused(t *testing.T) {
	t.Parallel()
	m := passModel(t, func(r llmtest.Reply) llmtest.Reply {
		var resp openai.ChatCompletionResponse
		require.NoError(t, json.Unmarshal([]byte(r.Body), &resp))
		resp.Usage = openai.Usage{PromptTokens: -5000, CompletionTokens: 10, TotalTokens: -4990}
		b, err := json.Marshal(resp)
		require.NoError(t, err)
		r.Body = string(b)
		return r
	})
	dir := newRepo(t, map[string]string{"tasks.json": `{"tasks": [{"id": 1, "title": "Write out.txt", "test_cmd": "test -f out.txt"}]}` + "\n"})
	r := statgraphEnv(t, dir, m.env(), "run", "--model", "gpt-4o", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	const warning = "usage reported by a model call refused, not counted: -5000 input tokens is negative"
	assert.Contains(t, r.stderr, warning)
	h := historyOf(t, dir, "1")
	assert.Equal(t, planTokens+finishTokens, h.Tokens, "the negative usage is not subtracted")
	assert.Contains(t, strings.Join(h.Warnings, "\n"), warning)
}

// TestAgentCLIReportedCost: the cost an agent CLI reports (Claude Code's
// total_cost_usd) is the attempt's cost, not the table's price of its
// tokens at the task's model.
func TestAgentCLIReportedCost(t *testing.T) {
	t.Parallel()
	m := passModel(t, nil) // a configured model, which the CLI task never calls
	tasksJSON := `{"tasks": [{"id": 1, "title": "Write out.txt", "executor": "claude", "model": "gpt-4o", "test_cmd": ["test", "-f", "out.txt"]}]}` + "\n"
	dir, env, _ := cliRepo(t, tasksJSON, "0.4321")
	r := statgraphEnv(t, dir, append(env, m.env()...), "run", noSandbox, "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	h := historyOf(t, dir, "1")
	require.Len(t, h.Attempts, 1)
	pr, _ := llm.DefaultPrices().Price("gpt-4o")
	table := (800*pr.Input + 200*pr.Output) / 1e6
	assert.Equal(t, 0.4321, h.Attempts[0].Usage.CostUSD, "the CLI's own cost, not the table's $%.4f", table)
	assert.Equal(t, 1000, h.Attempts[0].Usage.Tokens())
	require.NotNil(t, h.CostUSD)
	assert.InDelta(t, 0.4321, *h.CostUSD, 1e-12, "the task: its attempt at the CLI's price (an agent-CLI task makes no planner call)")
	assert.Empty(t, m.Requests(), "the configured model is not asked for the CLI's plan")
}

// TestCostReportTenTasks is the figure of the cost report: a plan of ten
// tasks over three models, each task a plan call, a write_file call (20 of
// its input tokens from the provider's cache) and a finish call, run on
// the built binary; it prints statgraph's cost of each task and of the run
// next to a hand computation from the price table, and checks they agree.
// Run it with: go test ./tests -run TestCostReportTenTasks -v
func TestCostReportTenTasks(t *testing.T) {
	t.Parallel()
	const cached = 20
	m := passModel(t, func(r llmtest.Reply) llmtest.Reply {
		var resp openai.ChatCompletionResponse
		require.NoError(t, json.Unmarshal([]byte(r.Body), &resp))
		resp.Usage.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: cached}
		b, err := json.Marshal(resp)
		require.NoError(t, err)
		r.Body = string(b)
		return r
	})
	models := []string{"gpt-4o", "gpt-4.1-mini", "claude-sonnet-4-5"}
	var units []string
	for i := 1; i <= 10; i++ {
		units = append(units, `{"id": `+jsonNumber(float64(i))+`, "title": "Write out.txt", "model": "`+models[i%3]+`", "test_cmd": "test -f out.txt"}`)
	}
	dir := newRepo(t, map[string]string{"tasks.json": `{"tasks": [` + strings.Join(units, ",\n") + "]}\n"})
	r := statgraphEnv(t, dir, m.env(), "run", "--model", "gpt-4o", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	t.Logf("statgraph run's summary:\n%s", r.stdout)

	costs := statusCosts(t, dir)
	var report strings.Builder
	report.WriteString("task  model               tokens  statgraph     by hand\n")
	total := 0.0
	for i := 1; i <= 10; i++ {
		id, model := jsonNumber(float64(i)), models[i%3]
		pr, ok := llm.DefaultPrices().Price(model)
		require.True(t, ok)
		writeIn := writeTokens * 3 / 4
		hand := replyCost(pr, planTokens) + replyCost(pr, finishTokens) +
			(float64(writeIn-cached)*pr.Input+float64(cached)*pr.CachedInput+float64(writeTokens-writeIn)*pr.Output)/1e6
		total += hand
		require.NotNil(t, costs[id], "task %s", id)
		fmt.Fprintf(&report, "%-4s  %-18s  %6d  $%.7f  $%.7f\n", id, model, planTokens+writeTokens+finishTokens, *costs[id], hand)
		assert.InDelta(t, hand, *costs[id], 1e-12, "task %s", id)
	}
	fmt.Fprintf(&report, "run                       %6d  %s  $%.7f\n", 10*(planTokens+writeTokens+finishTokens), lastLine(r.stdout), total)
	t.Logf("cost report against a hand computation:\n%s", report.String())
	assert.Contains(t, r.stdout, "cost "+llm.FormatUSD(total, true), "the run's total")
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
