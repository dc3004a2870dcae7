package gate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/statgraph/statgraph/internal/clock"
	"github.com/statgraph/statgraph/statgraph"
)

// Verdict is the result of one validator. A validator fills Passed,
// Feedback and optionally Evidence and Hints; AddValidator fills Validator,
// and Severity and Mode from the validator's options where the verdict
// leaves them zero (a verdict can lower its severity, not raise it back to
// Critical), then resolves Mode with Mode.For.
type Verdict struct {
	Validator string   `json:"validator"`
	Passed    bool     `json:"passed"`
	Feedback  string   `json:"feedback,omitempty"` // what is wrong, for the node that is retried
	Severity  Severity `json:"severity,omitempty"`
	Mode      Mode     `json:"mode,omitempty"`
	Evidence  string   `json:"evidence,omitempty"` // e.g. the failing output, kept apart from Feedback
	Hints     []string `json:"hints,omitempty"`    // improvement suggestions, listed in the feedback
	// Key is the input key the verdict was computed for, for a validator
	// with an InputKey; Reused says the node recorded its earlier passing
	// verdict for the same key without running the check.
	Key    string `json:"key,omitempty"`
	Reused bool   `json:"reused,omitempty"`
}

// Warning is a failed check that did not block (an advisory validator's
// failure) or a gate skipped after escalation.
type Warning struct {
	Gate      string `json:"gate"`
	Validator string `json:"validator,omitempty"` // empty for a skipped gate
	Message   string `json:"message"`
}

// Outcome is one decision of a gate.
type Outcome struct {
	Gate     string   `json:"gate"`
	Decision Decision `json:"decision"`
	// Attempt is the failed-attempt count of the retry context after this
	// decision (0 once passed); MaxAttempts its limit.
	Attempt     int `json:"attempt"`
	MaxAttempts int `json:"max_attempts"`
	// Round is State.Decisions after this decision: gates deciding in the
	// same super-step share it (see Merge).
	Round int `json:"round"`
	// Target is the node a retry re-runs (Retry, Reset).
	Target   string    `json:"target,omitempty"`
	Feedback string    `json:"feedback,omitempty"` // the failed checks, aggregated
	Verdicts []Verdict `json:"verdicts,omitempty"` // every verdict the gate weighed
	Warnings []Warning `json:"warnings,omitempty"` // advisory failures and skips
}

// State is the gates' bookkeeping, kept in the graph's state S (see
// Gates) so that checkpoints save it with the rest of the state. The gate
// and validator nodes replace its slices rather than write into them, so
// earlier states stay intact.
type State struct {
	// Verdicts are those recorded since their gate last decided.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Counts are the failed attempts per gate in its retry context.
	Counts []Count `json:"counts,omitempty"`
	// Feedback is the aggregated feedback of the last retry, for the node
	// retried; "" after a pass.
	Feedback string `json:"feedback,omitempty"`
	// Last holds each gate's latest Outcome, which its router follows. Only
	// the latest is kept, so that the state does not grow with every retry.
	Last     []Outcome `json:"last,omitempty"`
	Warnings []Warning `json:"warnings,omitempty"` // every warning, oldest first
	// Decisions counts the rounds of decisions of all gates (gates deciding
	// in one super-step count one); Merge tells a gate's update by it.
	Decisions int `json:"decisions,omitempty"`
	// Tries is the attempt log the attempt context is read from (see
	// Attempts), oldest first, at most Config.KeepTries per gate.
	Tries []Attempt `json:"tries,omitempty"`
	// Kept is the latest verdict of each validator with an InputKey.
	Kept []Verdict `json:"kept,omitempty"`
	// by is the validator whose node produced this state, for Merge; it is
	// not saved, and Merge and the gate clear it.
	by string
}

// Count is one gate's attempts: the failed ones in its current retry
// context (Attempt), and every one over the run (Total).
type Count struct {
	Gate    string `json:"gate"`
	Attempt int    `json:"attempt"`
	Total   int    `json:"total"`
}

