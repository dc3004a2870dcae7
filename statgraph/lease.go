package statgraph

import (
	"context"
	"fmt"
	"sync"
)

// lease marks one attempt of a node with a WithTimeout as still waited
// for. callBounded ends it when it abandons the attempt; the checkpoints
// of a subgraph run inside the attempt (at any depth) are written through
// leasedCheckpointer, which refuses them from then on, so an abandoned
// child never writes into the thread after its parent moved on (a retry
// of the node continues the same child thread).
type lease struct {
	parent *lease // the lease of an enclosing attempt, if any

	mu   sync.RWMutex // held for reading during a write, for writing by end
	over bool         // guarded by mu
}

type leaseKey struct{}

// withLease returns ctx carrying a new lease inside the one ctx carries.
func withLease(ctx context.Context) (context.Context, *lease) {
	l := &lease{}
	l.parent, _ = ctx.Value(leaseKey{}).(*lease)
	return context.WithValue(ctx, leaseKey{}, l), l
}

// end marks the attempt abandoned, once any write under way finished.
func (l *lease) end() {
	l.mu.Lock()
	l.over = true
	l.mu.Unlock()
}

// isOver reports whether end was called.
func (l *lease) isOver() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.over
}

// hold runs write unless this lease or an enclosing one has ended, and
// keeps them from ending while it runs.
func (l *lease) hold(write func() error) error {
	for x := l; x != nil; x = x.parent {
		x.mu.RLock()
		defer x.mu.RUnlock()
		if x.over {
			return errAbandoned
		}
	}
	return write()
}

var errAbandoned = fmt.Errorf("statgraph: checkpoint not written: the subgraph node running this child was abandoned at its WithTimeout deadline")

// leasedCheckpointer is a child run's view of its parent's checkpointer
// while some enclosing node attempt has a lease: writes go through only
// while the lease holds.
type leasedCheckpointer struct {
	Checkpointer
	l *lease
}

func (c leasedCheckpointer) Put(ctx context.Context, cp *Checkpoint) error {
	return c.l.hold(func() error { return c.Checkpointer.Put(ctx, cp) })
}

func (c leasedCheckpointer) PutWrites(ctx context.Context, thread string, id int64, writes []PendingWrite) error {
	return c.l.hold(func() error { return c.Checkpointer.PutWrites(ctx, thread, id, writes) })
}

func (c leasedCheckpointer) keepsValues() bool {
	vk, ok := c.Checkpointer.(valueKeeper)
	return ok && vk.keepsValues()
}
