package dispatch

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/statgraph/store"
	"github.com/statgraph/statgraph/tasks"
)

// Dispatcher runs the units of a tasks file through the orchestrator graph:
// in dependency order, independent units in parallel, each in its own git
// workspace, with a checkpoint after every step so that a killed run
// continues where it stopped. It records each unit's outcome in the file
// (status, retry_count, error_history, failed_at): each outcome is durable
// at once (in a journal), and the file is saved after each round of changes,
// or less often when it is so large that saving it costs more (see Run). Workspaces, threads and branches are keyed by the file's
// Plan. A unit is reported done only once its branch is published in the
// repository and readable there (else it is left interrupted, with the
// reason); at the start of Run, done units whose branch is missing or
// unreadable are published again from their workspaces.
//
// The caller holds the file's lock (Lock) for the length of the run.
type Dispatcher struct {
	File *tasks.File
	// Repo is the git repository the tasks change; "" means the directory
	// holding the tasks file.
	Repo string
	// StateDir holds workspaces and prompt files; "" means the plan's
	// state directory outside the repository (Plan.Dir of NewPlan(Repo,
	// File.Path, File.Tag)). Threads and branches are keyed by that plan
	// whatever StateDir is.
	StateDir string
	// Checkpointer stores the runs' checkpoints (the run store). Required.
	Checkpointer statgraph.Checkpointer
	// Lessons is the long-term store where tasks keep and read what they
	// learned about the repository (agents.Lessons), under
	// agents.LessonNamespace(Repo); nil keeps no lessons.
	Lessons store.Store
	// Jobs is how many units run at once; 0 means the number of CPUs.
	Jobs int
	// Model is the model configuration; a task's "model" overrides
	// Model.Model. With no model, units whose executor is the LLM fail
	// with a message saying how to configure one, and units with a command
	// executor run without a planner.
	Model llm.Config
	// Budget is the run's global budget (tokens, dollars) shared by every
	// unit; nil means unlimited. It is checked before each unit starts
	// (and, through each unit's budget, before each model call and agent
	// CLI start): once it is spent no unit starts, those not started stay
	// as they are with the reason (Summary.Stopped), and a unit whose call
	// it refuses is left pending too, its workspace kept, to be resumed. Its llm.Meter decides
	// where the total lives (in memory by default).
	Budget *llm.Budget
	// Prices price the models' tokens over the built-in table
	// (llm.DefaultPrices) and tasks.json's defaults.prices, e.g. from
	// run's --prices file; nil adds none.
	Prices llm.Prices
	// Ask answers the escalations of a unit: for on_exhausted "ask" (e.Kind
	// gate.KindExhausted) "retry", "skip" or "abort"; for approve_plan
	// (gate.KindApproval) "approve", "edit" with the edited plan, or
	// "reject" with the reason. An answer that does not fit is asked
	// again. Nil leaves the unit interrupted, waiting for statgraph resume.
	Ask func(ctx context.Context, unit string, e agents.Escalation) (gate.Reply, error)
	// Report receives progress events; nil means none. It is called from
	// several goroutines, never concurrently for the same unit.
	Report func(Event)
	// Stop, when closed, stops the run gracefully: no new unit starts, and
	// running units stop at their next step boundary (the node that is
	// running finishes and is checkpointed) and are marked interrupted.
	// Cancelling Run's ctx instead stops them at once.
	Stop <-chan struct{}
	// AllowEnv names environment variables passed to agent CLIs (command
	// executors) although they are outside the runner's allow-list or look
	// like secrets, e.g. the agent's own API key. Checks never get them.
	AllowEnv []string
	// TaskTimeout is the deadline of one run of a unit whose tasks.json
	// sets no "timeout"; 0 means none. A unit past its deadline ends failed
	// with a reason naming the deadline; its checkpoints are kept.
	TaskTimeout time.Duration
	// Log receives the orchestrator's own lines ("task 3 FAILED after 3
	// attempts"); nil discards them.
	Log io.Writer
	// NoSandbox runs checks and agent CLIs without the sandbox (see
	// verifier.Sandbox); Run then writes one warning to Log saying what is
	// unprotected. Without it, Run refuses to start when the sandbox cannot
	// be set up (verifier.SandboxAvailable).
	NoSandbox bool
	// GoCacheProg is the program (and first arguments) serving
	// gocacheprog.Serve (see verifier.Sandbox.GoCacheProg), so that sandboxed go commands reuse the user's
	// build cache read-only (see verifier.Sandbox); nil gives each unit a
	// fresh build cache of its own. The small program built in the state
	// root's bin (verifier.GoCacheProgram) serves in its place when the
	// build succeeds.
	GoCacheProg []string
	// SandboxProbe is the program (and first arguments) serving
	// verifier.ServeSandboxProbe (statgraph's hidden sandbox-probe
	// command). With it, Run and RunOne attack a sandbox from inside once
	// per process before the first unit (verifier.CheckSandbox) and refuse
	// to start when an attack gets through; nil checks only that bwrap
	// starts (verifier.SandboxAvailable).
	SandboxProbe []string
	// SandboxHelper is the program (and first arguments) that runs
	// proc.RunInit inside a sandbox (statgraph's sandbox-init), putting
	// checks and agent CLIs under Landlock and carrying the allowlisting
	// proxy to those whose network allows hosts (verifier.Sandbox.Helper).
	// Nil: no Landlock layer, and such a check or agent fails to start,
	// saying that it is missing. The small program built in the state
	// root's bin (verifier.SandboxInitProgram) serves in its place when
	// the build succeeds.
	SandboxHelper []string
	// KeepWorkspaces keeps a unit's workspace after it ends; by default it
	// is removed once its branch is published (an interrupted unit's is
	// always kept, to continue in).
	KeepWorkspaces bool
	// Attempts is how many candidates a unit whose tasks.json sets neither
	// "attempts" nor "candidates" runs side by side (best-of-N, see
	// bestof.go); 0 or 1 means one, the unit itself.
	Attempts int
	// Runner runs the ready units; nil runs them in this process. A
	// Runner of workers taking them from a queue (queue.Runner) makes Run
	// check no sandbox and publish nothing itself: the workers do.
	Runner Runner
	// StartFrom, when set, names a branch of Repo that unit id's new
	// workspace's files and branch start from, or "" for none: a worker
	// taking over a unit from another machine starts from the last
	// attempt's pushed commit, to continue the unit's checkpointed run.
	// The workspace's base is still its dependencies' branches (see
	// workspace.Options.Start). A workspace that exists is used as it is.
	StartFrom func(id string) string
	// ParkMax bounds how long the run waits for a usage limit's reset
	// (see park.go): a unit whose limit resets further away ends
	// interrupted with the reason. 0 means DefaultParkMax (a day).
	ParkMax time.Duration
	// ParkDefault is how long a unit is parked by a usage limit that
	// gives no reset time (a real agent CLI's bare 429), bounded by
	// ParkMax. 0 means DefaultParkDefault (15 minutes).
	ParkDefault time.Duration
	// Tracer, when set, makes OpenTelemetry spans of the run (see
	// trace.go): the run, each task, attempt and node, and each model
	// call, check and agent CLI run. nil makes none and costs nothing.
	Tracer trace.TracerProvider

	pricesOnce sync.Once
	prices     llm.Prices // see priceTable
}

