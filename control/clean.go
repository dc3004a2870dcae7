package control

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/queue"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
)

// Cleaned is what Clean removed.
type Cleaned struct {
	// Cleaned is what went from this machine: workspaces, caches and
	// prompts, and the checkpoints (Threads, Pruned) of the local run
	// store; Bytes includes Freed.
	dispatch.Cleaned
	// Store is the local run store; Compacted says whether it was
	// compacted (after deleting checkpoints there) and Freed by how much.
	Store     string
	Compacted bool
	Freed     int64
	// Queue is what went from the store of the queue the plan's run on
	// workers used (see Options.Queue); zero when it used none.
	Queue QueueCleaned
	// Remote is the git remote the plan's run on workers pushed to, and
	// WIP the finished units whose work-in-progress branches were deleted
	// there.
	Remote string
	WIP    []string
}

// QueueCleaned is what Clean deleted in a queue's store.
type QueueCleaned struct {
	// Where is the queue's URL without its password.
	Where string
	// Threads are the units whose checkpoints were deleted, Pruned the
	// units whose checkpoints were pruned (keep > 0) with how many went.
	Threads []string
	Pruned  map[string]int
}

// Clean removes, under the plan's lock and after settling the results
// journal (a task done only there is finished too), the workspaces, tool
// caches, prompts and checkpoints of the finished tasks and what a killed
// run left (dispatch.Dispatcher.CleanKeeping, keeping the last keep
// checkpoints of each thread when keep > 0), then compacts the local run
// store; and, for a plan whose run went to workers, the finished units'
// checkpoints in the queue's store and their work-in-progress branches on
// the remote. Published branches and the tasks file are kept. It returns
// what it removed, also when it fails part way: ErrRunning while a run
// holds the lock; for a queue out of reach, an error saying so after the
// local cleaning is done.
func (c *Control) Clean(ctx context.Context, keep int) (Cleaned, error) {
	out := Cleaned{Store: c.o.Store}
	if keep < 0 {
		return out, kinded(KindInvalid, fmt.Errorf("--keep-checkpoints is %d; give 0 (delete the threads) or more", keep))
	}
	if _, err := os.Stat(c.o.File); err != nil {
		return out, fmt.Errorf("%s: %w", c.o.File, err)
	}
	lock, err := lockPlan(c.o.File)
	if err != nil {
		return out, err
	}
	defer lock.Unlock()
	f, err := tasks.Load(c.o.File, c.o.Tag)
	if err != nil {
		return out, fmt.Errorf("%s: %w", c.o.File, err)
	}
	if err := tasks.SettleJournal(f, c.plan.Journal()); err != nil {
		return out, err
	}
	defer c.hub.resyncAll()
	d := &dispatch.Dispatcher{File: f, Repo: c.plan.Repo}
	c.storeMu.Lock()
	st := c.store
	c.storeMu.Unlock()
	if _, serr := os.Stat(c.o.Store); st == nil && serr == nil {
		// A handle of its own: the reads go on using the store they use.
		if st, err = openSQLite(ctx, c.o.Store); err != nil {
			return out, err
		}
		defer st.Close()
	}
	if st != nil {
		d.Checkpointer = st
	} else {
		d.Checkpointer = statgraph.NewMemoryCheckpointer(false) // no run store: no checkpoints to delete
	}
	out.Cleaned, err = d.CleanKeeping(ctx, keep)
	if st != nil && err == nil && (len(out.Threads) > 0 || len(out.Pruned) > 0) {
		// Deleted rows only free pages inside the file; VACUUM gives them back.
		n, verr := st.Vacuum(ctx)
		if verr != nil {
			return out, verr
		}
		out.Compacted, out.Freed = true, max(n, 0)
		out.Bytes += out.Freed
	}
	if err != nil {
		return out, err
	}
	c.stored.forget()
	// Both, whichever fails: they are independent.
	qerr := c.cleanQueue(ctx, f, keep, &out)
	rerr := c.cleanRemote(ctx, f, &out)
	return out, errors.Join(qerr, rerr)
}

// cleanQueue deletes (or with keep > 0 prunes) the checkpoints the workers
// kept in the queue's store for the plan's finished units; nothing when
// its run used no queue.
func (c *Control) cleanQueue(ctx context.Context, f *tasks.File, keep int, out *Cleaned) error {
	c.storeMu.Lock()
	cp, err := c.workers(ctx)
	qerr, where := c.queueErr, c.queue.where
	c.storeMu.Unlock()
	if err == nil {
		err = qerr
	}
	if err != nil {
		return fmt.Errorf("%w; the local workspaces and checkpoints are cleaned, run clean again to delete the checkpoints in the queue", err)
	}
	if cp == nil {
		return nil
	}
	if where == "" {
		where = "the workers' run store"
	}
	d := &dispatch.Dispatcher{File: f, Repo: c.plan.Repo, Checkpointer: cp}
	res, err := d.CleanKeeping(ctx, keep)
	out.Queue = QueueCleaned{Where: where, Threads: res.Threads, Pruned: res.Pruned}
	return err
}

// cleanRemote deletes, on the remote the plan's last queue run used, the
// work-in-progress branches of its finished units (see queue.CleanWIP);
// nothing when the plan never ran on a queue.
func (c *Control) cleanRemote(ctx context.Context, f *tasks.File, out *Cleaned) error {
	r, err := RecordedQueue(c.plan)
	if err != nil || r.Remote == "" {
		return err
	}
	out.Remote = r.Remote
	out.WIP, err = queue.CleanWIP(ctx, c.plan.Repo, r.Remote, c.plan.Key, func(id string) string {
		t, ok := f.Task(id)
		if !ok {
			return ""
		}
		if t.Status == "" {
			return tasks.StatusPending
		}
		return t.Status
	})
	return err
}