// Attempt returns the failed attempts gate has counted in its current retry
// context: 0 before its first failure and after a pass.
func (st *State) Attempt(gate string) int {
	if i := st.count(gate); i >= 0 {
		return st.Counts[i].Attempt
	}
	return 0
}

func (st *State) count(gate string) int {
	return slices.IndexFunc(st.Counts, func(c Count) bool { return c.Gate == gate })
}

// Outcome returns gate's latest outcome, and false when it has decided
// nothing yet.
func (st *State) Outcome(gate string) (Outcome, bool) {
	i := slices.IndexFunc(st.Last, func(o Outcome) bool { return o.Gate == gate })
	if i < 0 {
		return Outcome{}, false
	}
	return st.Last[i], true
}

// Gates adds validators and gates to graphs whose state S holds a State,
// which state returns a pointer to (e.g. func(s *S) *gate.State { return
// &s.Gate }). state must not be nil. A Gates value holds no run-time data:
// one may serve several builders and concurrent runs.
type Gates[S any] struct {
	state  func(*S) *State
	output func(S) string
}

// For returns the Gates of state type S.
func For[S any](state func(s *S) *State) Gates[S] { return Gates[S]{state: state} }

// WithOutput returns Gates whose gates record output(s), for the state s
// they weigh, as each Attempt's Output: what the attempt produced, for a
// node choosing the best of several (State.Attempts). Without it Output is
// "" and an attempt is known by its verdicts and feedback. output runs in
// the gate's node; nil records nothing.
func (g Gates[S]) WithOutput(output func(s S) string) Gates[S] {
	g.output = output
	return g
}

// Config configures a gate (see Gates.Add).
type Config struct {
	// Validators are the validator nodes whose verdicts the gate weighs; a
	// listed validator with no verdict counts as a blocking failure.
	Validators []string
	// Next is where the run goes when the gate passes (or is skipped):
	// a node or statgraph.End.
	Next string
	// RetryTarget is the node re-run when a blocking check fails; it
	// should lead back to the validators.
	RetryTarget string
	// RetryTargets overrides RetryTarget for some validators (a lint
	// failure goes back to the executor, a rejected plan to the planner).
	// When checks with different targets fail together, the target of the
	// first failed one in Validators order is retried.
	RetryTargets map[string]string
	// FailTo is the node that runs when the attempts are used up under
	// OnExhausted Fail. Empty means the run ends with an error wrapping
	// ErrExhausted.
	FailTo string
	// Policy is the attempt limit, the escalation and the backoff.
	Policy Policy
	// Hints are improvement suggestions added to every retry's feedback.
	Hints []string
	// KeepTries is how many attempts of this gate State keeps in its log
	// for the attempt context (Attempts.Tries and All), dropping the
	// oldest first, so that the state does not grow with every retry. Zero
	// means DefaultKeepTries; below zero keeps none (Try and Hint still
	// work).
	KeepTries int
}

// Route keys of a gate's conditional edges, as drawn.
const (
	RoutePass  = "pass"
	RouteRetry = "retry"
	RouteFail  = "fail"
)

