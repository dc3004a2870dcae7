package queue

// This file keeps the checkpoint threads of plans of different
// repositories apart in the store a queue's workers share.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/statgraph/statgraph/statgraph"
)

// Scope returns the prefix of the checkpoint threads of the plans run
// through remote: a hash of the remote's URL (a URL may carry a
// credential, so it is not stored), "r-" and 16 hex digits. A plan's key
// (dispatch.Plan.Key) names the tasks file within its repository only, so
// every repository's root tasks.json has the same one; PlanID tells their
// units apart by the remote, and Scope their threads likewise.
func Scope(remote string) string {
	sum := sha256.Sum256([]byte(remote))
	return "r-" + hex.EncodeToString(sum[:8])
}

// ScopedThread returns the name thread has in the shared store for the
// plans run through remote (see Scoped).
func ScopedThread(remote, thread string) string { return Scope(remote) + "/" + thread }

// Scoped returns cp seen by the plans run through remote: every thread t
// is stored as ScopedThread(remote, t), and checkpoints read back carry
// the name t again, so that the units of two repositories sharing a queue
// never read or write each other's checkpoints. It is safe for concurrent
// use as cp is, and returns cp's errors as they are.
func Scoped(cp statgraph.Checkpointer, remote string) statgraph.Checkpointer {
	return scoped{cp: cp, prefix: Scope(remote) + "/"}
}

type scoped struct {
	cp     statgraph.Checkpointer
	prefix string
}

func (s scoped) Put(ctx context.Context, c *statgraph.Checkpoint) error {
	in := *c
	in.Thread = s.prefix + c.Thread
	return s.cp.Put(ctx, &in)
}

func (s scoped) Get(ctx context.Context, thread string, id int64) (*statgraph.Checkpoint, error) {
	c, err := s.cp.Get(ctx, s.prefix+thread, id)
	if err != nil {
		return nil, err
	}
	return s.unscope(c, thread), nil
}

func (s scoped) Range(ctx context.Context, thread string, from, to int64, limit int) ([]*statgraph.Checkpoint, error) {
	cs, err := s.cp.Range(ctx, s.prefix+thread, from, to, limit)
	return s.unscopeAll(cs, thread), err
}

func (s scoped) Delete(ctx context.Context, thread string, before int64) (int, error) {
	return s.cp.Delete(ctx, s.prefix+thread, before)
}

func (s scoped) PutWrites(ctx context.Context, thread string, id int64, writes []statgraph.PendingWrite) error {
	return s.cp.PutWrites(ctx, s.prefix+thread, id, writes)
}

// unscope returns c named thread; c itself is not changed (checkpoints a
// store returns may be shared).
func (s scoped) unscope(c *statgraph.Checkpoint, thread string) *statgraph.Checkpoint {
	if c == nil {
		return nil
	}
	out := *c
	out.Thread = thread
	return &out
}

func (s scoped) unscopeAll(cs []*statgraph.Checkpoint, thread string) []*statgraph.Checkpoint {
	if cs == nil {
		return nil
	}
	out := make([]*statgraph.Checkpoint, len(cs))
	for i, c := range cs {
		out[i] = s.unscope(c, thread)
	}
	return out
}
