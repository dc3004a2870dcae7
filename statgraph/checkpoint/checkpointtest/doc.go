// Package checkpointtest is the conformance suite of statgraph.Checkpointer:
// one set of tests that every store (statgraph's memory checkpointer,
// checkpoint/sqlite, checkpoint/postgres, and any other) runs from its own
// tests with
//
//	func TestConformance(t *testing.T) {
//		checkpointtest.Run(t, func(t *testing.T) statgraph.Checkpointer { return openEmptyStore(t) })
//	}
//
// Run covers the contract the engine relies on: Put, Get (by id and latest)
// and Range (newest first, limited), every stored field surviving a round
// trip (pending writes, interrupts, resume values, delta rows, engine
// bookkeeping), refusing a second checkpoint with an existing id, thread
// isolation, Delete (a whole thread or below an id), ErrNoCheckpoint, concurrent writers, and the
// engine's own use of the store through a compiled graph: resume after a
// failure without re-running completed nodes, pending writes of a failed
// parallel step, interrupts inside and around nodes, history, replay from a
// checkpoint and forks with UpdateState.
//
// What is particular to one store (schema versions and migrations, rows
// damaged on disk, connection settings) stays in that store's own tests.
//
// The package lives under statgraph/checkpoint so that statgraph itself
// keeps no test-only exported API; it imports testify, which the library
// does not.
package checkpointtest
