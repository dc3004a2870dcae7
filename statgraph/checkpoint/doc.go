// Package checkpoint holds helpers over any statgraph.Checkpointer: they
// use only the store's methods and the rows' documented fields, so they
// work with statgraph's memory checkpointer, the sqlite and postgres
// sub-packages and any other store that passes checkpointtest.
//
// Prune keeps a finished thread's last checkpoints and deletes the rest
// (statgraph clean uses it). The helpers sit in a sub-package rather than in
// statgraph so that the library's surface stays the graph, and the stores
// themselves (sqlite, postgres) are sub-packages of this one so that a
// program imports only the database driver it uses.
package checkpoint
