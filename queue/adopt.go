package queue

// This file is a coordinator taking over units an earlier coordinator
// enqueued: they run under the new run's limits.

import (
	"context"
	"encoding/json"
	"fmt"
)

// adopt gives generation gen of unit id of plan pid, enqueued by an
// earlier coordinator (killed or stopped before its result came) and not
// finished, this Runner's Limits: its River job's args are rewritten, so
// that every attempt a worker starts from now on applies them (park
// settings, prices, budgets and the run's spend row, timeouts, bounds,
// kept workspaces). An attempt running meanwhile keeps the limits it
// started with. A finished job is left as it is.
func (r *Runner) adopt(ctx context.Context, pid, id string, gen int) error {
	limits, err := json.Marshal(r.Limits)
	if err != nil {
		return err
	}
	if _, err := r.Pool.Exec(ctx, `UPDATE river_job j SET args = jsonb_set(j.args, '{limits}', $4::jsonb)
		FROM statgraph_units u
		WHERE u.plan = $1 AND u.unit = $2 AND u.generation = $3 AND j.id = u.job_id
			AND j.state::text NOT IN ('completed', 'cancelled', 'discarded')`, pid, id, gen, limits); err != nil {
		return fmt.Errorf("queue: give unit %s, enqueued by an earlier run, this run's limits: %w", id, err)
	}
	return nil
}
