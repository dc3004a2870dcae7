package statgraph

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/statgraph/statgraph/statgraph/cache"
)

// WithCache caches the node's update by its input for ttl (LangGraph's
// CachePolicy): while an entry is fresh, a run that reaches the node with
// an input of the same key takes the cached update instead of running the
// node. key computes the key from the node's input; it must be cheap and
// must not change the state. A nil key (write WithCache[S](ttl, nil)) keys
// by the state encoded with the graph's codec. A key of "" is not cached.
// Only successful updates are cached; errors and interrupts are not. A zero
// ttl caches nothing; a negative one, a key for another type than the
// graph's state type S, or more than one store, is reported by Compile.
//
// The entries are kept in store, under the node's name as namespace: a
// cache.Memory bounded as the caller needs, or the SQLite cache of package
// checkpoint/sqlite, which outlives the process (graphs sharing a store
// share the entries of their nodes of the same name, so a graph compiled
// again finds its entries). Clear the store to forget them. Without a
// store the node has a cache.Memory of its own, holding its 4,096 most
// recently used entries for the life of the compiled graph. Updates are
// stored encoded with the graph's codec; a store's error, or an entry
// that does not decode, makes the node run as on a miss.
//
// A cache hit still reports EventNodeStart and EventNodeEnd, the latter
// with Cached set (LangGraph's "cached" metadata); on an AddCommandNode
// node it goes where the cached command went, Sends included.
func WithCache[S any](ttl time.Duration, key func(s S) string, store ...cache.Cache) NodeOption {
	return func(c *nodeConfig) { c.cacheTTL, c.cacheKey, c.cacheStores = ttl, key, store }
}

// checkCache checks a plain node's cache options.
func (b *Builder[S]) checkCache(ns *nodeSpec[S]) {
	if ns.cfg.cacheTTL < 0 {
		b.problem("AddNode(%q): WithCache: negative TTL %v", ns.name, ns.cfg.cacheTTL)
	}
	if _, ok := ns.cfg.cacheKey.(func(S) string); !ok && ns.cfg.cacheKey != nil {
		b.problem("AddNode(%q): WithCache's key takes the graph's state: a func(%T) string, not a %T", ns.name, *new(S), ns.cfg.cacheKey)
	}
	if len(ns.cfg.cacheStores) > 1 {
		b.problem("AddNode(%q): WithCache: %d stores given; give at most one", ns.name, len(ns.cfg.cacheStores))
	}
}

// cacheNow is the clock of the nodes' own memory caches; tests replace it.
var cacheNow = time.Now

// cacheCap is the number of entries a node's own memory cache holds; tests
// lower it.
var cacheCap = cache.DefaultEntries

// cached wraps the function of node ns in its cache. codec encodes the
// key, when the node has no key function, and the entries (nil means
// JSON).
func cached[S any](ns *nodeSpec[S], codec Codec[S]) nodeFunc[S] {
	if codec == nil {
		codec = newJSONCodec[S]()
	}
	key, _ := ns.cfg.cacheKey.(func(S) string)
	if key == nil {
		key = func(s S) string {
			b, err := codec.Marshal(s)
			if err != nil {
				return "" // not cacheable
			}
			return string(b)
		}
	}
	var store cache.Cache = &cache.Memory{MaxEntries: cacheCap, Now: func() time.Time { return cacheNow() }}
	if len(ns.cfg.cacheStores) > 0 {
		store = ns.cfg.cacheStores[0]
	}
	fn, ttl, name := ns.fn, ns.cfg.cacheTTL, ns.name
	return func(ctx context.Context, s S) (S, error) {
		k := key(s)
		info, _ := ctx.Value(infoKey{}).(*nodeInfo)
		if k != "" {
			if b, ok, err := store.Get(ctx, name, k); err == nil && ok {
				if out, gotos, sends, err := decodeEntry(codec, b); err == nil {
					if info != nil {
						if info.extra == nil {
							info.extra = &taskExtra{}
						}
						info.extra.gotos, info.extra.cached = gotos, true
						if len(sends) > 0 {
							info.extra.sends = sends
						}
					}
					return out, nil
				}
			}
		}
		out, err := fn(ctx, s)
		if err == nil && k != "" {
			var gotos []string
			var sends []Send[S]
			if info != nil && info.extra != nil {
				gotos = info.extra.gotos
				sends, _ = info.extra.sends.([]Send[S])
			}
			if b, err := encodeEntry(codec, out, gotos, sends); err == nil {
				_ = store.Set(ctx, name, k, b, ttl) // not kept: the next run misses
			}
		}
		return out, err
	}
}

// cacheFormat is the first byte of an encoded cache entry.
const cacheFormat = 1

// encodeEntry encodes a cached update with its command's Goto and Sends:
// the format byte, then length-prefixed fields (uvarint lengths and
// counts): the update, the Goto's names, and each Send's node and input.
func encodeEntry[S any](codec Codec[S], out S, gotos []string, sends []Send[S]) ([]byte, error) {
	u, err := codec.Marshal(out)
	if err != nil {
		return nil, err
	}
	b := append([]byte{cacheFormat}, binary.AppendUvarint(nil, uint64(len(u)))...)
	b = append(b, u...)
	b = binary.AppendUvarint(b, uint64(len(gotos)))
	for _, g := range gotos {
		b = append(binary.AppendUvarint(b, uint64(len(g))), g...)
	}
	b = binary.AppendUvarint(b, uint64(len(sends)))
	for _, s := range sends {
		in, err := codec.Marshal(s.Input)
		if err != nil {
			return nil, err
		}
		b = append(binary.AppendUvarint(b, uint64(len(s.To))), s.To...)
		b = append(binary.AppendUvarint(b, uint64(len(in))), in...)
	}
	return b, nil
}

var errBadEntry = errors.New("statgraph: malformed cache entry")

// decodeEntry decodes an entry written by encodeEntry.
func decodeEntry[S any](codec Codec[S], b []byte) (out S, gotos []string, sends []Send[S], err error) {
	if len(b) == 0 || b[0] != cacheFormat {
		return out, nil, nil, errBadEntry
	}
	b = b[1:]
	field := func() []byte {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			err = errBadEntry
			return nil
		}
		f := b[k : k+int(n)]
		b = b[k+int(n):]
		return f
	}
	count := func() int {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			err = errBadEntry
			return 0
		}
		b = b[k:]
		return int(n)
	}
	u := field()
	for range count() {
		gotos = append(gotos, string(field()))
	}
	for range count() {
		to, in := string(field()), field()
		if err != nil {
			break
		}
		v, derr := codec.Unmarshal(in)
		if derr != nil {
			return out, nil, nil, derr
		}
		sends = append(sends, Send[S]{To: to, Input: v})
	}
	if err != nil {
		return out, nil, nil, err
	}
	out, err = codec.Unmarshal(u)
	return out, gotos, sends, err
}
