package statgraph

import "context"

// ValidatorFunc is the body of a validator node: it checks the state and
// returns a Verdict. A validator does not update the state. An error is a
// failure of the check itself (the command could not run), not a failed
// check: it fails the node like any node error, under the node's
// RetryPolicy.
type ValidatorFunc[S any] func(ctx context.Context, s S) (Verdict, error)

// Verdict is the result of one validator. A validator fills Passed,
// Feedback and optionally Evidence and Hints; the engine fills Validator,
// Key, and Severity and Mode from the validator's options (WithSeverity,
// WithMode) where the verdict leaves them zero. Since the zero Severity is
// critical, a verdict can lower its severity but not raise it back to
// critical; it can always set Mode.
type Verdict struct {
	Validator string   `json:"validator"`
	Passed    bool     `json:"passed"`
	Feedback  string   `json:"feedback,omitempty"` // what is wrong, for the node that is retried
	Severity  Severity `json:"severity,omitempty"`
	Mode      Mode     `json:"mode,omitempty"`
	Evidence  string   `json:"evidence,omitempty"` // e.g. the failing output, kept apart from Feedback
	Hints     []string `json:"hints,omitempty"`    // improvement suggestions, listed in the feedback
	// Key is the input key the validator declared with WithInputKey, as of
	// its run; Reused is true when the gate kept this verdict from an earlier
	// attempt instead of running the validator (Rerun FailedOnly).
	Key    string `json:"key,omitempty"`
	Reused bool   `json:"reused,omitempty"`
}

// Severity grades a validator's check. It chooses the default enforcement
// Mode: critical -> blocking, high and medium -> advisory, low ->
// informational. The zero value means critical, so a validator with no
// options blocks.
type Severity uint8

// Severities, from the zero default to the least severe.
const (
	SeverityCritical Severity = iota
	SeverityHigh
	SeverityMedium
	SeverityLow
)

var severityNames = [...]string{"critical", "high", "medium", "low"}

func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return "unknown"
}

// Mode says what a failed verdict does at its gate.
type Mode uint8

// Enforcement modes. ModeDefault (zero) takes the mode from the severity.
const (
	ModeDefault       Mode = iota
	ModeBlocking           // a failure sends the gate to retry or exhaustion
	ModeAdvisory           // a failure is recorded as a warning and does not block
	ModeInformational      // a failure is reported in events and traces only
)

var modeNames = [...]string{"default", "blocking", "advisory", "informational"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unknown"
}

// modeFor is the mode a verdict of severity s has when no mode was given.
func modeFor(m Mode, s Severity) Mode {
	if m != ModeDefault {
		return m
	}
	switch s {
	case SeverityHigh, SeverityMedium:
		return ModeAdvisory
	case SeverityLow:
		return ModeInformational
	}
	return ModeBlocking
}

// OnExhausted says what a gate does when a blocking check still fails and
// its retries are used up.
type OnExhausted uint8

const (
	// Fail (the default) records the gate's outcome with Passed false and
	// routes to GateConfig.FailTo, or, when FailTo is empty, ends the run
	// with an error wrapping ErrMaxRetries.
	Fail OnExhausted = iota
	// Escalate pauses the run with an interrupt whose payload is an
	// Escalation. Resume it (WithResume) with "retry" (reset the retry count, recorded in
	// the gate log, and retry), "skip" (continue downstream with a warning)
	// or "abort" (end the run with an error wrapping ErrAborted). Needs a
	// checkpointer.
	Escalate
)

// Rerun says which validators run again after a gate retried.
type Rerun uint8

const (
	// RerunAll (the default) runs every validator of the gate again.
	RerunAll Rerun = iota
	// RerunFailedOnly keeps the verdict of a validator that passed, and
	// does not run it again, when the input key it declares with
	// WithInputKey is unchanged. A validator without an input key runs again.
	RerunFailedOnly
)

