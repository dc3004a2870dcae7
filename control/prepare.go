package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// PrepareOptions are the choices of one run that Prepare sets up.
type PrepareOptions struct {
	// File is the tasks file; "" means "tasks.json". Tag is its
	// claude-task-master tag; "" means tasks.DefaultTag.
	File, Tag string
	// Plan is the plan of File (see Paths).
	Plan dispatch.Plan
	// StorePath is the SQLite run store opened when Store is nil; ""
	// means Plan.Store().
	StorePath string
	// Run holds the run's settings, from which its Dispatcher is made.
	Run RunOptions
	// RetryFailed sends failed and blocked tasks back to pending, as
	// statgraph run --retry-failed does.
	RetryFailed bool
	// OnWorkers says that the tasks run on workers (statgraph run
	// --queue), which check their own sandbox and setup: Run.Check is
	// skipped. false checks them here.
	OnWorkers bool
	// Load reads and validates the tasks file; nil means tasks.Load.
	// statgraph run passes its own, which prints the file's warnings.
	Load func(file, tag string) (*tasks.File, error)
	// Store opens the run store the run writes its checkpoints to; nil
	// opens (creating it) the SQLite file at StorePath, which
	// Prepared.Close closes. A Store given here is not closed.
	Store func(ctx context.Context) (statgraph.Checkpointer, error)
}

// Prepared is a run ready to start: the plan's lock is held, its file
// loaded, checked and settled, and its run store open. Close releases
// them once the run has ended.
type Prepared struct {
	// Dispatcher runs the plan's tasks with the run's settings; the caller
	// sets what depends on who watches the run (Report, Ask, a queue's
	// Runner) and calls Run.
	Dispatcher *dispatch.Dispatcher
	// Reset are the ids RetryFailed sent back to pending.
	Reset []string
	// Notifier sends the run's notifications (RunOptions.Notify, else the
	// file's defaults.notify); nil when there are none to send. The
	// caller wraps the Dispatcher's Report with it and calls its End.
	Notifier *Notifier

	lock  *tasks.FileLock
	close func() error
}

// Prepare sets up a run of a plan as statgraph run, statgraph serve and
// statgraph mcp all do, in one order: take the plan's lock, load the
// tasks file, check the repository and state paths (CheckPlan) and, for a
// run here, the sandbox and setup (RunOptions.Check), settle the results
// journal (Settle, with RetryFailed), and open the run store.
//
// The lock comes first because every later step reads what another run
// writes: a file loaded before the lock can be stale by the time the lock
// is taken (another run saved it in between), and this run would then
// overwrite that run's outcomes with it; the journal settled without the
// lock could be one another run is still appending to. With the lock
// first, what this run reads is what no other run changes until Close. A
// run going on elsewhere is therefore also the first thing said
// (ErrRunning), before any check.
//
// On error nothing is changed (the lock is released, a store Prepare
// opened is closed) and the error says what to do.
func Prepare(ctx context.Context, o PrepareOptions) (*Prepared, error) {
	if o.File == "" {
		o.File = "tasks.json"
	}
	load := o.Load
	if load == nil {
		load = func(file, tag string) (*tasks.File, error) {
			f, err := tasks.Load(file, tag)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			return f, nil
		}
	}
	// A missing tasks file (or directory) is reported as load reports it,
	// not as a lock file that cannot be created beside it.
	if _, err := os.Stat(o.File); errors.Is(err, fs.ErrNotExist) {
		_, lerr := load(o.File, o.Tag)
		return nil, cmpOr(lerr, err)
	}
	lock, err := lockPlan(o.File)
	if err != nil {
		return nil, err
	}
	p, err := prepareLocked(ctx, o, load)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	p.lock = lock
	return p, nil
}

// prepareLocked makes Prepare's steps after the lock.
func prepareLocked(ctx context.Context, o PrepareOptions, load func(string, string) (*tasks.File, error)) (*Prepared, error) {
	f, err := load(o.File, o.Tag)
	if err != nil {
		return nil, err
	}
	if err := CheckPlan(o.Plan); err != nil {
		return nil, err
	}
	if !o.OnWorkers {
		if err := o.Run.Check(ctx, f, o.Plan.Repo); err != nil {
			return nil, err
		}
	}
	reset, err := Settle(f, o.Plan, o.RetryFailed)
	if err != nil {
		return nil, err
	}
	p := &Prepared{Reset: reset}
	var st statgraph.Checkpointer
	if o.Store != nil {
		st, err = o.Store(ctx)
	} else {
		path := o.StorePath
		if path == "" {
			path = o.Plan.Store()
		}
		var s *sqlite.Store
		s, err = openSQLite(ctx, path)
		st, p.close = s, func() error { return s.Close() }
	}
	if err != nil {
		return nil, err
	}
	p.Dispatcher = o.Run.Dispatcher(f, o.Plan.Repo, st)
	if o.Store == nil {
		// A run here keeps the repository's lessons beside its run store.
		lessons, err := OpenLessons(ctx)
		if err != nil {
			return nil, errors.Join(err, p.closeStore())
		}
		p.Dispatcher.Lessons = lessons
		closeStore := p.close
		p.close = func() error { return errors.Join(lessons.Close(), closeStore()) }
	}
	p.Notifier = NewNotifier(o.Run.Notify, f.Defaults.Notify, o.File, o.Run.Log)
	return p, nil
}

// Close releases what Prepare took: the run store it opened and the
// plan's lock. Call it once the run has ended.
func (p *Prepared) Close() error {
	var err error
	if p.close != nil {
		err = p.close()
	}
	return errors.Join(err, p.lock.Unlock())
}

// closeStore closes the run store Prepare opened, if it did.
func (p *Prepared) closeStore() error {
	if p.close == nil {
		return nil
	}
	return p.close()
}

// openSQLite opens, creating it and its directory, the SQLite run store
// at path.
func openSQLite(ctx context.Context, path string) (*sqlite.Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("run store: %w", err)
	}
	return sqlite.Open(ctx, path)
}

// lockPlan takes the lock of the tasks file, naming a run that holds it.
func lockPlan(file string) (*tasks.FileLock, error) {
	lock, err := tasks.Lock(file)
	var le *tasks.LockedError
	if errors.As(err, &le) {
		return nil, fmt.Errorf("%w: %w", ErrRunning, err)
	}
	return lock, err
}

// cmpOr returns the first non-nil error.
func cmpOr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
