package cache

import (
	"container/list"
	"context"
	"slices"
	"sync"
	"time"
)

// DefaultEntries is the number of entries a Memory holds when MaxEntries
// is zero.
const DefaultEntries = 4096

// Memory is a Cache in process memory: nothing survives the process. It
// holds at most MaxEntries entries and MaxBytes bytes; a Set past either
// bound drops the least recently used entries (a Get or a Set uses one)
// until both hold. An expired entry is dropped when it is looked up or as
// the least recently used. The zero Memory is ready to use and holds at
// most DefaultEntries entries. Set its fields before its first use and not
// after. It is safe for concurrent use.
type Memory struct {
	// MaxEntries bounds the number of entries; zero means DefaultEntries
	// and a negative value no bound.
	MaxEntries int
	// MaxBytes bounds the bytes of the entries' namespaces, keys and
	// values together; zero or less means no bound. A value larger than
	// the bound on its own is not kept.
	MaxBytes int64
	// Now is the clock expiries are read on; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex // guards the fields below
	entries map[memKey]*list.Element
	lru     list.List // of *memEntry, most recently used first
	bytes   int64
}

type memKey struct{ ns, key string }

type memEntry struct {
	k       memKey
	value   []byte
	expires time.Time // zero: never
}

func (e *memEntry) size() int64 { return int64(len(e.k.ns) + len(e.k.key) + len(e.value)) }

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Get returns the fresh value under ns and key and marks it used.
func (m *Memory) Get(_ context.Context, ns, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.entries[memKey{ns, key}]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*memEntry)
	if !e.expires.IsZero() && !m.now().Before(e.expires) {
		m.remove(el)
		return nil, false, nil
	}
	m.lru.MoveToFront(el)
	return e.value, true, nil
}

// Set stores value under ns and key for ttl, then evicts the least
// recently used entries until the bounds hold.
func (m *Memory) Set(_ context.Context, ns, key string, value []byte, ttl time.Duration) error {
	e := &memEntry{k: memKey{ns, key}, value: value}
	if ttl > 0 {
		e.expires = m.now().Add(ttl)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.MaxBytes > 0 && e.size() > m.MaxBytes {
		if el, ok := m.entries[e.k]; ok {
			m.remove(el) // the old value is stale now
		}
		return nil
	}
	if m.entries == nil {
		m.entries = map[memKey]*list.Element{}
	}
	if el, ok := m.entries[e.k]; ok {
		m.remove(el)
	}
	m.entries[e.k] = m.lru.PushFront(e)
	m.bytes += e.size()
	maxEntries := m.MaxEntries
	if maxEntries == 0 {
		maxEntries = DefaultEntries
	}
	for (maxEntries > 0 && m.lru.Len() > maxEntries) || (m.MaxBytes > 0 && m.bytes > m.MaxBytes) {
		m.remove(m.lru.Back())
	}
	return nil
}

// Clear removes the entries of the namespaces ns, or all entries.
func (m *Memory) Clear(_ context.Context, ns ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for el := m.lru.Front(); el != nil; {
		next := el.Next()
		if len(ns) == 0 || slices.Contains(ns, el.Value.(*memEntry).k.ns) {
			m.remove(el)
		}
		el = next
	}
	return nil
}

// Len returns the number of entries held, expired ones included until
// they are dropped.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Len()
}

// remove drops el from the cache; m.mu is held.
func (m *Memory) remove(el *list.Element) {
	e := m.lru.Remove(el).(*memEntry)
	delete(m.entries, e.k)
	m.bytes -= e.size()
}
