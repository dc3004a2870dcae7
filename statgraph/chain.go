package statgraph

import (
	"context"
	"fmt"
)

// chainStore is a Checkpointer whose Get answers from rows read ahead,
// falling back to the store behind it for the others. It lets loadState,
// loadCounters and loadExtra follow Parent links through rows read with one
// Range instead of one Get each.
type chainStore struct {
	Checkpointer
	thread string
	rows   map[int64]*Checkpoint
}

func (c *chainStore) Get(ctx context.Context, thread string, id int64) (*Checkpoint, error) {
	if id != 0 && thread == c.thread {
		if r, ok := c.rows[id]; ok {
			return r, nil
		}
	}
	return c.Checkpointer.Get(ctx, thread, id)
}

// readChain returns a Checkpointer for loading checkpoint c: it holds the
// rows from c.Base up to c, read with one Range, and the checkpoints in
// also. When c needs no other row (c.Base == c.ID) or its Base is unknown
// (written by an older statgraph), the rows are c and also only, and loads
// fall back to store one Get at a time.
func readChain(ctx context.Context, store Checkpointer, c *Checkpoint, also ...*Checkpoint) (Checkpointer, error) {
	cs := &chainStore{Checkpointer: store, thread: c.Thread, rows: make(map[int64]*Checkpoint, len(also)+1)}
	if c.Base > 0 && c.Base < c.ID {
		rows, err := store.Range(ctx, c.Thread, c.Base, c.ID-1, 0)
		if err != nil {
			return nil, fmt.Errorf("statgraph: loading checkpoints %d..%d of thread %q, on which checkpoint %d depends: %w", c.Base, c.ID-1, c.Thread, c.ID, err)
		}
		for _, r := range rows {
			cs.rows[r.ID] = r
		}
	}
	cs.rows[c.ID] = c
	for _, r := range also {
		cs.rows[r.ID] = r
	}
	return cs, nil
}
