package control

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// Options says which plan a Control works on and how its runs are set up.
// The zero value works on ./tasks.json with the zero RunOptions (command
// executors only); cmd/statgraph fills Run from run's flags and the
// environment.
type Options struct {
	// File is the tasks file; "" means "tasks.json".
	File string
	// Tag is the claude-task-master tag; "" means tasks.DefaultTag.
	Tag string
	// Repo is the git repository the tasks change; "" means File's
	// directory.
	Repo string
	// Store is the run store (SQLite); "" means the plan's (Plan.Store).
	Store string
	// Checkpointer, when set, is the run store Tasks and History read
	// instead of the SQLite file at Store. Control does not close it. Runs
	// that Start begins still write to Store.
	Checkpointer statgraph.Checkpointer
	// Queue is the Postgres URL of the queue a run on workers used
	// (statgraph run --queue): without a Checkpointer, Tasks, History and
	// Clean read and clean the workers' checkpoints there. "" means the
	// queue statgraph run --queue recorded for the plan (RecordQueue), if
	// any; one out of reach is then no error: the local run store is read
	// instead and QueueErr says why.
	Queue string

	// Run holds the settings of the runs Start begins, as statgraph run's
	// flags give them (see RunOptions).
	Run RunOptions

	// Poll is how often a Control with subscribers looks at the tasks
	// file, the results journal and the run store to see a run started
	// elsewhere (a terminal); 0 means 500ms. A poll parses the file only
	// when one of the two changed (see Tasks).
	Poll time.Duration

	// StoreOnly skips Open's check that the tasks file loads, for callers
	// that have just checked it themselves (statgraph's commands) or
	// that read only the run store (History, as statgraph history does),
	// which works while the file is missing or being edited. Methods that
	// read the file (Tasks, Start, AddTask, Reset) still fail then.
	StoreOnly bool
}

// Control is one plan's shared backend. Open makes it; Close releases it.
// All methods are safe for concurrent use.
type Control struct {
	o    Options
	plan dispatch.Plan

	storeMu    sync.Mutex    // guards the four below
	store      *sqlite.Store // opened on first need, shared with the runs
	graph      *statgraph.Graph[agents.TaskState]
	queue      queueStore // the workers' store, opened on first need
	queueErr   error      // why the recorded queue could not be read
	queueTried bool

	mu   sync.Mutex
	run  *activeRun           // the in-process run, nil when none
	last RunInfo              // the last run's outcome, once one ended
	live map[string]liveState // per unit, what the in-process run last reported
	asks map[string]*question // pending escalations by unit

	stored storedCache // what Tasks last read from the run store
	read   planRead    // what Tasks last read from the tasks file and journal

	hub *hub
}

// liveState is what the in-process run last reported about a unit.
type liveState struct {
	phase          string
	attempt, max   int
	tokens         int
	usage          llm.Usage
	status, reason string
	parkedUntil    *time.Time // while parked: when the usage limit resets
}

// Open resolves the plan of o (the same derivation as statgraph run's:
// Repo defaults to File's directory, Store to the plan's run store) and
// checks that the tasks file loads. It starts nothing and writes nothing.
// It fails, with an error saying what to fix, when the file is missing or
// not valid, or a state path is a symbolic link.
func Open(o Options) (*Control, error) {
	plan, store, err := Paths(o.File, o.Tag, o.Repo, o.Store)
	if err != nil {
		return nil, err
	}
	if o.File == "" {
		o.File = "tasks.json"
	}
	o.Store = store
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if err := plan.Check(); err != nil {
		return nil, err
	}
	if !o.StoreOnly {
		if _, err := tasks.Load(o.File, o.Tag); err != nil {
			return nil, fmt.Errorf("%s: %w", o.File, err)
		}
	}
	c := &Control{o: o, plan: plan, live: map[string]liveState{}, asks: map[string]*question{}}
	c.hub = newHub(c)
	return c, nil
}

// Paths resolves a tasks file, tag, repository and store the way every
// statgraph command does: file "" is tasks.json, repo "" is the file's
// directory, store "" is the plan's run store under $STATGRAPH_HOME.
func Paths(file, tag, repo, store string) (dispatch.Plan, string, error) {
	if file == "" {
		file = "tasks.json"
	}
	if repo == "" {
		repo = filepath.Dir(file)
	}
	plan, err := dispatch.NewPlan(repo, file, tag)
	if err != nil {
		return dispatch.Plan{}, "", err
	}
	if store == "" {
		store = plan.Store()
	}
	return plan, store, nil
}

// Plan returns the plan the Control works on.
func (c *Control) Plan() dispatch.Plan { return c.plan }

// File returns the tasks file's path as given to Open.
func (c *Control) File() string { return c.o.File }

// Close stops the in-process run, if any (as Stop does) and waits for it,
// ends every subscription and closes the run store.
func (c *Control) Close() error {
	c.mu.Lock()
	r := c.run
	c.mu.Unlock()
	if r != nil {
		if r.cancel != nil {
			r.cancel()
		}
		<-r.done
	}
	c.hub.close()
	c.storeMu.Lock()
	defer c.storeMu.Unlock()
	if c.queue.close != nil {
		c.queue.close()
		c.queue = queueStore{}
	}
	if c.store != nil {
		err := c.store.Close()
		c.store, c.graph = nil, nil
		return err
	}
	return nil
}