// Add adds a gate called name to b: a node that weighs the verdicts of
// cfg.Validators under cfg.Policy and records its Outcome, followed by
// conditional edges "pass" -> cfg.Next, "retry" -> cfg.RetryTarget,
// "retry:T" -> T for each other target T of cfg.RetryTargets and, with
// cfg.FailTo, "fail" -> cfg.FailTo. Add the edges into the gate as
// for any node. A retry waits cfg.Policy.Backoff first. Under
// OnExhausted Ask the gate node asks with Escalation.Ask (the graph needs
// a checkpointer; an answer other than the Choices asks again); "abort"
// ends the run with an error wrapping ErrAborted.
func (g Gates[S]) Add(b *statgraph.Builder[S], name string, cfg Config) *statgraph.Builder[S] {
	cfg.Validators = slices.Clone(cfg.Validators)
	cfg.Hints = slices.Clone(cfg.Hints)
	paths := map[string]string{RoutePass: cfg.Next, RouteRetry: cfg.RetryTarget}
	for _, t := range cfg.RetryTargets {
		if t != cfg.RetryTarget {
			paths[RouteRetry+":"+t] = t
		}
	}
	if cfg.FailTo != "" {
		paths[RouteFail] = cfg.FailTo
	}
	b.AddCheck(func(reaches func(from, to string) bool) error { return upstream(name, &cfg, reaches) })
	return b.AddNode(name, func(ctx context.Context, s S) (S, error) {
		return g.decide(ctx, s, name, &cfg)
	}).AddRoutes(name, func(_ context.Context, s S) []string {
		st := g.state(&s)
		o, _ := st.Outcome(name)
		if st.outranked(o) {
			return nil // a gate deciding in the same step was more restrictive: its route is taken
		}
		switch o.Decision {
		case Retry, Reset:
			if o.Target != cfg.RetryTarget {
				return []string{RouteRetry + ":" + o.Target}
			}
			return routeRetry
		case Failed:
			return routeFail
		}
		return routePass
	}, paths)
}

// The routes a gate's router returns, allocated once.
var (
	routePass  = []string{RoutePass}
	routeRetry = []string{RouteRetry}
	routeFail  = []string{RouteFail}
)

// upstream checks, when the graph is compiled, that every retry target of
// the gate called name is upstream of it: a retry must lead back through
// the validators to the gate (DESIGN "Attempt context"). A target the
// graph cannot reach is left to the compiler's own report.
func upstream(name string, cfg *Config, reaches func(from, to string) bool) error {
	targets := []string{cfg.RetryTarget}
	for _, v := range slices.Sorted(maps.Keys(cfg.RetryTargets)) {
		targets = append(targets, cfg.RetryTargets[v])
	}
	var errs []error
	for _, t := range slices.Compact(targets) {
		switch {
		case t == name:
			errs = append(errs, fmt.Errorf("gate %q: retry target is the gate itself; a gate retries the node whose work its validators check: set Config.RetryTarget to a node before the gate", name))
		case !reaches(statgraph.Start, t) && t != statgraph.Start:
			// unknown or unreachable: Compile reports it
		case !reaches(t, name):
			errs = append(errs, fmt.Errorf("gate %q: retry target %q is not upstream of the gate (no path leads from %q back to %q), so a retry would never run the gate's validators again; set Config.RetryTarget (or RetryTargets) to a node before the gate, or add the edges that lead from %q to the gate",
				name, t, t, name, t))
		}
	}
	return errors.Join(errs...)
}

