package control

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/internal/taskid"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/tasks"
)

// TaskInfo is one unit of the plan as a board shows it.
type TaskInfo struct {
	ID     string `json:"id"`
	Parent string `json:"parent,omitempty"`
	Title  string `json:"title"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// ParkedUntil is when a parked task's usage limit resets and the run
	// starts it again.
	ParkedUntil  *time.Time `json:"parked_until,omitempty"`
	Dependencies []string   `json:"dependencies"`
	// Phase and Node are where the task's graph is (Node "" when no node
	// runs in that phase); from the in-process run's reports while it
	// runs, else from the run store. A task whose plan waits for a
	// person's approval is in PhaseAwaitingApproval, at node "approve".
	Phase string `json:"phase,omitempty"`
	Node  string `json:"node,omitempty"`
	// Attempt counts verifications so far (retry_count), of MaxAttempts.
	Attempt     int `json:"attempt"`
	MaxAttempts int `json:"max_attempts"`
	Tokens      int `json:"tokens"`
	// Usage is the task's spend (tokens, cached input, cost) and CostUSD
	// its cost in US dollars, null when unknown (a model without a price)
	// or when the task has not run.
	Usage   llm.Usage `json:"usage"`
	CostUSD *float64  `json:"cost_usd"`
	// Question is the pending escalation or plan approval of the task, if
	// any (answer it with Control.Answer or Control.Reply).
	Question *Question `json:"question,omitempty"`
}

// Tasks returns every unit of the plan in file order: its status from the
// tasks file with the results journal applied (so a run going on elsewhere,
// or one that was killed, shows its outcomes), its dependencies, and its
// phase, node, attempt and tokens from the in-process run or the run
// store. So that a poll of a large plan costs little, the tasks file is
// parsed again only when it or the journal changed (planRead: their stat,
// or their content's hash within 2 s of a write), and the run store is
// read only for units in progress and units whose status changed since
// the last call (storedCache). It writes nothing. It fails when the tasks
// file cannot be read or is not valid (an edit in progress), or the run
// store cannot be read.
func (c *Control) Tasks(ctx context.Context) ([]TaskInfo, error) {
	base, ndeps, err := c.read.read(c.o.File, c.o.Tag, c.plan)
	if err != nil {
		return nil, err
	}
	return c.tasksFrom(ctx, base, ndeps)
}

// TasksOf is Tasks on f, the plan's tasks file as the caller has just read
// it (tasks.Load of Options.File with Options.Tag), for a caller that reads
// the file itself first (to report its problems and warnings) and should
// not read it twice. It applies the results journal to f, and fails as
// Tasks does when the journal or the run store cannot be read.
func (c *Control) TasksOf(ctx context.Context, f *tasks.File) ([]TaskInfo, error) {
	if _, err := tasks.ApplyJournal(f, c.plan.Journal()); err != nil {
		return nil, err
	}
	base, ndeps := unitsOf(f)
	return c.tasksFrom(ctx, base, ndeps)
}

// tasksFrom completes base, the units as the tasks file and journal give
// them (shared: it copies before changing them), with what the in-process
// run and the run store know.
func (c *Control) tasksFrom(ctx context.Context, base []TaskInfo, ndeps int) ([]TaskInfo, error) {
	g, _, err := c.reader(ctx, false)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	live := make(map[string]liveState, len(c.live))
	for k, v := range c.live {
		live[k] = v
	}
	c.mu.Unlock()
	asks := c.Questions()
	out := make([]TaskInfo, len(base))
	deps := make([]string, 0, ndeps) // one array for every unit's copy
	for i, ti := range base {
		n := len(deps)
		deps = append(deps, ti.Dependencies...)
		ti.Dependencies = deps[n:len(deps):len(deps)]
		if l, ok := live[ti.ID]; ok {
			ti.Phase, ti.Attempt, ti.Tokens, ti.Usage = l.phase, l.attempt, l.tokens, l.usage
			if l.max > 0 {
				ti.MaxAttempts = l.max
			}
			if l.status != "" {
				ti.Status, ti.Reason, ti.ParkedUntil = l.status, l.reason, l.parkedUntil
			}
		} else if g != nil {
			s, err := c.stored.read(ctx, g, c.plan, ti.ID, ti.Status)
			if err != nil {
				return nil, errStoreRead(ti.ID, c.where(), err)
			}
			ti.Phase, ti.Tokens, ti.Usage = s.phase, s.tokens, s.usage
			if ti.Status == tasks.StatusInProgress {
				ti.Attempt = s.retry
			}
		}
		if q, ok := asks[ti.ID]; ok {
			ti.Question = &q
			if q.Kind == gate.KindApproval {
				ti.Phase = PhaseAwaitingApproval
			}
		}
		if ti.Status == tasks.StatusInProgress {
			ti.Node = NodeOf(ti.Phase)
		}
		if ti.Phase != "" {
			ti.CostUSD = ti.Usage.KnownCost()
		}
		out[i] = ti
	}
	return out, nil
}

// TotalUsage returns what the tasks ts spent together (the plan's cost
// when ts is all of Tasks); its cost is known when every task's is.
func TotalUsage(ts []TaskInfo) llm.Usage {
	var u llm.Usage
	for _, t := range ts {
		u = u.Plus(t.Usage)
	}
	return u
}

// History is a task's record from its last checkpoint, with each attempt's
// diff: what statgraph history --json prints.
type History struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Phase      string `json:"phase"`
	RetryCount int    `json:"retry_count"`
	MaxRetries int    `json:"max_retries"`
	Tokens     int    `json:"tokens"`
	// Usage is the task's spend; CostUSD its cost, null when unknown.
	// Each attempt's own spend is in its "usage".
	Usage        llm.Usage     `json:"usage"`
	CostUSD      *float64      `json:"cost_usd"`
	Plan         agents.Plan   `json:"plan"`
	Attempts     []AttemptInfo `json:"attempts"`
	ErrorHistory []string      `json:"error_history"`
	Warnings     []string      `json:"warnings"`
	Decision     string        `json:"decision,omitempty"`
	// Selection, for a best-of-N task, holds its candidates side by side
	// and the choice among them; the rest of History is the winner's.
	Selection *agents.Selection `json:"selection,omitempty"`
	Branch    string            `json:"branch,omitempty"`
	Diff      string            `json:"diff,omitempty"`
	// Uncommitted is the diff of the work in the task's live workspace
	// that no attempt has committed yet (the agent at work), against the
	// workspace's last commit; "" when there is none or no workspace.
	Uncommitted string `json:"uncommitted,omitempty"`
}

// AttemptInfo is one attempt: the agent's summary (its final message),
// the checks' failure output (Errors, as tails), the feedback sent back,
// its tokens, and the diff of its commit.
type AttemptInfo struct {
	agents.Attempt
	Diff string `json:"diff,omitempty"`
}

// History reads task id's last checkpointed state. With diffs set it adds
// each attempt's diff and the branch's diff against its base, read from
// the task's workspace while it exists (committed attempts) or else from
// its published branch, and the workspace's uncommitted work
// (workspace.WorktreeDiff), without changing or locking either: a run may
// be using the workspace. A workspace that cannot be diffed (no git
// program) leaves Uncommitted empty. It fails with an error
// wrapping ErrNoTask-like taskid problems for a malformed id, ErrNoRun when
// the task has no recorded run, or the store's error.
func (c *Control) History(ctx context.Context, id string, diffs bool) (History, error) {
	if why := taskid.Reason(id); why != "" {
		return History{}, fmt.Errorf("task id %q: %s (%w)", id, why, ErrNoTask)
	}
	g, _, err := c.reader(ctx, false)
	if err != nil {
		return History{}, err
	}
	if g == nil {
		return History{}, fmt.Errorf("task %s has %w: nothing has run yet (no run store at %s)", id, ErrNoRun, c.o.Store)
	}
	snap, err := g.State(ctx, c.plan.Thread(id))
	if errors.Is(err, statgraph.ErrNoCheckpoint) {
		return History{}, fmt.Errorf("task %s has %w in %s", id, ErrNoRun, c.where())
	}
	if err != nil {
		return History{}, err
	}
	s := snap.State
	h := History{ID: id, Title: s.Task.Title, Phase: s.Phase, RetryCount: s.RetryCount, MaxRetries: s.MaxRetries,
		Tokens: s.Tokens, Usage: s.Spend(), CostUSD: s.Spend().KnownCost(), Plan: s.Plan, Attempts: []AttemptInfo{}, ErrorHistory: s.ErrorHistory, Warnings: s.Warnings,
		Decision: s.Decision, Selection: s.Selection}
	if h.ErrorHistory == nil {
		h.ErrorHistory = []string{}
	}
	if h.Warnings == nil {
		h.Warnings = []string{}
	}
	var pub interface {
		DiffCommit(ctx context.Context, hash string) (string, error)
		Diff(ctx context.Context, first string) (string, error)
		Branch() string
	}
	if diffs {
		if p := c.openDiffs(id); p != nil {
			pub = p
		}
	}
	for _, a := range s.Attempts {
		ai := AttemptInfo{Attempt: a}
		if pub != nil && a.Commit != "" {
			if d, err := pub.DiffCommit(ctx, a.Commit); err == nil {
				ai.Diff = d
			}
		}
		h.Attempts = append(h.Attempts, ai)
	}
	if diffs {
		if dir := filepath.Join(c.plan.WorkDir(), id); dirExists(dir) {
			if d, err := workspace.WorktreeDiff(ctx, dir); err == nil {
				h.Uncommitted = d
			}
		}
	}
	if pub != nil {
		h.Branch = pub.Branch()
		if len(s.Attempts) > 0 && s.Attempts[0].Commit != "" {
			if d, err := pub.Diff(ctx, s.Attempts[0].Commit); err == nil {
				h.Diff = d
			}
		}
	}
	return h, nil
}
