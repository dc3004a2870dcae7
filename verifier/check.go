package verifier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// Kind says what a check verifies and so which verdict its failure affects.
type Kind string

// Kinds of checks. The zero Kind means KindOther.
const (
	KindTest  Kind = "test"
	KindLint  Kind = "lint"
	KindOther Kind = "other"
)

// Mode is a check's enforcement mode: the gates' (package statgraph/gate),
// so that checks and gates enforce with one type. A check has no severity,
// so the zero Mode means Blocking (gate's default for a critical check).
type Mode = gate.Mode

// Enforcement modes.
const (
	// Blocking: a failure fails the verification.
	Blocking = gate.Blocking
	// Advisory: a failure is reported in Verification.Warnings only.
	Advisory = gate.Advisory
	// Informational: a failure is only recorded in Verification.Checks.
	Informational = gate.Informational
)

// ErrInvalidCheck reports a check with an unknown Kind or Mode.
var ErrInvalidCheck = errors.New("verifier: invalid check")

// Check is one command whose success is part of a verification. It is
// also what a tasks.json "checks" entry decodes to (package tasks): the
// entry's cmd and timeout become Command.Argv or Command.Shell and
// Command.Timeout.
type Check struct {
	// Name identifies the check in reports; empty means one derived from
	// the command.
	Name string
	// Command is what to run. An empty Dir means Verify's workdir; a
	// relative Dir is taken relative to it.
	Command Command
	// Kind is test, lint or other; zero means other.
	Kind Kind
	// Mode is blocking, advisory or informational; zero means blocking.
	Mode Mode
}

// CheckResult is the outcome of one check.
type CheckResult struct {
	Name string
	Kind Kind // never empty: the zero Kind is reported as KindOther
	Mode Mode // never empty: the zero Mode is reported as Blocking
	// Passed is true when the command exited 0 within its time and its
	// output shows no failing test. Diagnostics printed by a command that
	// exits 0 do not fail it.
	Passed   bool
	ExitCode int // -1 when the command was killed or could not start
	Duration time.Duration
	TimedOut bool
	Canceled bool
	// StartError says why the command could not start; empty when it ran.
	StartError string
	// Output is the combined output, capped as described in Result.
	Output  string
	Dropped int64
	// Failures are the failing tests found in the whole output, including
	// any part Output dropped.
	Failures []Failure
	// Diagnostics are file:line:col findings, for output that is not go
	// test output.
	Diagnostics []Diagnostic
	// Note, for a failed sandboxed check whose command or output names a
	// path of this machine the sandbox hides (under the host's /tmp), says
	// so (see Sandbox.HiddenNote); Summary ends with it.
	Note string
}

// Verification is the verdict of a set of checks. It is also the
// orchestrator's record of one attempt's verification (agents.TaskState),
// saved in every checkpoint as JSON; Checks is left out of the JSON, so a
// checkpoint does not carry every check's output.
type Verification struct {
	// TestsPassed is true when every blocking check of kind test or other
	// passed (true when there are none). Kind other counts as tests because
	// the orchestrator retries on either verdict and an unclassified check,
	// such as a build, is nearer to tests than to style.
	TestsPassed bool `json:"tests_passed"`
	// LintPassed is true when every blocking lint check passed (true when
	// there are none).
	LintPassed bool `json:"lint_passed"`
	// Errors has one short line per failed blocking check, such as
	// "tests: 2 failed (TestParse, TestEmpty)".
	Errors []string `json:"errors,omitempty"`
	// Failures are the failing tests of the blocking checks.
	Failures []Failure `json:"failures,omitempty"`
	// Warnings has one short line per failed advisory check.
	Warnings []string `json:"warnings,omitempty"`
	// Feedback is what the executor is told on its next attempt: Verify
	// leaves it empty; the orchestrator sets it from RenderFeedback when
	// the verification failed.
	Feedback string `json:"feedback,omitempty"`
	// Checks holds every check's result, in the order given to Verify. It
	// is not saved in JSON.
	Checks []CheckResult `json:"-"`
}

// Passed reports whether tests and lint both passed.
func (v Verification) Passed() bool { return v.TestsPassed && v.LintPassed }

// Verify runs checks concurrently in workdir, waits for all of them and
// combines their results. A failing check is part of the Verification, not
// an error. The error is non-nil when a check has an invalid Kind or Mode
// (nothing runs), when a check's command cannot be started (the other
// checks still run and the Verification is complete), or when ctx ended
// first (the checks still running are killed and marked Canceled). Verify
// is safe for concurrent use.
func Verify(ctx context.Context, workdir string, checks []Check) (Verification, error) {
	var invalid []error
	for i, c := range checks {
		if err := c.validate(); err != nil {
			invalid = append(invalid, fmt.Errorf("check %d (%s): %w", i+1, c.name(), err))
		}
	}
	if len(invalid) > 0 {
		return Verification{}, errors.Join(invalid...)
	}

	results := make([]CheckResult, len(checks))
	startErrs := make([]error, len(checks))
	var g errgroup.Group
	for i, c := range checks {
		g.Go(func() error {
			results[i], startErrs[i] = runCheck(ctx, workdir, c)
			return nil
		})
	}
	_ = g.Wait() // The goroutines report through results and startErrs.

	v := combine(results)
	err := errors.Join(startErrs...)
	if ctx.Err() != nil {
		err = errors.Join(fmt.Errorf("verifier: verification interrupted: %w", ctx.Err()), err)
	}
	return v, err
}

