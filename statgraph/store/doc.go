// Package store is statgraph's long-term memory (LangGraph's BaseStore):
// JSON objects kept under a key in a hierarchical namespace, outliving any
// one thread, so that what a graph learns in one run is there in the next.
//
// A namespace is a path of labels, []string{"users", "ada", "prefs"}; Search
// and ListNamespaces take a prefix of it. Each Item records when it was
// created and last updated; an Item put with a TTL expires that long after
// its last write or read (reads refresh it, as LangGraph's refresh_ttl
// default does), and expired items are invisible at once and removed by
// Sweep.
//
// The Store interface has three implementations that run one conformance
// suite (package storetest): NewMemory here (standard library only, for
// tests and single processes), and ItemStore in statgraph/checkpoint/sqlite
// and statgraph/checkpoint/postgres, beside the checkpointers, sharing
// their files or servers. A graph compiled with statgraph.WithStore hands
// its Store to nodes through statgraph.RuntimeOf(ctx).Store.
//
// The helpers NamespaceText, ParseNamespace, PrefixRange, Canonical and
// NamespaceQuery.Select are for implementations, so that all of them
// validate, order and filter alike.
package store
