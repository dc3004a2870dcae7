package statgraph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
)

// NewMemoryCheckpointer returns an empty Checkpointer that keeps checkpoints
// in memory, for tests, short-lived processes and benchmarks. Nothing
// survives the process.
//
// With encode false it keeps the live state values rather than their
// encoding, which makes a checkpoint cost a few hundred nanoseconds; it then
// relies on nodes treating the state as a value (see Builder.AddNode). With encode
// true it stores the states encoded by the graph's Codec, as a durable store
// would, so that a test sees what a resumed process would see.
//
// The store is safe for concurrent use. Its methods fail only with
// ErrNoCheckpoint (Get, PutWrites) or when Put is given a checkpoint ID that
// is not after the thread's latest.
func NewMemoryCheckpointer(encode bool) Checkpointer { return &memoryCheckpointer{encode: encode} }

// memoryCheckpointer is the Checkpointer of NewMemoryCheckpointer; a zero
// value is ready to use and keeps live values.
type memoryCheckpointer struct {
	encode bool // store encoded states instead of live values

	mu      sync.RWMutex // guards threads
	threads map[string][]*Checkpoint
}

func (m *memoryCheckpointer) keepsValues() bool { return !m.encode }

// Put stores cp.
func (m *memoryCheckpointer) Put(_ context.Context, cp *Checkpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.threads == nil {
		m.threads = make(map[string][]*Checkpoint)
	}
	list := m.threads[cp.Thread]
	if n := len(list); n > 0 && list[n-1].ID >= cp.ID {
		return fmt.Errorf("statgraph: thread %q: checkpoint id %d is not after %d", cp.Thread, cp.ID, list[n-1].ID)
	}
	m.threads[cp.Thread] = append(list, cp)
	return nil
}

// Get returns checkpoint id of thread, or its latest when id is 0.
func (m *memoryCheckpointer) Get(_ context.Context, thread string, id int64) (*Checkpoint, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	list := m.threads[thread]
	if len(list) == 0 {
		return nil, fmt.Errorf("thread %q: %w", thread, ErrNoCheckpoint)
	}
	if id == 0 {
		return list[len(list)-1], nil
	}
	// IDs increase along the list (Put refuses anything else).
	i, found := slices.BinarySearchFunc(list, id, func(cp *Checkpoint, id int64) int { return cmp.Compare(cp.ID, id) })
	if !found {
		return nil, fmt.Errorf("thread %q checkpoint %d: %w", thread, id, ErrNoCheckpoint)
	}
	return list[i], nil
}

// Range returns thread's checkpoints with IDs in [from, to] (to <= 0: no
// upper bound), newest first, the newest limit of them when limit > 0.
func (m *memoryCheckpointer) Range(_ context.Context, thread string, from, to int64, limit int) ([]*Checkpoint, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	list := m.threads[thread]
	lo := m.search(list, from)
	hi := len(list)
	if to > 0 {
		hi = m.search(list, to+1)
	}
	if hi < lo {
		hi = lo
	}
	if limit > 0 && hi-lo > limit {
		lo = hi - limit
	}
	out := make([]*Checkpoint, hi-lo)
	for i := range out {
		out[i] = list[hi-1-i]
	}
	return out, nil
}

// search returns the index of the first checkpoint in list with an ID of
// at least id; IDs increase along the list (Put refuses anything else).
func (*memoryCheckpointer) search(list []*Checkpoint, id int64) int {
	i, _ := slices.BinarySearchFunc(list, id, func(cp *Checkpoint, id int64) int { return cmp.Compare(cp.ID, id) })
	return i
}

// Delete forgets thread's checkpoints with IDs below before, or the whole
// thread when before <= 0.
func (m *memoryCheckpointer) Delete(_ context.Context, thread string, before int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.threads[thread]
	if before <= 0 {
		delete(m.threads, thread)
		return len(list), nil
	}
	n := m.search(list, before)
	if n > 0 {
		m.threads[thread] = slices.Clone(list[n:])
	}
	return n, nil
}

// PutWrites appends writes to the Pending of checkpoint id of thread. The
// stored checkpoint is replaced by a copy, so that checkpoints returned
// earlier do not change.
func (m *memoryCheckpointer) PutWrites(_ context.Context, thread string, id int64, writes []PendingWrite) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.threads[thread]
	i, found := slices.BinarySearchFunc(list, id, func(cp *Checkpoint, id int64) int { return cmp.Compare(cp.ID, id) })
	if !found {
		return fmt.Errorf("thread %q checkpoint %d: %w", thread, id, ErrNoCheckpoint)
	}
	c := *list[i]
	c.Pending = slices.Concat(c.Pending, writes)
	list[i] = &c
	return nil
}
