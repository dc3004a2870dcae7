package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

// record is what a finished task call leaves: its task, a digest of its
// input, its result, and how many interrupts it passed on the way.
type record struct {
	Name       string          `json:"name"`
	Input      string          `json:"input"`
	Output     json.RawMessage `json:"output"`
	Interrupts int             `json:"interrupts,omitempty"`
}

// records are a run's task records: the pending writes of checkpoint 1 of
// thread, one per finished call, named by the call's number.
type records struct {
	cp     statgraph.Checkpointer
	thread string
	mu     sync.Mutex // guards done
	done   map[int]record
}

// openRecords loads the records of thread, creating the thread's
// checkpoint when it has none.
func openRecords(ctx context.Context, cp statgraph.Checkpointer, thread string) (*records, error) {
	rec := &records{cp: cp, thread: thread, done: map[int]record{}}
	c, err := cp.Get(ctx, thread, 1)
	if errors.Is(err, statgraph.ErrNoCheckpoint) {
		err = cp.Put(ctx, &statgraph.Checkpoint{Thread: thread, ID: 1, Base: 1, Source: "input", Created: time.Now().UTC(), State: []byte("null")})
		if err != nil {
			return nil, fmt.Errorf("durable: create the task records %s: %w", thread, err)
		}
		return rec, nil
	}
	if err != nil {
		return nil, fmt.Errorf("durable: load the task records %s: %w", thread, err)
	}
	for _, pw := range c.Pending {
		seq, err := strconv.Atoi(pw.Node)
		var r record
		if err == nil {
			err = json.Unmarshal(pw.Update, &r)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: durable: task record %q of %s: %v", statgraph.ErrCorruptCheckpoint, pw.Node, thread, err)
		}
		rec.done[seq] = r
	}
	return rec, nil
}

func (rec *records) get(seq int) (record, bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	r, ok := rec.done[seq]
	return r, ok
}

// put stores the record of call seq, durably before it returns.
func (rec *records) put(ctx context.Context, seq int, r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	err = rec.cp.PutWrites(context.WithoutCancel(ctx), rec.thread, 1, []statgraph.PendingWrite{{Node: strconv.Itoa(seq), Update: b}})
	if err != nil {
		return fmt.Errorf("durable: record the result of task %q (call %d) in %s: %w", r.Name, seq, rec.thread, err)
	}
	rec.mu.Lock()
	rec.done[seq] = r
	rec.mu.Unlock()
	return nil
}
