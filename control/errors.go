package control

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// The errors of the plan operations, matched with errors.Is. Their text
// is written to be read as it is, after what it wraps or before the
// detail wrapping it adds ("task 3 has no recorded run in ..."): the
// front ends show an operation's error unchanged and add only Advice.
var (
	// ErrRunning is returned (wrapped) by the operations that change the
	// plan (Start, AddTask, Reset, Clean, Prepare) while a run of the plan
	// is going on, in this process or in another (the plan's lock).
	ErrRunning = errors.New("a run of this plan is going on")
	// ErrNotRunning is returned by Stop when no run of this process is
	// going on.
	ErrNotRunning = errors.New("no run is going on in this process (a run started in a terminal stops with Ctrl-C there)")
	// ErrBadAnswer is returned (wrapped) by Answer and Reply for an
	// answer that does not fit the question.
	ErrBadAnswer = errors.New("unknown answer")
	// ErrNoQuestion is returned (wrapped) by Answer when the task has no
	// pending escalation.
	ErrNoQuestion = errors.New("no pending question")
	// ErrNoRun is returned (wrapped) by History for a task with no
	// recorded run.
	ErrNoRun = errors.New("no recorded run")
	// ErrNoTask is returned (wrapped) for a task id the plan does not
	// have.
	ErrNoTask = tasks.ErrNoTask
)

// Kind is what sort of failure an operation's error is. Each front end
// maps it its own way, from this one classification (Classify): the CLI
// to an exit code, the web API to an HTTP status (HTTPStatus), MCP to a
// tool error whose text is the message and its Advice.
type Kind int

// The kinds of Classify.
const (
	// KindInternal is a failure of statgraph or of what it reads or
	// writes (a run store that cannot be read, a full disk): statgraph
	// run's exit code 1, HTTP 500.
	KindInternal Kind = iota
	// KindInvalid is a request that is wrong in itself (an unknown
	// answer, a new task that is not a JSON object or names a variable
	// it may not): exit code 2, HTTP 400.
	KindInvalid
	// KindRefused is a request understood and refused: the tasks file
	// would not be valid (*tasks.ValidationError), or the plan cannot
	// run on this machine as set up (not a git repository, no sandbox,
	// no model): exit code 2, HTTP 422.
	KindRefused
	// KindTooLarge is a request over a size cap: exit code 2, HTTP 413.
	KindTooLarge
	// KindNotFound is a task or a run that does not exist: exit code 2,
	// HTTP 404.
	KindNotFound
	// KindConflict is a request the plan's state refuses now (a run is
	// going on or is not, no question is pending, a task is not failed):
	// exit code 2, HTTP 409.
	KindConflict
	// KindCanceled is an operation whose caller went away (its context
	// ended): exit code 130, HTTP 503.
	KindCanceled
)

var kindNames = [...]string{"internal", "invalid", "refused", "too large", "not found", "conflict", "canceled"}

// String returns the kind's name ("not found").
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// HTTPStatus is the status the web API answers an error of kind k with.
func (k Kind) HTTPStatus() int {
	switch k {
	case KindInvalid:
		return http.StatusBadRequest
	case KindRefused:
		return http.StatusUnprocessableEntity
	case KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case KindNotFound:
		return http.StatusNotFound
	case KindConflict:
		return http.StatusConflict
	case KindCanceled:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// kindError gives an error made in this package its Kind where no
// sentinel says it; its text is err's.
type kindError struct {
	kind Kind
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }

// kinded marks err as of kind k.
func kinded(k Kind, err error) error { return &kindError{kind: k, err: err} }

// Words are a front end's names for the operations Advice points to, e.g.
// "statgraph status" or MCP's "list_tasks".
type Words struct {
	// List lists the tasks with their ids and status.
	List string
	// Progress shows whether a run is going on and how far it is.
	Progress string
	// Stop stops the run this front end started.
	Stop string
}

// Classify returns err's Kind and what to do about it (Advice, in w's
// words; "" when the message says it all). It classifies the errors of
// this package's operations and of what they wrap (tasks, verifier,
// contexts); any other is KindInternal.
func Classify(err error, w Words) (Kind, string) {
	var ke *kindError
	var ve *tasks.ValidationError
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindCanceled, "the call was cancelled before it ended"
	case errors.As(err, &mbe), errors.Is(err, tasks.ErrTooLarge):
		return KindTooLarge, ""
	case errors.As(err, &ve):
		return KindRefused, ""
	case errors.Is(err, verifier.ErrSandboxUnavailable):
		return KindRefused, ""
	case errors.Is(err, ErrBadAnswer), errors.Is(err, ErrBadComment), errors.Is(err, tasks.ErrBadTask), errors.Is(err, tasks.ErrRefusedTask):
		return KindInvalid, ""
	case errors.Is(err, ErrRunning) && errors.As(err, new(*tasks.LockedError)):
		return KindConflict, fmt.Sprintf("%s shows its progress; Ctrl-C in its terminal stops it", w.Progress)
	case errors.Is(err, ErrRunning):
		return KindConflict, fmt.Sprintf("%s shows its progress, %s stops it", w.Progress, w.Stop)
	case errors.Is(err, ErrNotRunning):
		return KindConflict, fmt.Sprintf("%s says whether a run is going on", w.Progress)
	case errors.Is(err, ErrNoQuestion):
		return KindConflict, fmt.Sprintf("%s shows the tasks that wait for an answer", w.Progress)
	case errors.Is(err, ErrNotReviewable):
		return KindConflict, fmt.Sprintf("%s shows each task's status", w.List)
	case errors.Is(err, tasks.ErrNotResettable):
		return KindConflict, fmt.Sprintf("only failed or blocked tasks are reset; %s shows each task's status", w.List)
	case errors.Is(err, ErrNoRun):
		return KindNotFound, ""
	case errors.Is(err, ErrNoTask):
		return KindNotFound, fmt.Sprintf("%s shows the ids", w.List)
	case errors.As(err, &ke):
		return ke.kind, ""
	}
	return KindInternal, ""
}
