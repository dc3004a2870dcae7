package control_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/pgtest"
	"github.com/statgraph/statgraph/queue"
	"github.com/statgraph/statgraph/tasks"
)

// A worker's units are made by Prepare's steps: the Dispatcher a unit runs
// with is the one a run with the worker's settings gets (RunOptions
// .Dispatcher), and a unit whose plan has a state path that is a symbolic
// link is refused before anything runs, as CheckPlan refuses such a run.
func TestPrepareWorkerMakesUnitsAsRunsAre(t *testing.T) {
	url := pgtest.Database(t)
	t.Setenv("STATGRAPH_HOME", t.TempDir())
	file := controltest.NewPlan(t, `{"tasks":[{"id":"1","title":"one","test_cmd":["true"]}]}`)
	f, err := tasks.Load(file, "")
	require.NoError(t, err)
	plan, err := dispatch.NewPlan(filepath.Dir(file), file, "")
	require.NoError(t, err)

	ro := control.RunOptions{Model: llm.Config{Model: "m", BaseURL: "http://127.0.0.1:1"}, NoSandbox: true, AllowEnv: []string{"MY_VAR"},
		GoCacheProg: []string{"prog"}, SandboxHelper: []string{"helper"}, Log: os.Stderr}
	pw, err := control.PrepareWorker(bg, control.WorkerOptions{Queue: url, Run: ro})
	require.NoError(t, err)
	defer pw.Close()
	w := pw.Worker
	require.Equal(t, []string{"MY_VAR"}, w.AllowEnv)
	require.NotNil(t, w.LastAttempt)
	u := queue.UnitSetup{File: f, Plan: plan, Checkpointer: w.Checkpointer}

	d, err := w.Prepare(bg, u)
	require.NoError(t, err)
	want := ro.Dispatcher(f, plan.Repo, w.Checkpointer)
	require.Equal(t, want.Model, d.Model)
	require.Equal(t, want.NoSandbox, d.NoSandbox)
	require.Equal(t, want.AllowEnv, d.AllowEnv)
	require.Equal(t, want.GoCacheProg, d.GoCacheProg)
	require.Equal(t, want.SandboxHelper, d.SandboxHelper)
	require.Equal(t, plan.Repo, d.Repo)
	require.Same(t, f, d.File)

	require.NoError(t, os.MkdirAll(filepath.Dir(plan.WorkDir()), 0o755))
	require.NoError(t, os.Symlink(t.TempDir(), plan.WorkDir()))
	_, err = w.Prepare(bg, u)
	require.ErrorContains(t, err, "the unit was not run")
	kind, _ := control.Classify(err, control.Words{})
	require.Equal(t, control.KindRefused, kind)
}