// GateConfig configures a gate (see Builder.AddGate). The zero value of
// every field but Validators and RetryTarget selects the documented default.
type GateConfig[S any] struct {
	// Validators are the validator nodes (added with AddValidator) whose
	// verdicts the gate collects. Wire them to the gate with edges: in
	// parallel (each validator -> gate) or in a chain (review -> test ->
	// gate); the gate weighs the verdicts recorded since its last decision,
	// and a validator that has none counts as a blocking failure.
	Validators []string
	// RetryTarget is the node re-run when a blocking check fails: it and
	// every node after it up to the gate run again. It must be upstream of
	// the gate; Start re-runs the run's source (see WithSource).
	RetryTarget string
	// RetryTargets overrides RetryTarget for some validators (a lint failure
	// goes back to the executor, a rejected plan to the planner). When checks
	// with different targets fail together, a target downstream of another
	// chosen one is left out, since it re-runs anyway.
	RetryTargets map[string]string
	// MaxRetries is the number of retries in one retry context, that is
	// until the gate passes. Zero means 2; use a negative value for none.
	// When several gates retry one node, the smallest limit applies to it.
	MaxRetries int
	// MaxNodeRetries caps the retries of a target over the whole run, across
	// retry contexts and escalation resets. Zero means no cap. Reaching it
	// fails the gate as with Fail, even when OnExhausted is Escalate.
	MaxNodeRetries int
	// Backoff is the pause before each retry. The zero value retries at once.
	Backoff Backoff
	// OnExhausted is what happens when retries are used up. Zero is Fail.
	OnExhausted OnExhausted
	// FailTo is the node that runs when the gate fails after exhaustion.
	// Empty means the run ends with an error wrapping ErrMaxRetries.
	FailTo string
	// Rerun chooses which validators run again on retry. Zero is RerunAll.
	Rerun Rerun
	// Hints are improvement suggestions added to every retry's feedback.
	Hints []string
	// Record, when set, folds the gate's outcome into the state: it is the
	// gate's update, merged like a node's. Nil leaves the state unchanged.
	Record func(s S, o GateOutcome) S
}

// GateDecision is what a gate did.
type GateDecision string

// Gate decisions, as recorded in GateOutcome.Decision.
const (
	GatePassed  GateDecision = "passed"  // every blocking check passed
	GateRetry   GateDecision = "retry"   // a blocking check failed; the target re-runs
	GateFailed  GateDecision = "failed"  // retries used up, OnExhausted Fail
	GateReset   GateDecision = "reset"   // escalation answered "retry": the count starts again
	GateSkipped GateDecision = "skipped" // escalation answered "skip"
	GateAborted GateDecision = "aborted" // escalation answered "abort"
)

// GateOutcome is one decision of a gate.
type GateOutcome struct {
	Gate     string       `json:"gate"`
	Step     int          `json:"step"`
	Decision GateDecision `json:"decision"`
	// Passed is true when the run continues downstream as passed (GatePassed).
	Passed bool `json:"passed"`
	// Targets are the nodes retried (GateRetry).
	Targets []string `json:"targets,omitempty"`
	// Retries is the retry count of the retry context after this decision;
	// MaxRetries its limit.
	Retries    int `json:"retries"`
	MaxRetries int `json:"max_retries"`
	// Feedback aggregates the failed checks: one section per failed
	// validator, the attempt number and the improvement hints.
	Feedback string    `json:"feedback,omitempty"`
	Verdicts []Verdict `json:"verdicts,omitempty"` // every verdict the gate weighed
	Warnings []Warning `json:"warnings,omitempty"` // advisory failures and skips
}

// Warning is a failed check that did not block: an advisory validator's
// failure, or a gate skipped after escalation.
type Warning struct {
	Gate      string `json:"gate"`
	Validator string `json:"validator,omitempty"` // empty for a skipped gate
	Step      int    `json:"step"`
	Message   string `json:"message"`
}