// decide is the gate node: it weighs the verdicts, asks the policy and
// records the outcome.
func (g Gates[S]) decide(ctx context.Context, s S, name string, cfg *Config) (S, error) {
	st := g.state(&s)
	out := Outcome{Gate: name, MaxAttempts: cfg.Policy.Limit()}
	for _, v := range cfg.Validators {
		i := slices.IndexFunc(st.Verdicts, func(o Verdict) bool { return o.Validator == v })
		vd := Verdict{Validator: v, Mode: Blocking, Feedback: "the validator produced no verdict before the gate ran; give it an edge that leads to the gate"}
		if i >= 0 {
			vd = st.Verdicts[i]
		}
		out.Verdicts = append(out.Verdicts, vd)
	}
	failed, advisory := Enforce(out.Verdicts, Verdict.enforcement)
	for _, vd := range advisory {
		out.Warnings = append(out.Warnings, Warning{Gate: name, Validator: vd.Validator, Message: vd.Feedback})
	}
	target := cfg.RetryTarget
	if len(failed) > 0 {
		if t, ok := cfg.RetryTargets[failed[0].Validator]; ok {
			target = t
		}
	}
	counts := slices.Clone(st.Counts)
	ci := st.count(name)
	if ci < 0 {
		counts, ci = append(counts, Count{Gate: name}), len(counts)
	}
	c := &counts[ci]
	attempt := c.Attempt + 1
	c.Total++
	out.Decision = cfg.Policy.Decide(len(failed) == 0, attempt, c.Total)
	capped := "" // how the run's cap, when it is what ran out, is worded
	if attempt < out.MaxAttempts && cfg.Policy.MaxTotal > 0 && c.Total >= cfg.Policy.MaxTotal {
		capped = fmt.Sprintf(" (%d attempts over the run: the cap Policy.MaxTotal)", c.Total)
	}
	switch out.Decision {
	case Passed:
		c.Attempt = 0
	case Retry:
		c.Attempt = attempt
		out.Attempt = attempt
		out.Feedback = feedback(name, failed, cfg.Hints, attempt+1, out.MaxAttempts, "")
	case Failed:
		out.Attempt = attempt
		out.Feedback = feedback(name, failed, cfg.Hints, 0, attempt, capped)
		if cfg.FailTo == "" {
			return s, statgraph.Permanent(fmt.Errorf("%w: gate %q after %d attempts of %s%s; last feedback:\n%s",
				ErrExhausted, name, attempt, target, capped, out.Feedback))
		}
		c.Attempt = 0
	case Escalate:
		out.Feedback = feedback(name, failed, cfg.Hints, 0, attempt, capped)
		a, err := Escalation{Gate: name, Attempts: attempt, Errors: errorLines(failed), Feedback: out.Feedback}.Ask(ctx)
		if err != nil {
			return s, err
		}
		switch a {
		case AnswerRetry:
			out.Decision, out.Attempt = Reset, 0
			c.Attempt = 0
			out.Feedback = feedback(name, failed, cfg.Hints, 1, out.MaxAttempts, " after the attempt count was reset")
		case AnswerSkip:
			out.Decision, c.Attempt = Skipped, 0
			out.Warnings = append(out.Warnings, Warning{Gate: name,
				Message: fmt.Sprintf("gate skipped after %d failed attempts: %s", attempt, failedSummary(failed))})
		default:
			return s, statgraph.Permanent(fmt.Errorf("%w: gate %q: the escalation after %d attempts of %s was answered \"abort\"",
				ErrAborted, name, attempt, target))
		}
	}
	if out.Decision == Retry || out.Decision == Reset {
		out.Target = target
		if err := clock.Sleep(ctx, cfg.Policy.Backoff.Delay(c.Attempt)); err != nil {
			return s, fmt.Errorf("gate %q: stopped while waiting to retry %s: %w", name, target, err)
		}
		st.Feedback = out.Feedback
	} else {
		st.Feedback = ""
	}
	st.Verdicts = slices.DeleteFunc(slices.Clone(st.Verdicts), func(v Verdict) bool { return slices.Contains(cfg.Validators, v.Validator) })
	st.Decisions++
	out.Round = st.Decisions
	last := slices.DeleteFunc(slices.Clone(st.Last), func(o Outcome) bool { return o.Gate == name })
	st.Counts, st.Last, st.by = counts, append(last, out), ""
	try := Attempt{Gate: name, Try: attempt, Total: c.Total, Decision: out.Decision, Verdicts: out.Verdicts, Feedback: out.Feedback}
	if g.output != nil {
		try.Output = g.output(s)
	}
	st.Tries = logTry(st.Tries, try, keepTries(cfg.KeepTries))
	if len(out.Warnings) > 0 {
		st.Warnings = append(slices.Clip(st.Warnings), out.Warnings...)
	}
	return s, nil
}

// enforcement is what Enforce weighs a verdict by.
func (v Verdict) enforcement() (bool, Mode, Severity) { return v.Passed, v.Mode, v.Severity }

// errorLines is one line per failed check, for an Escalation.
func errorLines(fs []Verdict) []string {
	out := make([]string, len(fs))
	for i, v := range fs {
		out[i] = "[" + v.Validator + "] " + strings.TrimSpace(v.Feedback)
	}
	return out
}
