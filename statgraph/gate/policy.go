package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/statgraph/statgraph/statgraph"
)

// Mode says what a failed check does. The zero Mode takes the mode from the
// check's Severity, which makes a check with no options blocking. Its
// values are the words tasks.json spells.
type Mode string

// Enforcement modes.
const (
	Blocking      Mode = "blocking"      // a failure sends the work back, or to exhaustion
	Advisory      Mode = "advisory"      // a failure is recorded as a warning and does not block
	Informational Mode = "informational" // a failure is only recorded
)

// Valid reports whether m is the zero Mode or one of the three modes.
func (m Mode) Valid() bool {
	return m == "" || m == Blocking || m == Advisory || m == Informational
}

// For returns the mode a check of severity s enforces: m itself when set,
// else blocking for critical, advisory for high and medium, informational
// for low.
func (m Mode) For(s Severity) Mode {
	if m != "" {
		return m
	}
	switch s {
	case High, Medium:
		return Advisory
	case Low:
		return Informational
	}
	return Blocking
}

// Enforce weighs checks by their enforcement, the one rule the gates and
// package verifier share: it returns, in the order of checks, the failed
// ones whose mode (verdict's, resolved with Mode.For) is Blocking, which
// fail the work or send it back, and the failed Advisory ones, which are
// warnings and do not block. Failed Informational checks and passed ones
// are in neither. verdict reports a check's result, mode and severity.
func Enforce[C any](checks []C, verdict func(C) (passed bool, m Mode, s Severity)) (blocking, advisory []C) {
	for _, c := range checks {
		passed, m, s := verdict(c)
		if passed {
			continue
		}
		switch m.For(s) {
		case Blocking:
			blocking = append(blocking, c)
		case Advisory:
			advisory = append(advisory, c)
		}
	}
	return blocking, advisory
}

// Severity grades a check; it chooses the default Mode (see Mode.For). The
// zero value is Critical.
type Severity uint8

// Severities, from the zero default to the least severe.
const (
	Critical Severity = iota
	High
	Medium
	Low
)

var severityNames = [...]string{"critical", "high", "medium", "low"}

func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return "unknown"
}

// Exhausted says what happens when a blocking check still fails on the last
// attempt.
type Exhausted uint8

const (
	// Fail (the default) ends the work failed.
	Fail Exhausted = iota
	// Ask pauses the run with an interrupt whose payload is an Escalation,
	// answered with statgraph.WithResume and one of its Choices.
	Ask
)

// DefaultMaxAttempts is Policy.MaxAttempts when zero.
const DefaultMaxAttempts = 3

// Policy is the retry limit, the escalation on exhaustion and the pause
// between attempts. The zero value gives DefaultMaxAttempts attempts, fails
// when they are used up and retries at once. A Policy is a value: safe to
// share between goroutines.
type Policy struct {
	// MaxAttempts is the number of attempts, the first included, in one
	// retry context (until the work passes or the operator resets the
	// count). Zero means DefaultMaxAttempts; 1 means no retry.
	MaxAttempts int
	// OnExhausted is what happens when the attempts are used up.
	OnExhausted Exhausted
	// Backoff is the pause before each retry (statgraph's one formula).
	Backoff statgraph.Backoff
	// MaxTotal caps the attempts over the whole run, across retry
	// contexts: an operator's "retry" answer resets MaxAttempts' count,
	// not this one. Zero means no cap.
	MaxTotal int
}

// Limit returns MaxAttempts resolved: at least 1.
func (p Policy) Limit() int {
	switch {
	case p.MaxAttempts == 0:
		return DefaultMaxAttempts
	case p.MaxAttempts < 1:
		return 1
	}
	return p.MaxAttempts
}

// Decision is what the policy (and a gate) decided.
type Decision string

// Decisions. Decide returns the first four; a gate records the others after
// an escalation's answer.
const (
	Passed   Decision = "passed"   // every blocking check passed
	Retry    Decision = "retry"    // a blocking check failed and attempts remain
	Failed   Decision = "failed"   // attempts used up, OnExhausted Fail
	Escalate Decision = "escalate" // attempts used up, OnExhausted Ask: ask the operator
	Reset    Decision = "reset"    // the escalation was answered "retry": the count starts again and the target re-runs
	Skipped  Decision = "skipped"  // the escalation was answered "skip"
	Aborted  Decision = "aborted"  // the escalation was answered "abort"
)

