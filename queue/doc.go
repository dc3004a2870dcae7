// Package queue runs a plan's units on many worker processes through River
// (github.com/riverqueue/river), a job queue on the Postgres the team
// already operates, with a shared git remote for the branches.
//
// It is its own package so that the tasks package (the plan file and the
// local dispatcher) stays free of Postgres and River: a local run never
// loads them. The pieces:
//
//   - Migrate: River's schema and statgraph's own table, statgraph_units.
//   - Runner: the coordinator's side (statgraph run --queue). It plugs into
//     dispatch.Dispatcher as its Runner, so dependency order, blocked units,
//     tasks.json saves, progress and summary are the local run's own.
//   - Worker: the worker's side (statgraph worker). It takes unit jobs,
//     runs each through dispatch.Dispatcher.RunOne in a clone of the remote,
//     and publishes the branch to the remote.
//
// Exactly-once publishing: each (plan, unit, generation) has one row in
// statgraph_units. A worker that takes the unit's job writes a fresh token
// (a UUID) into the row; it pushes the branch and records the result only
// inside a transaction that holds the row locked and still finds its own
// token there. A worker presumed dead (its job rescued by River after the
// lease) that comes back finds another token and is refused: its result
// is dropped and counted in statgraph_refusals.
//
// Checkpoints are shared: workers keep each unit's checkpoints in the
// queue's Postgres (statgraph/checkpoint/postgres, in a schema of its own)
// and push the unit's workspace commit to the remote as
// statgraph-wip/<plan>/<id> after every step, so a worker that takes over
// a dead one's unit continues from its last checkpoint. The operator's
// view is docs/scale-out.md.
package queue