func (c Check) validate() error {
	switch c.Kind {
	case "", KindTest, KindLint, KindOther:
	default:
		return fmt.Errorf("%w: kind %q; use test, lint or other", ErrInvalidCheck, c.Kind)
	}
	if !c.Mode.Valid() {
		return fmt.Errorf("%w: mode %q; use blocking, advisory or informational", ErrInvalidCheck, c.Mode)
	}
	return nil
}

func (c Check) name() string {
	if c.Name != "" {
		return c.Name
	}
	cmd := c.Command.String()
	if len(cmd) > 40 {
		cmd = string(proc.DropPartialRune([]byte(cmd[:40]))) + "…"
	}
	return cmd
}

// tool names the program a check runs, as "go vet" or "staticcheck".
func (c Check) tool() string {
	words := c.Command.Argv
	if len(words) == 0 {
		words = strings.Fields(c.Command.Shell)
	}
	if len(words) == 0 {
		return ""
	}
	tool := filepath.Base(words[0])
	if tool == "go" && len(words) > 1 {
		tool += " " + words[1]
	}
	return tool
}

func runCheck(ctx context.Context, workdir string, c Check) (r CheckResult, err error) {
	r = CheckResult{Name: c.name(), Kind: c.Kind, Mode: c.Mode}
	ctx, end := startCheck(ctx, c, r.Name)
	if end != nil {
		defer func() { end(err, checkAttrs(r)...) }()
	}
	if r.Kind == "" {
		r.Kind = KindOther
	}
	r.Mode = r.Mode.For(gate.Critical)
	cmd := c.Command
	switch {
	case cmd.Dir == "":
		cmd.Dir = workdir
	case !filepath.IsAbs(cmd.Dir):
		cmd.Dir = filepath.Join(workdir, cmd.Dir)
	}
	analyzer := newOutputAnalyzer(c.tool())
	cmd.Tee = analyzer
	if c.Command.Tee != nil {
		cmd.Tee = &teeWriter{first: analyzer, second: c.Command.Tee}
	}
	res, err := Run(ctx, cmd)
	if err != nil {
		r.ExitCode = -1
		r.StartError = err.Error()
		r.Note = cmd.Sandbox.HiddenNote(cmd.String(), r.StartError)
		return r, fmt.Errorf("check %q: %w", r.Name, err)
	}
	r.ExitCode, r.Duration, r.TimedOut, r.Canceled = res.ExitCode, res.Duration, res.TimedOut, res.Canceled
	r.Output, r.Dropped = res.Output, res.Dropped
	r.Failures, r.Diagnostics = analyzer.finish()
	r.Passed = res.ExitCode == 0 && !res.TimedOut && !res.Canceled && len(r.Failures) == 0
	if !r.Passed && !r.Canceled {
		r.Note = cmd.Sandbox.HiddenNote(cmd.String(), r.Output)
	}
	return r, nil
}

// teeWriter writes to first, which never fails, and to second until it fails.
type teeWriter struct {
	first  io.Writer
	second io.Writer
}

func (t *teeWriter) Write(p []byte) (int, error) {
	n, err := t.first.Write(p)
	if t.second != nil {
		if _, werr := t.second.Write(p); werr != nil {
			t.second = nil
		}
	}
	return n, err
}

// combine derives the verdicts from the checks' results, enforced as the
// gates enforce (gate.Enforce).
func combine(results []CheckResult) Verification {
	v := Verification{TestsPassed: true, LintPassed: true, Checks: results}
	blocking, advisory := gate.Enforce(results, CheckResult.Verdict)
	for _, r := range blocking {
		v.Errors = append(v.Errors, r.Summary())
		v.Failures = append(v.Failures, r.Failures...)
		if r.Kind == KindLint {
			v.LintPassed = false
		} else {
			v.TestsPassed = false
		}
	}
	for _, r := range advisory {
		v.Warnings = append(v.Warnings, r.Summary())
	}
	return v
}

// Verdict is what gate.Enforce weighs a check's result by: whether it
// passed, its Mode and its severity. A check has no severity: its zero Mode
// is blocking, gate.Critical's.
func (r CheckResult) Verdict() (bool, Mode, gate.Severity) {
	return r.Passed, r.Mode, gate.Critical
}
