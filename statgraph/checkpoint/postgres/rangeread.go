package postgres

import (
	"context"
	"fmt"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/internal/rowenc"
)

// Range and Delete serve the paged History and the retention that
// statgraph.Checkpointer is gaining (issue 13); each is one statement on
// the primary key (tid, id), a range scan of the thread's rows.

// Range returns the checkpoints of thread with IDs in [from, to] (to <= 0:
// no upper bound), newest first, the newest limit of them when limit > 0.
// An empty range, or a thread without checkpoints, gives an empty list and
// no error; a row that does not decode gives an error wrapping
// statgraph.ErrCorruptCheckpoint. Safe for concurrent use.
func (s *Store) Range(ctx context.Context, thread string, from, to int64, limit int) ([]*statgraph.Checkpoint, error) {
	var upper, max *int64 // NULL: no bound, no limit
	if to > 0 {
		upper = &to
	}
	if limit > 0 {
		n := int64(limit)
		max = &n
	}
	return s.query(ctx, thread, " AND c.id >= $2 AND ($3::bigint IS NULL OR c.id <= $3) ORDER BY c.id DESC LIMIT $4", from, upper, max)
}

// Delete removes the checkpoints of thread with IDs below before, or every
// checkpoint of thread when before <= 0, in one statement (one
// transaction), and returns how many it removed. Deleting from a thread
// without checkpoints is not an error. The thread keeps its number, so a
// Put racing with a whole-thread Delete either lands before the delete (and
// is deleted) or after it (and starts the thread again). Postgres reuses the
// space of removed rows after its autovacuum has passed. Safe for
// concurrent use.
func (s *Store) Delete(ctx context.Context, thread string, before int64) (int, error) {
	if before <= 0 {
		tag, err := s.pool.Exec(ctx, s.del, thread)
		if err != nil {
			return 0, fmt.Errorf("postgres: deleting thread %q from %s: %w", thread, s.where, err)
		}
		return int(tag.RowsAffected()), nil
	}
	tag, err := s.pool.Exec(ctx, s.del+" AND id < $2", thread, before)
	if err != nil {
		return 0, fmt.Errorf("postgres: deleting checkpoints before %d of thread %q from %s: %w", before, thread, s.where, err)
	}
	return int(tag.RowsAffected()), nil
}

// PutWrites appends writes to the pending writes of checkpoint id of
// thread in one statement, durable when it returns as Put is. Safe for
// concurrent use. A checkpoint that does not exist gives an error wrapping
// statgraph.ErrNoCheckpoint.
func (s *Store) PutWrites(ctx context.Context, thread string, id int64, writes []statgraph.PendingWrite) error {
	text, err := rowenc.EncodeWrites(writes)
	if err != nil || text == "" {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.putWrites, thread, id, text)
	if err != nil {
		return fmt.Errorf("postgres: saving pending writes of checkpoint %d of thread %q in %s: %w", id, thread, s.where, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: thread %q has no checkpoint %d in %s: %w", thread, id, s.where, statgraph.ErrNoCheckpoint)
	}
	return nil
}