// Decide is the policy core: after attempt number attempts (1 for the
// first) of the retry context, and number total of the run, passed or
// failed, it says whether the work is done, goes again, or has exhausted
// its attempts (Failed or Escalate, from OnExhausted): attempts reached
// Limit, or total reached a non-zero MaxTotal.
func (p Policy) Decide(passed bool, attempts, total int) Decision {
	switch {
	case passed:
		return Passed
	case attempts < p.Limit() && (p.MaxTotal <= 0 || total < p.MaxTotal):
		return Retry
	case p.OnExhausted == Ask:
		return Escalate
	}
	return Failed
}

// Answer is an operator's answer to an Escalation.
type Answer string

// Answers, in the order Choices lists them.
const (
	AnswerRetry Answer = "retry" // reset the attempt count and go again
	AnswerSkip  Answer = "skip"  // continue as if passed, with a warning
	AnswerAbort Answer = "abort" // end the work failed
)

// Choices returns the answers an Escalation accepts, in a new slice.
func Choices() []string {
	return []string{string(AnswerRetry), string(AnswerSkip), string(AnswerAbort)}
}

// ErrUnknownAnswer is wrapped by ParseAnswer's error.
var ErrUnknownAnswer = errors.New("unknown answer")

// ParseAnswer checks an operator's answer. Anything but "retry", "skip" or
// "abort" returns an error wrapping ErrUnknownAnswer that says what to
// resume with.
func ParseAnswer(s string) (Answer, error) {
	switch a := Answer(s); a {
	case AnswerRetry, AnswerSkip, AnswerAbort:
		return a, nil
	}
	return "", fmt.Errorf("%w %q: resume with retry, skip or abort", ErrUnknownAnswer, s)
}

// Escalation is the payload of the interrupt raised when work exhausts its
// attempts under OnExhausted Ask: by a gate (Gate set) or by the
// orchestrator for a task (Task set). Answer it with statgraph.WithResume
// and one of Choices.
type Escalation struct {
	// Kind is what is asked: KindExhausted (the work used up its
	// attempts) or KindApproval (approve Proposal before going on, see
	// Approve).
	Kind     string   `json:"kind,omitempty"`
	Gate     string   `json:"gate,omitempty"`  // the gate that escalated
	Task     string   `json:"task,omitempty"`  // the orchestrator's task
	Title    string   `json:"title,omitempty"` // the task's title
	Attempts int      `json:"attempts"`        // failed attempts in the retry context
	Errors   []string `json:"errors"`          // what failed on the last attempt
	Hint     string   `json:"hint"`            // what the answers do
	Feedback string   `json:"feedback,omitempty"`
	// Proposal is what a KindApproval question asks to approve (a task's
	// plan, as JSON).
	Proposal string   `json:"proposal,omitempty"`
	Choices  []string `json:"choices"`
	// Invalid says why the previous answer was refused, when Ask asks
	// again because it was given something other than one of Choices.
	Invalid string `json:"invalid,omitempty"`
}

// Ask is the escalation of the gates and of the orchestrator (package
// agents): it raises e, with Hint and Choices filled in, as an interrupt
// (statgraph.Interrupt, so the graph needs a checkpointer) and returns the
// operator's answer once the run is resumed with one of Choices (a string,
// or a Reply). An
// answer other than the Choices asks again, with Invalid saying why it was
// refused; a resume with no value (null, as a run continued after a stop
// gives) asks again the question as it was. Its error, the pause's or a
// resume value that is not a string, is for the node to return.
func (e Escalation) Ask(ctx context.Context) (Answer, error) {
	e.Hint, e.Choices = EscalationHint, Choices()
	for {
		r, err := statgraph.Interrupt[*Reply](ctx, e)
		if err != nil {
			return "", err
		}
		if r == nil {
			continue
		}
		a, err := ParseAnswer(string(r.Answer))
		if err == nil {
			return a, nil
		}
		e.Invalid = err.Error()
	}
}

// EscalationHint is Escalation.Hint as the gate and the orchestrator word it.
const EscalationHint = "retry resets the attempt count, skip marks it skipped, abort fails it"

var (
	// ErrExhausted is returned by a run whose gate used up its attempts
	// with no failure node to go to.
	ErrExhausted = errors.New("gate: attempts exhausted")
	// ErrAborted is returned by a run whose gate escalation was answered
	// "abort".
	ErrAborted = errors.New("gate: aborted by the operator")
)

// failedSummary names the checks in fs.
func failedSummary(fs []Verdict) string {
	names := make([]string, len(fs))
	for i, v := range fs {
		names[i] = v.Validator
	}
	return strings.Join(names, ", ")
}
