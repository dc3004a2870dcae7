package dispatch_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// commitOutside moves branch of repo forward by a commit adding name, as
// someone committing on it while land works would; it never touches a
// working tree.
func commitOutside(t *testing.T, repo, branch, name, body string) string {
	t.Helper()
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir, cmd.Stdin = repo, strings.NewReader(body)
	out, err := cmd.Output()
	require.NoError(t, err)
	git(t, repo, idx, "read-tree", branch)
	git(t, repo, idx, "update-index", "--add", "--cacheinfo", "100644,"+strings.TrimSpace(string(out))+","+name)
	tree := git(t, repo, idx, "write-tree")
	old := git(t, repo, nil, "rev-parse", branch)
	c := git(t, repo, nil, "commit-tree", tree, "-p", old, "-m", "committed outside land")
	git(t, repo, nil, "update-ref", "refs/heads/"+branch, c, old)
	return c
}

// landModel is the scripted model of TestLandResolvedByModel: as task 2
// it writes "two" into shared.txt; asked to land task 2 (its prompt says
// "Land this task" with the conflict), it writes both sides.
func landModel(t *testing.T) (llm.Config, func() []string) {
	s := llmtest.NewServer(t)
	var mu sync.Mutex
	var wrote []string
	s.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Text(`{"summary":"write shared.txt","steps":["write it"],"files":["shared.txt"],"test_strategy":"grep"}`, 5)
		}
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return llmtest.ToolCalls(3, llmtest.Finish("wrote shared.txt"))
		}
		body := "two\n"
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "Land this task") && strings.Contains(m.Content, "<<<<<<<") {
				body = "one\ntwo\n"
			}
		}
		mu.Lock()
		wrote = append(wrote, body)
		mu.Unlock()
		return llmtest.ToolCalls(9, llmtest.WriteFile("shared.txt", body))
	})
	return llm.Config{BaseURL: s.BaseURL(), Model: llmtest.Model, HTTPClient: s.Client()}, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), wrote...)
	}
}

// TestLandResolvedByModel: task 1 (an agent CLI) and task 2 (the model)
// both add shared.txt; landed onto "landing", task 2's merge conflicts and
// the model-backed agent resolves it (its prompt carries the conflict; it
// writes both sides), and the branch moves to the resolved merge. While
// task 1's checked merge waits to be swapped in, someone commits on
// "landing" from outside: the swap fails, land merges task 1 again on the
// new tip and lands it there. Every tip landing takes is one whose checks
// passed: no conflict marker, the outside commit kept.
func TestLandResolvedByModel(t *testing.T) {
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{
		"tasks.json": `{"defaults": {"max_retries": 2},
 "tasks": [
  {"id": 1, "title": "one", "executor": {"command": ["sh", "-c", "echo one > shared.txt"]}, "test_cmd": "grep -q one shared.txt"},
  {"id": 2, "title": "two", "test_cmd": "grep -q two shared.txt && ! grep -q '<<<<<<<' shared.txt"}
 ]}`,
	})
	git(t, dir, nil, "branch", "landing")
	initial := git(t, dir, nil, "rev-parse", "landing")
	mc, wrote := landModel(t)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	path := filepath.Join(dir, "tasks.json")
	f, err := tasks.Load(path, "")
	require.NoError(t, err)
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1, Model: mc, StateDir: t.TempDir(), SandboxHelper: []string{self, "sandbox-init"}}
	sum, err := d.Run(ctx)
	require.NoError(t, err)
	for _, u := range sum.Units {
		require.Equal(t, tasks.StatusDone, u.Status, "%+v", u)
	}

	var outside string
	var once sync.Once
	defer dispatch.SetLandPoint(func(point, unit string) {
		if point == dispatch.PointChecked && unit == "1" {
			once.Do(func() { outside = commitOutside(t, dir, "landing", "outside.txt", "outside\n") })
		}
	})()
	l, err := d.Land(ctx, "landing")
	require.NoError(t, err)
	require.Len(t, l.Units, 2)
	for _, u := range l.Units {
		assert.Equal(t, dispatch.LandLanded, u.State, "task %s: %+v", u.ID, u)
	}
	require.NotEmpty(t, outside, "the target moved between task 1's checked merge and its swap")
	assert.Equal(t, "one\ntwo", git(t, dir, nil, "show", "landing:shared.txt"), "the model resolved the conflict keeping both sides")
	assert.Equal(t, "outside", git(t, dir, nil, "show", "landing:outside.txt"), "the commit made outside is kept")
	assert.Contains(t, wrote(), "one\ntwo\n", "the model-backed agent wrote the resolution")

	tips := strings.Fields(git(t, dir, nil, "reflog", "show", "--format=%H", "landing"))
	require.Equal(t, []string{l.Tip, l.Units[0].Commit, outside, initial}, []string{tips[0], tips[1], tips[2], tips[len(tips)-1]},
		"landing went: initial, the outside commit, task 1 merged on it, task 2 resolved; nothing else")
	require.Len(t, tips, 4)
	git(t, dir, nil, "merge-base", "--is-ancestor", outside, l.Units[0].Commit)
	assert.Equal(t, "one", git(t, dir, nil, "show", l.Units[0].Commit+":shared.txt"))
	for _, tip := range tips[:2] {
		assert.NotContains(t, git(t, dir, nil, "show", tip+":shared.txt"), "<<<<<<<")
	}
}

// TestLandTargetKeepsMoving: a target that moves every time a checked
// merge is about to be swapped in is merged again from each new tip, four
// times, and the unit is then left waiting with the reason (before, its
// record had no state at all); the target holds only the commits made
// outside, and the next land, undisturbed, lands the unit.
func TestLandTargetKeepsMoving(t *testing.T) {
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{"tasks.json": `{"tasks": [
  {"id": 1, "title": "one", "executor": {"command": ["sh", "-c", "echo one > one.txt"]}, "test_cmd": "test -f one.txt"}]}`})
	git(t, dir, nil, "branch", "landing")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	f, err := tasks.Load(filepath.Join(dir, "tasks.json"), "")
	require.NoError(t, err)
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1, StateDir: t.TempDir(), SandboxHelper: []string{self, "sandbox-init"}}
	_, err = d.Run(ctx)
	require.NoError(t, err)

	moves := 0
	restore := dispatch.SetLandPoint(func(point, unit string) {
		if point == dispatch.PointChecked {
			moves++
			commitOutside(t, dir, "landing", "outside.txt", strings.Repeat("x", moves))
		}
	})
	l, err := d.Land(ctx, "landing")
	restore()
	require.NoError(t, err)
	require.Len(t, l.Units, 1)
	assert.Equal(t, dispatch.LandWaiting, l.Units[0].State)
	assert.Contains(t, l.Units[0].Reason, "landing moved 4 times while its merge was checked")
	assert.Equal(t, 4, moves)
	assert.Equal(t, "xxxx", git(t, dir, nil, "show", "landing:outside.txt"))
	assert.Equal(t, "5", git(t, dir, nil, "rev-list", "--count", "landing"), "the initial commit and the four outside ones only")

	l, err = d.Land(ctx, "landing")
	require.NoError(t, err)
	assert.Equal(t, dispatch.LandLanded, l.Units[0].State)
	assert.Equal(t, "one", git(t, dir, nil, "show", "landing:one.txt"))
}
