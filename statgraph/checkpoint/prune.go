package checkpoint

import (
	"context"
	"fmt"

	"github.com/statgraph/statgraph/statgraph"
)

// Prune applies retention to a finished thread of store: it keeps the last keep
// checkpoints (keep 1: only the final one) and deletes the older ones,
// except those the kept ones are rebuilt from (the rows from their Base
// on, so at most about one full state's worth more), and returns how many
// it deleted. Every snapshot History returns afterwards loads; State is
// unchanged (History and State are those of the statgraph.Graph whose
// checkpoints they are). The thread goes on as before if it is run again.
//
// It refuses, deleting nothing, a thread whose run has not finished (it
// has next nodes or waits at an interrupt: resuming it needs its
// checkpoints), keep < 1, and checkpoints written by a statgraph older than
// statgraph.Checkpoint.Base, whose chains are unknown. The deletion is one
// Delete call, atomic as the store makes it. Prune is safe for
// concurrent use with reads of the thread; do not run it while a run of
// the same thread is writing. It needs no graph: the rows say what they
// depend on.
func Prune(ctx context.Context, store statgraph.Checkpointer, thread string, keep int) (int, error) {
	if keep < 1 {
		return 0, fmt.Errorf("checkpoint: prune thread %q: keep is %d; keep at least the final checkpoint (1)", thread, keep)
	}
	kept, err := store.Range(ctx, thread, 1, 0, keep)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: prune thread %q: %w", thread, err)
	}
	if len(kept) == 0 {
		return 0, nil
	}
	if latest := kept[0]; len(latest.Next) > 0 || len(latest.Interrupts) > 0 {
		return 0, fmt.Errorf("checkpoint: prune thread %q: its run has not finished (checkpoint %d has next nodes %v); finish or delete the thread first", thread, latest.ID, latest.Next)
	}
	// cut is the oldest checkpoint kept: lower it to the Base of every
	// checkpoint kept until none needs an older one.
	cut := kept[len(kept)-1].ID
	for {
		need := cut
		for _, c := range kept {
			if c.Base <= 0 {
				return 0, fmt.Errorf("checkpoint: prune thread %q: checkpoint %d was written by an older statgraph and does not record which checkpoints it is rebuilt from; nothing was deleted (delete the whole thread instead)", thread, c.ID)
			}
			need = min(need, c.Base)
		}
		if need >= cut {
			break
		}
		if kept, err = store.Range(ctx, thread, need, cut-1, 0); err != nil {
			return 0, fmt.Errorf("checkpoint: prune thread %q: %w", thread, err)
		}
		cut = need
	}
	n, err := store.Delete(ctx, thread, cut) // cut >= 1: IDs start at 1
	if err != nil {
		return 0, fmt.Errorf("checkpoint: prune thread %q: %w", thread, err)
	}
	return n, nil
}
