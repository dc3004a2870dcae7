package queue

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres"
	"github.com/statgraph/statgraph/tasks"
)

// A worker passes its agents only the variables its own AllowEnv names
// (statgraph worker --allow-env): a unit of a tasks file enqueued with
// "env": ["*"], or naming the worker's OPENAI_API_KEY, is refused (failed,
// with the reason, its agent never started); a unit naming an allowed
// variable runs, and its agent (a command writing its environment to a
// file) gets that variable and not the key. Through the real path: a
// Runner enqueues on PostgreSQL, a Worker takes the job through River.
func TestWorkerPassesOnlyItsAllowEnv(t *testing.T) {
	const key = "sk-worker-test-key-0123456789abcdef"
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("MY_AGENT_VAR", "agent-setting")
	t.Setenv("STATGRAPH_HOME", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pool := openTest(t)

	out := t.TempDir()
	agent := func(id, env string) string {
		return `{"id": ` + id + `, "title": "print the environment", "executor": {"command": ["sh", "-c", "env > ` +
			filepath.Join(out, id) + `"], "env": ` + env + `}}`
	}
	repo := gittest.Repo(t, map[string]string{"tasks.json": `{"tasks": [` + agent("1", `["*"]`) + `, ` +
		agent("2", `["OPENAI_API_KEY"]`) + `, ` + agent("3", `["MY_AGENT_VAR"]`) + `]}`})
	file := filepath.Join(repo, "tasks.json")
	remote := gittest.Clone(t, repo, "--bare")

	st, err := postgres.New(ctx, pool)
	require.NoError(t, err)
	defer st.Close()
	w := &Worker{Pool: pool, ID: uuid.New(), Root: t.TempDir(), Checkpointer: st, AllowEnv: []string{"MY_AGENT_VAR"},
		Prepare: func(_ context.Context, u UnitSetup) (*dispatch.Dispatcher, error) {
			return &dispatch.Dispatcher{File: u.File, Repo: u.Plan.Repo, Checkpointer: u.Checkpointer, NoSandbox: true}, nil
		}}
	client, err := w.Start(ctx, 1, time.Minute)
	require.NoError(t, err)
	defer client.StopAndCancel(context.WithoutCancel(ctx))

	r, err := NewRunner(pool, remote, file)
	require.NoError(t, err)
	plan, err := dispatch.NewPlan(repo, file, "")
	require.NoError(t, err)
	for _, c := range []struct{ id, entry string }{{"1", "*"}, {"2", "OPENAI_API_KEY"}} {
		ran, err := r.RunUnit(ctx, plan, c.id, nil, nil)
		res, branch := ran.Outcome, ran.Branch
		require.NoError(t, err)
		require.Equal(t, tasks.StatusFailed, res.Status, "unit %s: %+v", c.id, res)
		require.Empty(t, branch)
		require.Contains(t, res.Reason, "the executor's env names "+c.entry+", which this worker does not pass")
		require.Contains(t, res.Reason, "--allow-env: MY_AGENT_VAR")
		require.NoFileExists(t, filepath.Join(out, c.id), "unit %s's agent ran", c.id)
	}
	ran, err := r.RunUnit(ctx, plan, "3", nil, nil)
	res := ran.Outcome
	require.NoError(t, err)
	env, err := os.ReadFile(filepath.Join(out, "3"))
	require.NoError(t, err, "unit 3's agent ran: %+v", res)
	require.Contains(t, string(env), "MY_AGENT_VAR=agent-setting")
	require.NotContains(t, string(env), key)
	require.False(t, strings.Contains(string(env), "OPENAI_API_KEY="), "the key's name reached the agent")
}