// EventKind says what a dispatcher Event reports.
type EventKind string

// Dispatcher event kinds.
const (
	EventStart    EventKind = "start"    // a unit starts (or continues)
	EventProgress EventKind = "progress" // a unit's graph moved: Phase, Attempt
	EventFinish   EventKind = "finish"   // a unit ended: Status, Reason
	EventBlocked  EventKind = "blocked"  // a unit was blocked by a dependency
	// EventParked: a unit was parked by a usage limit until Until (it also
	// gets an EventFinish with Status parked); the run starts it again then.
	EventParked EventKind = "parked"
	// EventAllParked: nothing runs and nothing can start until the first
	// reset, Until; the run waits. Sent once each time the run gets there.
	EventAllParked EventKind = "all-parked"
	// EventQuestion: a unit with on_exhausted "ask" ran out of retries and
	// asks its operator retry, skip or abort; Reason sums up its errors.
	// It is sent before Ask is called, and also when there is no Ask (the
	// unit then ends interrupted, waiting for an answer).
	EventQuestion EventKind = "question"
	// EventHeld: the run's budget is spent, so a unit that would run was
	// not started; it keeps its status (pending, or interrupted when a
	// killed run left it in progress) with Reason.
	EventHeld EventKind = "held"
)

// Event is a progress report about one unit.
type Event struct {
	Kind EventKind
	Unit string
	// Candidate is the number of the best-of-N candidate of Unit the
	// event is about; 0 for the unit itself.
	Candidate   int
	Title       string
	Phase       string
	Attempt     int
	MaxAttempts int
	Tokens      int
	Usage       llm.Usage // the unit's spend so far; Usage.Tokens() is Tokens
	Elapsed     time.Duration
	Status      string
	Reason      string
	Branch      string
	Until       time.Time // EventParked, EventAllParked: when the (first) limit resets
}

// Summary is the outcome of a run, unit by unit, in file order.
type Summary struct {
	Units []UnitResult
	// Stopped says why the run stopped before every unit could run (the
	// run's budget is spent), with what to do; "" when it did not.
	Stopped string
}

// Usage returns what the units of s spent together.
func (s Summary) Usage() llm.Usage {
	var u llm.Usage
	for _, r := range s.Units {
		u = u.Plus(r.Usage)
	}
	return u
}

// UnitResult is one unit's outcome.
// Its JSON names are those of GET /api/run's units (docs/web-and-mcp.md).
type UnitResult struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Attempts int    `json:"attempts"`
	Tokens   int    `json:"tokens"`
	// Usage is the unit's spend (tokens and cost, its earlier runs
	// included); its cost is known when Usage.Unpriced is 0.
	Usage   llm.Usage     `json:"usage"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// ParkedUntil is when a parked unit's usage limit resets.
	ParkedUntil *time.Time `json:"parked_until,omitempty"`
	// stop, when set, stops the run with this reason (an exhausted quota).
	stop string
}

// Failed reports whether any unit ended failed, blocked, interrupted or
// parked (a run stopped while it waited for a reset), or the run stopped
// before every unit could run (Stopped).
func (s Summary) Failed() bool {
	if s.Stopped != "" {
		return true
	}
	for _, u := range s.Units {
		switch u.Status {
		case tasks.StatusFailed, tasks.StatusBlocked, tasks.StatusInterrupted, tasks.StatusInProgress, tasks.StatusParked:
			return true
		}
	}
	return false
}

func (d *Dispatcher) report(e Event) {
	if d.Report != nil {
		d.Report(e)
	}
}

// ErrStopped is returned by Run when Stop was closed.
var ErrStopped = errors.New("dispatch: run stopped")

// stopping reports whether Stop is closed.
func (d *Dispatcher) stopping() bool {
	if d.Stop == nil {
		return false
	}
	select {
	case <-d.Stop:
		return true
	default:
		return false
	}
}
