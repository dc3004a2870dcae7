package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// code is the state of the gate tests: a coder writes versions, validators
// check them, and the gate keeps its bookkeeping in Gate.
type code struct {
	Version int      `json:"version"`
	Seen    []string `json:"seen"`  // the feedback the coder saw on each run
	Tries   []int    `json:"tries"` // the attempt number the coder saw on each run
	Done    bool     `json:"done"`
	Failed  bool     `json:"failed"`
	// Decisions are the gate's decisions, as the nodes after it saw them.
	Decisions []gate.Decision `json:"decisions"`
	Gate      gate.State      `json:"gate"`
}

var gates = gate.For(func(s *code) *gate.State { return &s.Gate })

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
	return c.n[name]
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func coder(calls *counter) func(context.Context, code) (code, error) {
	return func(_ context.Context, s code) (code, error) {
		calls.inc("coder")
		s = sawDecision(s)
		s.Version++
		s.Seen = append(s.Seen, s.Gate.Feedback)
		s.Tries = append(s.Tries, s.Gate.Attempt("gate")+1)
		return s, nil
	}
}

// check returns a validator that passes from its pass-th call on.
func check(calls *counter, name string, pass int) gate.ValidatorFunc[code] {
	return func(_ context.Context, s code) (gate.Verdict, error) {
		if calls.inc(name) >= pass {
			return gate.Verdict{Passed: true}, nil
		}
		return gate.Verdict{Feedback: fmt.Sprintf("%s failed on version %d", name, s.Version), Hints: []string{"look at " + name}}, nil
	}
}

// sawDecision appends the gate's latest decision, if any, to s.Decisions.
func sawDecision(s code) code {
	if o, ok := s.Gate.Outcome("gate"); ok {
		s.Decisions = append(s.Decisions, o.Decision)
	}
	return s
}

func markDone(_ context.Context, s code) (code, error) {
	s = sawDecision(s)
	s.Done = true
	return s, nil
}

func markFailed(_ context.Context, s code) (code, error) {
	s = sawDecision(s)
	s.Failed = true
	return s, nil
}

// pipeline is coder -> review -> test -> gate, the gate retrying coder and
// passing to done.
func pipeline(calls *counter, testPasses int, cfg gate.Config) *statgraph.Builder[code] {
	cfg.Validators, cfg.RetryTarget, cfg.Next = []string{"review", "test"}, "coder", "done"
	b := statgraph.New[code]().AddNode("coder", coder(calls))
	gates.AddValidator(b, "review", check(calls, "review", 1))
	gates.AddValidator(b, "test", check(calls, "test", testPasses))
	gates.Add(b, "gate", cfg)
	b.AddNode("done", markDone).
		AddEdge(statgraph.Start, "coder").AddEdge("coder", "review").AddEdge("review", "test").AddEdge("test", "gate").
		AddEdge("done", statgraph.End)
	if cfg.FailTo == "failed" {
		b.AddNode("failed", markFailed).AddEdge("failed", statgraph.End)
	}
	return b
}

func compile(t *testing.T, b *statgraph.Builder[code], opts ...statgraph.CompileOption) *statgraph.Graph[code] {
	t.Helper()
	g, err := b.Compile(opts...)
	require.NoError(t, err)
	return g
}

func TestGateRetriesUpstreamWithFeedback(t *testing.T) {
	calls := &counter{}
	g := compile(t, pipeline(calls, 3, gate.Config{Hints: []string{"keep functions small"}}))
	s, err := g.Invoke(context.Background(), code{})
	require.NoError(t, err)
	for _, name := range []string{"coder", "review", "test"} {
		require.Equal(t, 3, calls.get(name), "calls of %s", name)
	}
	require.True(t, s.Done)
	require.Equal(t, []int{1, 2, 3}, s.Tries)
	require.Equal(t, "", s.Seen[0])
	require.Equal(t, "[test] test failed on version 1\n- look at test\n\nAttempt 2 of 3 at gate \"gate\": 1 blocking check(s) failed.\nConsider these improvements:\n- keep functions small", s.Seen[1])
	require.Contains(t, s.Seen[2], "[test] test failed on version 2")
	require.Contains(t, s.Seen[2], "Attempt 3 of 3")
	require.NotContains(t, s.Seen[2], "review")
	require.Equal(t, []gate.Decision{gate.Retry, gate.Retry, gate.Passed}, s.Decisions)
	require.Empty(t, s.Gate.Verdicts, "the gate consumed the verdicts")
	require.Empty(t, s.Gate.Feedback, "no feedback is left after a pass")
	require.Equal(t, 0, s.Gate.Attempt("gate"), "a pass ends the retry context")
	require.Empty(t, s.Gate.Warnings)
}