// Escalation is the payload of the interrupt a gate raises when its retries
// are used up and OnExhausted is Escalate. Answer it with WithResume and one of
// Choices.
type Escalation struct {
	Gate       string    `json:"gate"`
	Retries    int       `json:"retries"`
	MaxRetries int       `json:"max_retries"`
	Failed     []Verdict `json:"failed"`
	Hints      []string  `json:"hints,omitempty"`
	Feedback   string    `json:"feedback"`
	Choices    []string  `json:"choices"` // "retry", "skip", "abort"
	// Invalid says why the previous answer was refused, when the gate asks
	// again because WithResume was given something other than one of Choices.
	Invalid string `json:"invalid,omitempty"`
}

// WithSeverity sets a validator's severity, and through it the default
// enforcement mode.
func WithSeverity(s Severity) ValidatorOption {
	return validatorOption(func(c *nodeConfig) { c.severity = s })
}

// WithMode sets a validator's enforcement mode, overriding the one its
// severity implies.
func WithMode(m Mode) ValidatorOption {
	return validatorOption(func(c *nodeConfig) { c.mode = m })
}

// WithInputKey declares what a validator's check depends on, e.g. a hash of
// the workspace tree. Under RerunFailedOnly a passing validator whose key is
// unchanged is not run again. key must be cheap and must not change the
// state. For AddValidator, or for AddNode together with WithCache (the
// cache key), with the graph's state type.
func WithInputKey[S any](key func(s S) string) NodeOption {
	return func(c *nodeConfig) { c.inputKey = key }
}

// AddValidator adds a validator node: it runs fn, whose Verdict goes to the
// gates that list it, and leaves the state unchanged. Options are those of
// AddNode (WithInputKey among them) plus WithSeverity and WithMode.
func (b *Builder[S]) AddValidator(name string, fn ValidatorFunc[S], opts ...ValidatorOption) *Builder[S] {
	if fn == nil {
		b.problem("AddValidator(%q): nil function", name)
		return b
	}
	nopts := make([]NodeOption, len(opts))
	for i, o := range opts {
		nopts[i] = o.applyValidator
	}
	ns := b.addSpec("AddValidator", name, nopts)
	if ns == nil {
		return b
	}
	ns.validate = fn
	if ns.cfg.inputKey != nil {
		if _, ok := ns.cfg.inputKey.(func(S) string); !ok {
			b.problem("AddValidator(%q): WithInputKey takes a func(%T) string", name, *new(S))
		}
	}
	return b
}

// AddGate adds a gate node called name. A gate collects the verdicts of its
// validators, which run before it (typically in parallel in the step before
// it), and then:
//   - when every blocking check passed, it continues along its own edges;
//   - when one failed and retries remain, it re-runs cfg.RetryTarget (or the
//     validator's own target) with the aggregated feedback, readable by the
//     retried node through Attempts;
//   - when retries are used up, it follows cfg.OnExhausted.
//
// Add the edges into the gate and its onward edges with AddEdge or
// AddConditionalEdges as for any node. Compile rejects a retry target that is not upstream of the gate and
// a check that would retry itself.
func (b *Builder[S]) AddGate(name string, cfg GateConfig[S]) *Builder[S] {
	ns := b.addSpec("AddGate", name, nil)
	if ns == nil {
		return b
	}
	cfg.Validators = append([]string(nil), cfg.Validators...)
	cfg.Hints = append([]string(nil), cfg.Hints...)
	targets := make(map[string]string, len(cfg.RetryTargets))
	for k, v := range cfg.RetryTargets {
		targets[k] = v
	}
	cfg.RetryTargets = targets
	ns.gate = &cfg
	if len(cfg.Validators) == 0 {
		b.problem("AddGate(%q): no validators; list the validator nodes whose verdicts it collects", name)
	}
	if cfg.RetryTarget == "" {
		b.problem("AddGate(%q): no RetryTarget; name the node to re-run when a check fails", name)
	}
	return b
}
