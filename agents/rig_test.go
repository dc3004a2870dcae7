package agents

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/verifier"
)

// feedbackCap is the ChecksVerifier.FeedbackBytes of the rigs: small, so
// the failing test's 200 error lines must be cut.
const feedbackCap = 1500

// rig is one task wired the way the CLI wires it: the LLM planner and
// executor on a scripted model server, a real workspace, and real checks.
type rig struct {
	srv    *modelServer
	ws     *workspace.Workspace
	sleeps *sleeps
	log    *syncBuffer // Config.Log and the llm client's Logf
	cfg    Config
}

// rigOptions adjust a rig before its graph is built.
type rigOptions struct {
	checks []verifier.Check // nil means goChecks
	budget *llm.Budget      // nil means an unlimited one
	client func(*llm.Config)
}

// newRig prepares workspace id and a model server answering queue.
func newRig(t testing.TB, id string, o rigOptions, queue ...answer) *rig {
	t.Helper()
	r := &rig{srv: newModelServer(t, queue...), ws: newWorkspace(t, id, nil), sleeps: &sleeps{}, log: &syncBuffer{}}
	c := r.srv.client(t, r.sleeps, func(cfg *llm.Config) {
		cfg.Logf = func(format string, args ...any) { fmt.Fprintf(r.log, format+"\n", args...) }
		if o.client != nil {
			o.client(cfg)
		}
	})
	if o.budget == nil {
		o.budget = llm.NewBudget(0, nil)
	}
	checks := o.checks
	if checks == nil {
		checks = goChecks()
	}
	r.cfg = Config{
		Planner:   LLMPlanner{Client: c, Workdir: r.ws.Dir(), Budget: o.budget},
		Executor:  LLMExecutor{Client: c, FS: r.ws.FS(), Budget: o.budget},
		Verifier:  ChecksVerifier{Checks: checks, Workdir: r.ws.Dir(), FeedbackBytes: feedbackCap},
		Workspace: r.ws,
		Budget:    o.budget,
		Log:       r.log,
	}
	return r
}

// task is the task every rig works on.
func task(id string) Task {
	return Task{ID: id, Title: "Fix Add", Description: "Add must return a + b.", TestStrategy: "go test ./..."}
}

// run compiles the rig's graph with opts and invokes it on the task with
// maxRetries.
func (r *rig) run(t testing.TB, id string, maxRetries int, opts ...statgraph.CompileOption) (TaskState, error) {
	t.Helper()
	g, err := NewGraph(r.cfg, opts...)
	require.NoError(t, err)
	return g.Invoke(context.Background(), TaskState{Task: task(id), MaxRetries: maxRetries})
}