func TestGateExhausted(t *testing.T) {
	t.Run("ends the run with ErrExhausted", func(t *testing.T) {
		calls := &counter{}
		g := compile(t, pipeline(calls, 100, gate.Config{}))
		_, err := g.Invoke(context.Background(), code{})
		require.ErrorIs(t, err, gate.ErrExhausted)
		require.ErrorContains(t, err, `gate "gate" after 3 attempts of coder`)
		require.ErrorContains(t, err, "All 3 attempts failed")
		require.Equal(t, 3, calls.get("coder"))
	})
	t.Run("routes to the failure node", func(t *testing.T) {
		calls := &counter{}
		g := compile(t, pipeline(calls, 100, gate.Config{Policy: gate.Policy{MaxAttempts: 2}, FailTo: "failed"}))
		s, err := g.Invoke(context.Background(), code{})
		require.NoError(t, err)
		require.True(t, s.Failed)
		require.False(t, s.Done)
		require.Equal(t, 2, calls.get("coder"))
		require.Equal(t, []gate.Decision{gate.Retry, gate.Failed}, s.Decisions)
	})
	t.Run("one attempt means no retry", func(t *testing.T) {
		calls := &counter{}
		g := compile(t, pipeline(calls, 100, gate.Config{Policy: gate.Policy{MaxAttempts: 1}, FailTo: "failed"}))
		s, err := g.Invoke(context.Background(), code{})
		require.NoError(t, err)
		require.True(t, s.Failed)
		require.Equal(t, 1, calls.get("coder"))
	})
}

func TestGateEnforcementModes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []gate.Option
		blocks bool
		warns  bool
	}{
		{"default blocks", nil, true, false},
		{"high severity is advisory", []gate.Option{gate.WithSeverity(gate.High)}, false, true},
		{"medium severity is advisory", []gate.Option{gate.WithSeverity(gate.Medium)}, false, true},
		{"low severity is informational", []gate.Option{gate.WithSeverity(gate.Low)}, false, false},
		{"mode overrides severity", []gate.Option{gate.WithSeverity(gate.Low), gate.WithMode(gate.Blocking)}, true, false},
		{"advisory mode", []gate.Option{gate.WithMode(gate.Advisory)}, false, true},
		{"informational mode", []gate.Option{gate.WithMode(gate.Informational)}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := &counter{}
			b := statgraph.New[code]().AddNode("coder", coder(calls))
			gates.AddValidator(b, "lint", check(calls, "lint", 100), tc.opts...)
			gates.Add(b, "gate", gate.Config{Validators: []string{"lint"}, RetryTarget: "coder", Next: "done", FailTo: "failed"})
			b.AddNode("done", markDone).AddNode("failed", markFailed).
				AddEdge(statgraph.Start, "coder").AddEdge("coder", "lint").AddEdge("lint", "gate").
				AddEdge("done", statgraph.End).AddEdge("failed", statgraph.End)
			s, err := compile(t, b).Invoke(context.Background(), code{})
			require.NoError(t, err)
			require.Equal(t, tc.blocks, s.Failed, "failed")
			require.Equal(t, !tc.blocks, s.Done, "done")
			if tc.warns {
				require.Len(t, s.Gate.Warnings, 1)
				require.Equal(t, gate.Warning{Gate: "gate", Validator: "lint", Message: "lint failed on version 1"}, s.Gate.Warnings[0])
			} else {
				require.Empty(t, s.Gate.Warnings)
			}
		})
	}
}