// reader returns the graph reading the run store, opening the store when
// it exists (or when create is set); nil, nil when there is no store yet.
func (c *Control) reader(ctx context.Context, create bool) (*statgraph.Graph[agents.TaskState], *sqlite.Store, error) {
	c.storeMu.Lock()
	defer c.storeMu.Unlock()
	if c.store != nil {
		return c.graph, c.store, nil
	}
	if !create {
		cp, err := c.workers(ctx)
		if err != nil {
			return nil, nil, err
		}
		if cp != nil {
			if c.graph == nil {
				g, err := ReaderGraph(cp)
				if err != nil {
					return nil, nil, err
				}
				c.graph = g
			}
			return c.graph, nil, nil
		}
	}
	if _, err := os.Stat(c.o.Store); err != nil && !create {
		return nil, nil, nil
	}
	st, err := openSQLite(ctx, c.o.Store)
	if err != nil {
		return nil, nil, err
	}
	g, err := ReaderGraph(st)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	c.store, c.graph = st, g
	return g, st, nil
}

// workers returns the run store read instead of the local one: the
// Options.Checkpointer, else the store of the queue the plan's run used
// (Options.Queue, else the recorded one), opened on the first call; nil
// when there is neither. A recorded queue out of reach is remembered
// (QueueErr) and read as none. The caller holds storeMu.
func (c *Control) workers(ctx context.Context) (statgraph.Checkpointer, error) {
	if c.o.Checkpointer != nil {
		return c.o.Checkpointer, nil
	}
	if !c.queueTried {
		qs, err := openQueueStore(ctx, c.o.Queue, c.plan)
		switch {
		case err != nil && c.o.Queue != "":
			return nil, err
		case err != nil:
			c.queueErr = err
		default:
			c.queue = qs
		}
		c.queueTried = true
	}
	return c.queue.Checkpointer, nil
}

// QueueErr returns why the queue recorded for the plan by statgraph run
// --queue could not be read (its Postgres out of reach, its password not
// given), once a read tried it; the reads then use the local run store,
// so phases, tokens and histories of the tasks run on workers are
// missing. It returns nil when the plan's runs used no queue or its
// store was read.
func (c *Control) QueueErr() error {
	c.storeMu.Lock()
	defer c.storeMu.Unlock()
	return c.queueErr
}

// where names the run store the reads use, for messages.
func (c *Control) where() string {
	c.storeMu.Lock()
	defer c.storeMu.Unlock()
	if c.queue.where != "" && c.store == nil {
		return c.queue.where
	}
	return c.o.Store
}

// ReaderGraph compiles the orchestrator graph only to read a run store
// (State, History); running it does nothing.
func ReaderGraph(cp statgraph.Checkpointer) (*statgraph.Graph[agents.TaskState], error) {
	nop := agents.ExecutorFunc(func(context.Context, agents.TaskState) (string, error) { return "", nil })
	ver := agents.VerifierFunc(func(context.Context, agents.TaskState) (verifier.Verification, error) {
		return verifier.Verification{}, nil
	})
	return agents.NewGraph(agents.Config{Executor: nop, Verifier: ver}, statgraph.WithCheckpointer(cp))
}

// Graph returns the orchestrator graph, for drawing it (Mermaid, DOT, SVG).
func Graph() (*statgraph.Graph[agents.TaskState], error) {
	return ReaderGraph(statgraph.NewMemoryCheckpointer(false))
}

// PhaseAwaitingApproval is the phase readers show for a task whose plan
// waits for a person to approve, edit or reject it (approve_plan): the
// task's state is still planned, its run stopped or waiting before the
// approve node. No node of the graph sets it.
const PhaseAwaitingApproval = "awaiting-approval"

// NodeOf returns the orchestrator graph node that runs in a task's phase,
// or "" for a phase no node runs in (done, skipped).
func NodeOf(phase string) string {
	switch phase {
	case agents.PhasePlanning:
		return agents.NodePlanner
	case PhaseAwaitingApproval:
		return agents.NodeApprove
	case agents.PhaseExecuting:
		return agents.NodeExecutor
	case agents.PhaseVerify:
		return agents.NodeVerifier
	case agents.PhaseFailed:
		return agents.NodeFailed
	}
	return ""
}

// openDiffs returns what the diffs of unit id are read from without
// changing anything: its workspace's repository while the workspace is
// there (committed attempts only), else its published branch; nil when
// neither is.
func (c *Control) openDiffs(id string) *workspace.Published {
	branch := c.plan.Branch(id)
	if dir := filepath.Join(c.plan.WorkDir(), id); dirExists(dir) {
		if p, err := workspace.OpenPublished(dir, branch); err == nil {
			return p
		}
	}
	if p, err := workspace.OpenPublished(c.plan.Repo, branch); err == nil {
		return p
	}
	return nil
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
