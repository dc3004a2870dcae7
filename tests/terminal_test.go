package tests

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// terminalTasks run for a few seconds with titles too long for a narrow
// terminal: 1 passes, 2 fails twice, 3 is blocked by 2.
const terminalTasks = `{"tasks": [
 {"id": 1, "title": "A very long title that certainly does not fit into sixty columns of terminal width",
  "executor": {"command": ["sh", "-c", "sleep 1; echo x > a.txt"]}, "test_cmd": "sleep 1; true"},
 {"id": 2, "title": "Second task with a long title, also too long for the narrow terminal", "max_retries": 2,
  "executor": {"command": ["sh", "-c", "sleep 1; echo y > b.txt"]}, "test_cmd": "sleep 0.5; false"},
 {"id": 3, "title": "Third", "dependencies": [2], "executor": {"command": ["true"]}, "test_cmd": "true"}
]}
`

// tmux drives a real terminal: a tmux server of its own (socket in a
// temporary directory) with one session of the given size.
type tmux struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, width, height int, dir, shellCmd string) *tmux {
	t.Helper()
	_, err := exec.LookPath("tmux")
	require.NoError(t, err, "the terminal tests need tmux: apt-get install -y tmux (.ci/run installs it)")
	m := &tmux{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := exec.Command("tmux", "-S", m.socket, "-f", "/dev/null", "new-session", "-d",
		"-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "-c", dir, shellCmd)
	cmd.Env = childEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "tmux new-session: %s", out)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", m.socket, "kill-server").Run() })
	return m
}

// capture returns the visible screen, with lines the terminal wrapped
// joined back into one (-J), so that a wrapped line shows as a long one.
func (m *tmux) capture() string {
	m.t.Helper()
	out, err := exec.Command("tmux", "-S", m.socket, "capture-pane", "-p", "-J").CombinedOutput()
	require.NoError(m.t, err, "tmux capture-pane: %s", out)
	return string(out)
}

// runInTerminal runs statgraph in a tmux terminal width columns wide,
// capturing the screen every 50 ms until the run ends, and returns the
// captures (the last one after the end).
func runInTerminal(t *testing.T, width int, env string) []string {
	t.Helper()
	dir := newRepo(t, map[string]string{"tasks.json": terminalTasks})
	m := newTmux(t, width, 30, dir, env+" '"+bin+"' run tasks.json; echo EXIT=$?; sleep 120")
	var screens []string
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		s := m.capture()
		screens = append(screens, s)
		if strings.Contains(s, "EXIT=") {
			return screens
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the run did not end within a minute; last screen:\n%s", screens[len(screens)-1])
	return nil
}

// TestLiveViewFitsNarrowTerminal runs statgraph in a real terminal 60
// columns wide. On every screen captured during the run, no line is wider
// than the terminal (nothing wrapped), the live table appears once (no
// stale copy left by a redraw that moved up too few lines) and each task
// has one row in it; the running phase is shown while the tests run; the
// final screen holds the last live table and the summary.
func TestLiveViewFitsNarrowTerminal(t *testing.T) {
	t.Parallel()
	const width = 60
	screens := runInTerminal(t, width, "")
	sawVerify := false
	for i, s := range screens {
		for _, line := range strings.Split(s, "\n") {
			assert.LessOrEqual(t, utf8.RuneCountInString(line), width, "screen %d has a line wider than the terminal:\n%q\n%s", i, line, s)
		}
		live := strings.Count(s, "TASK  STATUS   PHASE")
		assert.LessOrEqual(t, live, 1, "screen %d shows the live table %d times:\n%s", i, live, s)
		if live == 1 {
			table := s[strings.Index(s, "TASK  STATUS   PHASE"):]
			if end := strings.Index(table, "\n\n"); end > 0 {
				table = table[:end]
			}
			for _, id := range []string{"1", "2", "3"} {
				rows := 0
				for _, line := range strings.Split(table, "\n") {
					if f := strings.Fields(line); len(f) > 0 && f[0] == id {
						rows++
					}
				}
				assert.LessOrEqual(t, rows, 1, "screen %d: task %s has %d rows:\n%s", i, id, rows, s)
			}
			sawVerify = sawVerify || strings.Contains(table, "running  verify")
		}
	}
	assert.True(t, sawVerify, "a screen shows a task in the verify phase while its tests run")
	last := screens[len(screens)-1]
	assert.Contains(t, last, "EXIT=1")
	assert.Equal(t, 1, strings.Count(last, "TASK  STATUS   PHASE"), "the final live table:\n%s", last)
	assert.Contains(t, last, "TASK  STATUS   ATTEMPTS", "the summary:\n%s", last)
	assert.Contains(t, last, "1 done, 1 failed, 1 blocked")
	assert.Contains(t, last, "A very long", "titles are cut, not dropped:\n%s", last)
	assert.NotContains(t, last, "running:", "no plain progress lines on a terminal")
}

// TestDumbTerminalPlainLines: with TERM=dumb the same run prints plain
// progress lines, no live table and no escape sequences.
func TestDumbTerminalPlainLines(t *testing.T) {
	t.Parallel()
	screens := runInTerminal(t, 200, "TERM=dumb")
	last := screens[len(screens)-1]
	assert.Contains(t, last, "EXIT=1")
	assert.NotContains(t, last, "TASK  STATUS   PHASE", "no live table:\n%s", last)
	assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d task 1 running: executing, attempt 1/3`, last)
	assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d task 2 failed: failed after 2 attempts`, last)
	assert.Contains(t, last, "TASK  STATUS   ATTEMPTS", "the summary")
}
