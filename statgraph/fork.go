package statgraph

import "fmt"

// forkBase returns the checkpoint UpdateState edits: latest, or the one
// chosen with FromCheckpoint.
func (r *run[S]) forkBase(latest *Checkpoint) (*Checkpoint, error) {
	if r.cfg.from == 0 || r.cfg.from == latest.ID {
		return latest, nil
	}
	c, err := r.saver.cp.Get(r.ctx, latest.Thread, r.cfg.from)
	if err != nil {
		return nil, fmt.Errorf("statgraph: fork thread %q from checkpoint %d: %w; History lists its checkpoints", latest.Thread, r.cfg.from, err)
	}
	return c, nil
}
