package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// effectTask describes a task whose executor and tests log each run to a
// side-effect file outside the repository, so tests can count how often
// each step ran.
type effectTask struct {
	id        int
	deps      []int
	retries   int    // max_retries; 0 leaves the default
	passOn    int    // the attempt whose tests pass; 0 means never
	execSleep string // how long the executor sleeps after logging, for sleep(1)
	execGate  string // when set, the executor then waits until this file exists
	testSleep string // how long the tests sleep after logging; "" is 0.2
	logBase   bool   // the tests also log "base <i> <commit>": the workspace's base (refs/statgraph/base)
}

// noSandbox is the flag the tests built on effectsTasksJSON pass: their
// executors and checks log to a file outside the workspace, which is what
// the sandbox forbids, so they run unsandboxed (the sandbox has its own
// tests in verifier and tasks, and TestSandboxedRun covers it end to end).
const noSandbox = "--no-sandbox"

// effectsTasksJSON returns a tasks.json for ts logging to logPath. The
// executor of task i logs "exec <i> <attempt>", sleeps, waits for its
// gate file when it has one, and writes
// "attempt <k>" to work-<i>.txt (overwriting, so a repeated attempt leaves
// the same tree); the tests log "verify <i> <k>", sleep 0.2 s and pass when
// work-<i>.txt says the passing attempt.
func effectsTasksJSON(t testing.TB, logPath string, ts []effectTask) string {
	t.Helper()
	type task struct {
		ID         int            `json:"id"`
		Title      string         `json:"title"`
		Deps       []int          `json:"dependencies,omitempty"`
		MaxRetries int            `json:"max_retries,omitempty"`
		Executor   map[string]any `json:"executor"`
		TestCmd    []string       `json:"test_cmd"`
	}
	var out struct {
		Tasks []task `json:"tasks"`
	}
	for _, e := range ts {
		sleep := e.execSleep
		if sleep == "" {
			sleep = "0.2"
		}
		gate := ""
		if e.execGate != "" {
			gate = fmt.Sprintf(`while [ ! -e '%s' ]; do sleep 0.05; done; `, e.execGate)
		}
		exec := fmt.Sprintf(`echo "exec $1 $2" >> '%s'; sleep %s; %secho "attempt $2" > "work-$1.txt"`, logPath, sleep, gate)
		pass := "false"
		if e.passOn > 0 {
			pass = fmt.Sprintf(`grep -qx "attempt %d" work-%d.txt`, e.passOn, e.id)
		}
		tsleep := e.testSleep
		if tsleep == "" {
			tsleep = "0.2"
		}
		verify := fmt.Sprintf(`echo "verify %d $(cat work-%d.txt 2>/dev/null | tr -dc 0-9)" >> '%s'; sleep %s; %s`, e.id, e.id, logPath, tsleep, pass)
		if e.logBase {
			verify = fmt.Sprintf(`echo "base %d $(git rev-parse refs/statgraph/base)" >> '%s'; `, e.id, logPath) + verify
		}
		out.Tasks = append(out.Tasks, task{
			ID: e.id, Title: fmt.Sprintf("task %d", e.id), Deps: e.deps, MaxRetries: e.retries,
			Executor: map[string]any{"command": []string{"sh", "-c", exec, "agent", "{task_id}", "{attempt}"}},
			TestCmd:  []string{"sh", "-c", verify},
		})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	require.NoError(t, err)
	return string(data) + "\n"
}

// effectLines reads the side-effect log; a missing file has no lines.
func effectLines(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(data)), " ", "_"))
}

// countLines counts equal lines.
func countLines(lines []string) map[string]int {
	m := make(map[string]int, len(lines))
	for _, l := range lines {
		m[l]++
	}
	return m
}

// waitForLines waits until the log has at least n lines and returns them.
func waitForLines(t testing.TB, path string, n int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		lines := effectLines(t, path)
		if len(lines) >= n {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("the side-effect log %s has %d lines after %s; want %d:\n%s", path, len(lines), timeout, n, strings.Join(lines, "\n"))
		}
		time.Sleep(2 * time.Millisecond)
	}
}