// escalation is the one pause of a run that returned err, its interrupts
// reported by WithResult in res.
func escalation(t *testing.T, err error, res statgraph.Result[code]) gate.Escalation {
	t.Helper()
	require.ErrorIs(t, err, statgraph.ErrInterrupted, "the run pauses")
	require.Len(t, res.Interrupts, 1)
	var esc gate.Escalation
	require.NoError(t, json.Unmarshal(res.Interrupts[0].Payload, &esc))
	return esc
}

func TestGateEscalation(t *testing.T) {
	ctx := context.Background()
	start := func(t *testing.T, testPasses int) (*statgraph.Graph[code], *counter) {
		calls := &counter{}
		g := compile(t, pipeline(calls, testPasses, gate.Config{Policy: gate.Policy{MaxAttempts: 2, OnExhausted: gate.Ask}}),
			statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
		var res statgraph.Result[code]
		_, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResult(&res))
		esc := escalation(t, err, res)
		require.Equal(t, "gate", esc.Gate)
		require.Equal(t, 2, esc.Attempts)
		require.Equal(t, []string{"retry", "skip", "abort"}, esc.Choices)
		require.Equal(t, []string{"[test] test failed on version 2"}, esc.Errors)
		require.Contains(t, esc.Feedback, "All 2 attempts failed")
		return g, calls
	}
	t.Run("retry resets the count", func(t *testing.T) {
		g, calls := start(t, 3)
		s, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("retry"))
		require.NoError(t, err)
		require.True(t, s.Done)
		require.Equal(t, 3, calls.get("coder"))
		require.Equal(t, []int{1, 2, 1}, s.Tries, "the attempt after the reset is the first of a new context")
		require.Contains(t, s.Seen[2], "Attempt 1 of 2 after the attempt count was reset")
		require.Equal(t, []gate.Decision{gate.Retry, gate.Reset, gate.Passed}, s.Decisions)
	})
	t.Run("skip continues with a warning", func(t *testing.T) {
		g, calls := start(t, 100)
		s, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("skip"))
		require.NoError(t, err)
		require.True(t, s.Done)
		require.Equal(t, 2, calls.get("coder"))
		require.Equal(t, []gate.Warning{{Gate: "gate", Message: "gate skipped after 2 failed attempts: test"}}, s.Gate.Warnings)
		require.Equal(t, []gate.Decision{gate.Retry, gate.Skipped}, s.Decisions)
	})
	t.Run("abort ends the run", func(t *testing.T) {
		g, _ := start(t, 100)
		_, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("abort"))
		require.ErrorIs(t, err, gate.ErrAborted)
		require.ErrorContains(t, err, `gate "gate": the escalation after 2 attempts of coder was answered "abort"`)
	})
	t.Run("an unknown answer asks again", func(t *testing.T) {
		g, _ := start(t, 100)
		var res statgraph.Result[code]
		_, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("maybe"), statgraph.WithResult(&res))
		esc := escalation(t, err, res)
		require.Equal(t, `unknown answer "maybe": resume with retry, skip or abort`, esc.Invalid)
		_, err = g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("abort"))
		require.ErrorIs(t, err, gate.ErrAborted)
	})
	t.Run("no answer asks the same question again", func(t *testing.T) {
		g, _ := start(t, 100)
		var res statgraph.Result[code]
		_, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume(nil), statgraph.WithResult(&res))
		esc := escalation(t, err, res)
		require.Empty(t, esc.Invalid, "nothing was refused")
		require.Equal(t, 2, esc.Attempts)
		s, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("skip"))
		require.NoError(t, err)
		require.True(t, s.Done)
	})
}

