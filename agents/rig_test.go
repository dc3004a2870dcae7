package agents

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
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
	srv    *llmtest.Server
	ws     *workspace.Workspace
	sleeps *llmtest.SleepRecorder
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
func newRig(t testing.TB, id string, o rigOptions, queue ...llmtest.Reply) *rig {
	t.Helper()
	r := &rig{srv: llmtest.NewServer(t, queue...), ws: newWorkspace(t, id, nil), sleeps: &llmtest.SleepRecorder{}, log: &syncBuffer{}}
	c := newClient(t, r.srv, r.sleeps, func(cfg *llm.Config) {
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

// tokensPerCall is what every scripted model answer of these tests costs.
const tokensPerCall = 100

// newClient returns an llm client of srv with model "test-model", two
// retries and sleeps as its Sleep; edit may adjust the config.
func newClient(t testing.TB, srv *llmtest.Server, sleeps *llmtest.SleepRecorder, edit func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{
		APIKey:     "sk-test-not-a-secret",
		BaseURL:    srv.BaseURL(),
		Model:      llmtest.Model,
		MaxRetries: 2,
		HTTPClient: srv.Client(),
		Sleep:      sleeps.Sleep,
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := llm.New(cfg)
	require.NoError(t, err)
	return c
}

// planAnswer answers the planner with a valid plan.
func planAnswer() llmtest.Reply {
	return llmtest.Text(`{"summary":"make Add add","steps":["change a - b to a + b in add.go"],"files":["add.go"],"test_strategy":"go test ./..."}`, tokensPerCall)
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
