// Package cache is the seam of statgraph's node cache (statgraph.WithCache):
// a Cache keeps a node's encoded result under a namespace (the node's name)
// and a key (a function of its input) for a time-to-live, and Memory is a
// Cache in process memory bounded by entries or bytes, dropping the least
// recently used. The checkpoint/sqlite package has a Cache kept in a
// SQLite file, which outlives the process and is bounded the same way. The package imports only the
// standard library.
package cache

import (
	"context"
	"time"
)

// Cache stores values by namespace and key until their time-to-live runs
// out. Implementations are safe for concurrent use. statgraph calls Get
// before running a cached node and Set after it succeeded; an error from
// either is not the node's: the node then runs, or its result is simply
// not kept.
type Cache interface {
	// Get returns the value stored under ns and key, and whether a fresh
	// one was there; an expired value is not returned.
	Get(ctx context.Context, ns, key string) (value []byte, ok bool, err error)
	// Set stores value under ns and key for ttl, replacing what was there;
	// ttl <= 0 keeps it until it is cleared or evicted. The cache may keep
	// value without copying it: the caller must not change it afterwards.
	Set(ctx context.Context, ns, key string, value []byte, ttl time.Duration) error
	// Clear removes every entry of the namespaces ns, or every entry of the
	// cache when ns is empty (LangGraph's clear_cache).
	Clear(ctx context.Context, ns ...string) error
}