// TestGateKillAndResumeKeepsCounts stops a run in the coder's second
// attempt; a fresh graph on the same store continues the thread, and the
// gate's count (kept in the checkpointed state) includes the retry before
// the stop.
func TestGateKillAndResumeKeepsCounts(t *testing.T) {
	ctx := context.Background()
	calls := &counter{}
	crash := true
	build := func() *statgraph.Builder[code] {
		b := statgraph.New[code]().AddNode("coder", func(ctx context.Context, s code) (code, error) {
			if calls.inc("coder-calls") == 2 && crash {
				crash = false
				return s, errors.New("killed")
			}
			return coder(calls)(ctx, s)
		})
		gates.AddValidator(b, "test", check(calls, "test", 3))
		gates.Add(b, "gate", gate.Config{Validators: []string{"test"}, RetryTarget: "coder", Next: "done"})
		return b.AddNode("done", markDone).
			AddEdge(statgraph.Start, "coder").AddEdge("coder", "test").AddEdge("test", "gate").AddEdge("done", statgraph.End)
	}
	cp := statgraph.NewMemoryCheckpointer(true)
	_, err := compile(t, build(), statgraph.WithCheckpointer(cp)).Invoke(ctx, code{}, statgraph.WithThread("k"))
	require.ErrorContains(t, err, "killed")

	s, err := compile(t, build(), statgraph.WithCheckpointer(cp)).Invoke(ctx, code{}, statgraph.WithThread("k"))
	require.NoError(t, err)
	require.True(t, s.Done)
	require.Equal(t, []int{1, 2, 3}, s.Tries)
	require.Contains(t, s.Seen[1], "Attempt 2 of 3")
	require.Equal(t, 3, calls.get("coder"), "three runs, plus the stopped one")
	require.Equal(t, []gate.Decision{gate.Retry, gate.Retry, gate.Passed}, s.Decisions)
}

