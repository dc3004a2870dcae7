package store

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Option configures a Store when it is made (NewMemory, and the SQLite and
// Postgres ItemStores).
type Option func(*Config)

// Config is what Options set; implementations read it with NewConfig.
type Config struct {
	// Now returns the current time; nil means time.Now. Tests inject a
	// clock here to expire items without sleeping.
	Now func() time.Time
}

// WithClock makes the store read the time from now instead of time.Now.
func WithClock(now func() time.Time) Option { return func(c *Config) { c.Now = now } }

// NewConfig applies opts to a Config with its defaults filled in.
func NewConfig(opts ...Option) Config {
	var c Config
	for _, o := range opts {
		o(&c)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Memory is a Store in process memory. Values are kept as JSON text, so an
// item read back is a copy, decoded as the SQL stores decode it. The zero
// Memory is not usable: make one with NewMemory.
type Memory struct {
	now func() time.Time
	mu  sync.Mutex                   // guards ns
	ns  map[string]map[string]*entry // namespace text -> key -> entry
}

// entry is an item as Memory keeps it; times are Unix nanoseconds, 0 for
// no expiry.
type entry struct {
	value                     []byte
	created, updated, expires int64
	ttl                       time.Duration
}

// NewMemory returns an empty Memory store.
func NewMemory(opts ...Option) *Memory {
	return &Memory{now: NewConfig(opts...).Now, ns: map[string]map[string]*entry{}}
}

// Put implements Store.
func (m *Memory) Put(ctx context.Context, it Item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	text, err := NamespaceText(it.Namespace)
	if err != nil {
		return err
	}
	if err := CheckKey(it.Key); err != nil {
		return err
	}
	val, err := EncodeValue(it.Value)
	if err != nil {
		return err
	}
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := m.ns[text]
	if keys == nil {
		keys = map[string]*entry{}
		m.ns[text] = keys
	}
	e := &entry{value: val, created: now, updated: now, ttl: max(it.TTL, 0)}
	if old := keys[it.Key]; old != nil && live(old, now) {
		e.created = old.created
	}
	if e.ttl > 0 {
		e.expires = now + int64(e.ttl)
	}
	keys[it.Key] = e
	return nil
}

// live reports whether e has not expired at now.
func live(e *entry, now int64) bool { return e.expires == 0 || e.expires > now }

// Get implements Store.
func (m *Memory) Get(ctx context.Context, ns []string, key string) (Item, error) {
	if err := ctx.Err(); err != nil {
		return Item{}, err
	}
	text, err := NamespaceText(ns)
	if err != nil {
		return Item{}, err
	}
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.ns[text][key]
	if e == nil || !live(e, now) {
		return Item{}, fmt.Errorf("%w: namespace %q, key %q", ErrNotFound, ns, key)
	}
	return e.item(text, key, now)
}

// item refreshes e's expiry at now and returns it as an Item.
func (e *entry) item(ns, key string, now int64) (Item, error) {
	if e.ttl > 0 {
		e.expires = now + int64(e.ttl)
	}
	v, err := DecodeValue(e.value)
	if err != nil {
		return Item{}, err
	}
	return MakeItem(ns, key, v, e.created, e.updated, e.expires, e.ttl), nil
}

// MakeItem builds an Item from a namespace's text form and times in Unix
// nanoseconds (expires 0: never).
func MakeItem(ns, key string, v map[string]any, created, updated, expires int64, ttl time.Duration) Item {
	it := Item{
		Namespace: ParseNamespace(ns), Key: key, Value: v,
		Created: time.Unix(0, created).UTC(), Updated: time.Unix(0, updated).UTC(), TTL: ttl,
	}
	if expires != 0 {
		it.Expires = time.Unix(0, expires).UTC()
	}
	return it
}

// Delete implements Store.
func (m *Memory) Delete(ctx context.Context, ns []string, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	text, err := NamespaceText(ns)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.ns[text], key)
	if len(m.ns[text]) == 0 {
		delete(m.ns, text)
	}
	return nil
}

// Search implements Store.
func (m *Memory) Search(ctx context.Context, prefix []string, q Query) ([]Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lo, hi, err := PrefixRange(prefix)
	if err != nil {
		return nil, err
	}
	want := map[string][]byte{}
	for f, v := range q.Filter {
		text, _, err := Canonical(f, v)
		if err != nil {
			return nil, err
		}
		want[f] = text
	}
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	type hit struct {
		ns, key string
		e       *entry
	}
	var hits []hit
	for ns, keys := range m.ns {
		if hi != "" && (ns < lo || ns >= hi) {
			continue
		}
		for key, e := range keys {
			if !live(e, now) {
				continue
			}
			if ok, err := matches(e.value, want); err != nil {
				return nil, err
			} else if ok {
				hits = append(hits, hit{ns, key, e})
			}
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.e.updated, a.e.updated), strings.Compare(a.ns, b.ns), strings.Compare(a.key, b.key))
	})
	hits = page(hits, q.Offset, q.Limit, 10)
	items := make([]Item, 0, len(hits))
	for _, h := range hits {
		it, err := h.e.item(h.ns, h.key, now)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// matches reports whether the JSON object text has each field of want
// with the canonical JSON text given.
func matches(text []byte, want map[string][]byte) (bool, error) {
	if len(want) == 0 {
		return true, nil
	}
	v, err := DecodeValue(text)
	if err != nil {
		return false, err
	}
	for f, w := range want {
		got, ok := v[f]
		if !ok {
			return false, nil
		}
		g, _, err := Canonical(f, got)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(g, w) {
			return false, nil
		}
	}
	return true, nil
}

// ListNamespaces implements Store.
func (m *Memory) ListNamespaces(ctx context.Context, q NamespaceQuery) ([][]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := m.now().UnixNano()
	m.mu.Lock()
	var all [][]string
	for ns, keys := range m.ns {
		for _, e := range keys {
			if live(e, now) {
				all = append(all, ParseNamespace(ns))
				break
			}
		}
	}
	m.mu.Unlock()
	return q.Select(all), nil
}

// Sweep implements Store.
func (m *Memory) Sweep(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for ns, keys := range m.ns {
		for key, e := range keys {
			if !live(e, now) {
				delete(keys, key)
				n++
			}
		}
		if len(keys) == 0 {
			delete(m.ns, ns)
		}
	}
	return n, nil
}
