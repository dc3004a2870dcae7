package queue

// This file is the coordinator's poll loop: one query per tick reads the
// rows of every unit the Runner waits for, with their River jobs, instead
// of one query per unit.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// waitKey names the generation of a unit a RunUnit call waits for.
type waitKey struct {
	plan, unit string
	gen        int
}

// waitOutcome is what the poll loop hands a waiter: its unit's recorded
// result, or the error that stopped reading it.
type waitOutcome struct {
	res *result
	err error
}

// waiters is the Runner's set of waiting units and its one poll loop,
// which runs while the set is not empty. Safe for concurrent use.
type waiters struct {
	mu      sync.Mutex
	waiting map[waitKey]chan waitOutcome
	polling bool
}

func (r *Runner) poll() time.Duration {
	if r.Poll > 0 {
		return r.Poll
	}
	return 200 * time.Millisecond
}

// subscribe adds key to the units the poll loop reads, starting the loop
// if it is not running, and returns the channel its outcome arrives on
// (once). The caller unsubscribes when it stops waiting.
func (r *Runner) subscribe(key waitKey) <-chan waitOutcome {
	r.waiters.mu.Lock()
	defer r.waiters.mu.Unlock()
	if r.waiting == nil {
		r.waiting = map[waitKey]chan waitOutcome{}
	}
	ch := make(chan waitOutcome, 1)
	r.waiting[key] = ch
	if !r.polling {
		r.polling = true
		go r.pollLoop()
	}
	return ch
}

func (r *Runner) unsubscribe(key waitKey) {
	r.waiters.mu.Lock()
	defer r.waiters.mu.Unlock()
	delete(r.waiting, key)
}

// pollLoop reads the waiting units' rows every Poll until none is left.
func (r *Runner) pollLoop() {
	t := time.NewTicker(r.poll())
	defer t.Stop()
	for range t.C {
		r.waiters.mu.Lock()
		if len(r.waiting) == 0 {
			r.polling = false
			r.waiters.mu.Unlock()
			return
		}
		keys := make([]waitKey, 0, len(r.waiting))
		for k := range r.waiting {
			keys = append(keys, k)
		}
		r.waiters.mu.Unlock()
		out := r.readResults(keys)
		r.waiters.mu.Lock()
		for k, o := range out {
			if ch, ok := r.waiting[k]; ok {
				delete(r.waiting, k) // one outcome each; the channel has room for it
				ch <- o
			}
		}
		r.waiters.mu.Unlock()
	}
}

// readResults reads, in one query, each key's row (its unit's generation)
// with its River job, and returns an outcome for each key whose result is
// recorded, errJobEnded for each whose job ended without one (see
// jobEndedSQL), and an error for every key when the query fails. Reading the
// job in the same query, one statement and so one snapshot, sees a result
// a worker recorded before River finalized its job; it replaces a query
// per unit every few seconds.
func (r *Runner) readResults(keys []waitKey) map[waitKey]waitOutcome {
	plans, units, gens := make([]string, len(keys)), make([]string, len(keys)), make([]int32, len(keys))
	for i, k := range keys {
		plans[i], units[i], gens[i] = k.plan, k.unit, int32(k.gen)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := map[waitKey]waitOutcome{}
	fail := func(err error) map[waitKey]waitOutcome {
		for _, k := range keys {
			out[k] = waitOutcome{err: fmt.Errorf("queue: read unit %s: %w", k.unit, err)}
		}
		return out
	}
	rows, err := r.Pool.Query(ctx, `SELECT u.plan, u.unit, u.generation, u.result, `+jobEndedSQL+`
		FROM statgraph_units u
		JOIN unnest($1::text[], $2::text[], $3::int[]) AS w(plan, unit, generation)
			ON u.plan = w.plan AND u.unit = w.unit AND u.generation = w.generation
		LEFT JOIN river_job j ON j.id = u.job_id`, plans, units, gens)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k waitKey
		var data []byte
		var ended bool
		if err := rows.Scan(&k.plan, &k.unit, &k.gen, &data, &ended); err != nil {
			return fail(err)
		}
		switch {
		case data != nil:
			var res result
			if err := json.Unmarshal(data, &res); err != nil {
				out[k] = waitOutcome{err: fmt.Errorf("queue: unit %s generation %d has a corrupt result in statgraph_units: %w", k.unit, k.gen, err)}
				continue
			}
			out[k] = waitOutcome{res: &res}
		case ended:
			out[k] = waitOutcome{err: errJobEnded}
		}
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	return out
}