// TestGateBackoffIsStatgraphs: the pause before a retry is the policy's
// statgraph.Backoff, waited with statgraph.Sleep, so cancelling the run
// ends the wait.
func TestGateBackoffIsStatgraphs(t *testing.T) {
	calls := &counter{}
	g := compile(t, pipeline(calls, 100, gate.Config{Policy: gate.Policy{Backoff: statgraph.Backoff{Initial: time.Hour}}}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := g.Invoke(ctx, code{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, `gate "gate": stopped while waiting to retry coder`)
	require.Equal(t, 1, calls.get("coder"))
}

// draw returns g's drawing in format, failing the test if Draw fails.
func draw[S any](t testing.TB, g *statgraph.Graph[S], format string) string {
	t.Helper()
	s, err := g.Draw(format)
	require.NoError(t, err)
	return s
}

// TestGateDrawn: the gate is drawn as its node and conditional edges.
func TestGateDrawn(t *testing.T) {
	g := compile(t, pipeline(&counter{}, 1, gate.Config{FailTo: "failed"}))
	m := draw(t, g, "mermaid")
	for _, e := range []string{"gate -- pass --> done", "gate -. retry .-> coder", "gate -- fail --> failed"} {
		require.Contains(t, m, e, "mermaid:\n%s", m)
	}
	d := draw(t, g, "dot")
	require.Contains(t, d, `"gate" -> "coder"`)
	require.True(t, strings.Contains(draw(t, g, "svg"), ">gate<"), "svg draws the gate node")
}

func TestGateCompileErrors(t *testing.T) {
	b := pipeline(&counter{}, 1, gate.Config{FailTo: "nowhere"})
	_, err := b.Compile()
	require.ErrorContains(t, err, "nowhere")
}

// TestGateParallelValidators: validators running in one step, merged by a
// reducer that uses gate.Merge, all reach the gate; a failing one retries.
func TestGateParallelValidators(t *testing.T) {
	calls := &counter{}
	b := statgraph.New[code]().AddNode("coder", coder(calls)).
		SetReducer(func(cur, upd code) code {
			g := gate.Merge(cur.Gate, upd.Gate)
			if upd.Version != 0 || upd.Done {
				cur = upd // the coder's and done's updates are whole states
			}
			cur.Gate = g
			return cur
		})
	names := []string{"lint", "review", "test", "vet"}
	for i, name := range names {
		gates.AddValidator(b, name, check(calls, name, 1+i%2*2)) // review and vet pass from their third call
		b.AddEdge("coder", name).AddEdge(name, "gate")
	}
	gates.Add(b, "gate", gate.Config{Validators: names, RetryTarget: "coder", Next: "done"})
	b.AddNode("done", markDone).AddEdge(statgraph.Start, "coder").AddEdge("done", statgraph.End)
	s, err := compile(t, b).Invoke(context.Background(), code{})
	require.NoError(t, err)
	require.True(t, s.Done)
	require.Equal(t, 3, calls.get("coder"))
	require.Contains(t, s.Seen[1], "[review] review failed on version 1")
	require.Contains(t, s.Seen[1], "[vet] vet failed on version 1")
	require.Equal(t, []gate.Decision{gate.Retry, gate.Retry, gate.Passed}, s.Decisions)
	require.Empty(t, s.Gate.Verdicts)
}

// TestGateTrace: a gate's decisions show in the trace as its node's
// routes (pass / retry / fail), like any conditional edge.
func TestGateTrace(t *testing.T) {
	var trace strings.Builder
	g := compile(t, pipeline(&counter{}, 2, gate.Config{}))
	_, err := g.Invoke(context.Background(), code{}, statgraph.WithTrace(&trace))
	require.NoError(t, err)
	out := trace.String()
	require.Regexp(t, `route +retry → coder`, out)
	require.Regexp(t, `route +pass → done`, out)
	require.Len(t, regexp.MustCompile(`s\d+ +gate +ok`).FindAllString(out, -1), 2, "one line per gate run:\n%s", out)
}

// TestGateStreamsRoutes: Stream reports a gate's decision as an EventRoute
// from the gate node with the route key.
func TestGateStreamsRoutes(t *testing.T) {
	g := compile(t, pipeline(&counter{}, 2, gate.Config{}))
	var keys []string
	for ev, err := range g.Stream(context.Background(), code{}) {
		require.NoError(t, err)
		if ev.Kind == statgraph.EventRoute && ev.Node == "gate" {
			keys = append(keys, ev.Key+"→"+ev.To)
		}
	}
	require.Equal(t, []string{"retry→coder", "pass→done"}, keys)
}

// TestGateRetryTargetsByValidator: a failed plan check goes back to the
// planner, a failed code check to the coder, each through its own
// conditional edge.
func TestGateRetryTargetsByValidator(t *testing.T) {
	calls := &counter{}
	b := statgraph.New[code]().
		AddNode("planner", func(_ context.Context, s code) (code, error) { calls.inc("planner"); return s, nil }).
		AddNode("coder", coder(calls))
	gates.AddValidator(b, "plan", check(calls, "plan", 2))
	gates.AddValidator(b, "test", check(calls, "test", 3))
	gates.Add(b, "gate", gate.Config{Validators: []string{"plan", "test"}, RetryTarget: "coder",
		RetryTargets: map[string]string{"plan": "planner"}, Next: "done", Policy: gate.Policy{MaxAttempts: 4}})
	b.AddNode("done", markDone).
		AddEdge(statgraph.Start, "planner").AddEdge("planner", "coder").AddEdge("coder", "plan").AddEdge("plan", "test").
		AddEdge("test", "gate").AddEdge("done", statgraph.End)
	g := compile(t, b)
	require.Contains(t, draw(t, g, "mermaid"), "gate -. retry:planner .-> planner")
	s, err := g.Invoke(context.Background(), code{})
	require.NoError(t, err)
	require.True(t, s.Done)
	require.Equal(t, 2, calls.get("planner"), "the failed plan check went back to the planner once")
	require.Equal(t, 3, calls.get("coder"), "then the failed test went back to the coder")
	require.Contains(t, s.Seen[1], "[plan] plan failed", "the planner's retry carries both failures")
	require.Contains(t, s.Seen[1], "[test] test failed")
}

// TestValidatorNodeOptions: a validator's node takes statgraph's node
// options; an error of the check itself is retried by its RetryPolicy, not
// counted as a failed check.
func TestValidatorNodeOptions(t *testing.T) {
	calls := &counter{}
	b := statgraph.New[code]().AddNode("coder", coder(calls))
	gates.AddValidator(b, "flaky", func(context.Context, code) (gate.Verdict, error) {
		if calls.inc("flaky") == 1 {
			return gate.Verdict{}, errors.New("could not start the check")
		}
		return gate.Verdict{Passed: true}, nil
	}, gate.WithNodeOptions(statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Millisecond})))
	gates.Add(b, "gate", gate.Config{Validators: []string{"flaky"}, RetryTarget: "coder", Next: statgraph.End})
	b.AddEdge(statgraph.Start, "coder").AddEdge("coder", "flaky").AddEdge("flaky", "gate")
	s, err := compile(t, b).Invoke(context.Background(), code{})
	require.NoError(t, err)
	require.Equal(t, 2, calls.get("flaky"))
	require.Equal(t, 1, calls.get("coder"), "the check's own error did not retry the coder")
	o, _ := s.Gate.Outcome("gate")
	require.Equal(t, gate.Passed, o.Decision)
}

// TestGateForkFromMidChain: the gate's count lives in the checkpointed
// state, so forking the thread at the checkpoint after its first retry,
// with an edited state, continues that retry context there.
func TestGateForkFromMidChain(t *testing.T) {
	ctx := context.Background()
	calls := &counter{}
	g := compile(t, pipeline(calls, 3, gate.Config{}), statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
	_, err := g.Invoke(ctx, code{}, statgraph.WithThread("f"))
	require.NoError(t, err)
	hist, err := g.History(ctx, "f", 0, 0)
	require.NoError(t, err)
	var at *statgraph.Snapshot[code]
	for i := len(hist) - 1; i >= 0; i-- { // oldest first
		if len(hist[i].Next) == 1 && hist[i].Next[0] == "coder" && hist[i].State.Gate.Attempt("gate") == 1 {
			at = &hist[i]
			break
		}
	}
	require.NotNil(t, at, "a checkpoint after the first retry")
	edited := at.State
	edited.Version = 100
	_, err = g.UpdateState(ctx, "f", edited, "", statgraph.FromCheckpoint(at.CheckpointID))
	require.NoError(t, err)
	s, err := g.Invoke(ctx, code{}, statgraph.WithThread("f"))
	require.NoError(t, err)
	require.True(t, s.Done)
	require.Equal(t, 101, s.Version, "the fork's edited state ran on")
	require.Equal(t, []int{1, 2}, s.Tries, "the attempt after the fork is the retry context's second")
	require.Contains(t, s.Seen[1], "Attempt 2 of 3")
}

// TestGateRetryTargetUpstream: Compile refuses a gate whose retry target
// cannot lead back to it (DESIGN "Attempt context": retries go upstream
// only), or that retries itself, saying what to change.
func TestGateRetryTargetUpstream(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  gate.Config
		want string
	}{
		{"downstream target", gate.Config{RetryTarget: "done"},
			`gate "gate": retry target "done" is not upstream of the gate (no path leads from "done" back to "gate"), so a retry would never run the gate's validators again; set Config.RetryTarget (or RetryTargets) to a node before the gate`},
		{"target by validator", gate.Config{RetryTarget: "coder", RetryTargets: map[string]string{"test": "done"}},
			`gate "gate": retry target "done" is not upstream of the gate`},
		{"the gate itself", gate.Config{RetryTarget: "gate"},
			`gate "gate": retry target is the gate itself`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := statgraph.New[code]().AddNode("coder", coder(&counter{}))
			gates.AddValidator(b, "test", check(&counter{}, "test", 1))
			tc.cfg.Validators, tc.cfg.Next = []string{"test"}, "done"
			gates.Add(b, "gate", tc.cfg)
			b.AddNode("done", markDone).
				AddEdge(statgraph.Start, "coder").AddEdge("coder", "test").AddEdge("test", "gate").AddEdge("done", statgraph.End)
			_, err := b.Compile()
			require.ErrorContains(t, err, tc.want)
		})
	}
}
