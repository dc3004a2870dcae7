package statgraph

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// WithCache caches the node's update by its input for ttl (LangGraph's
// CachePolicy): while an entry is fresh, a run that reaches the node with
// an input of the same key takes the cached update instead of running the
// node. key computes the key from the node's input; it must be cheap and
// must not change the state. A nil key (write WithCache[S](ttl, nil)) keys
// by the state encoded with the graph's codec. A key of "" is not cached.
// Only successful updates are cached; errors and interrupts are not. A zero
// ttl caches nothing; a negative one, or a key for another type than the
// graph's state type S, is reported by Compile.
//
// The cache belongs to the compiled graph: it is shared by all its runs and
// threads, lives in memory (nothing survives the process), and is safe for
// concurrent use. It holds at most 4,096 entries per node: beyond that the
// least recently used is dropped, so that a long-lived graph keyed by
// ever-new inputs does not grow without bound. Expired entries are dropped
// when their key is looked up again, or as the least recently used. A cache hit still reports EventNodeStart and EventNodeEnd, the
// latter with Cached set (LangGraph's "cached" metadata); on an
// AddCommandNode node it goes where the cached command went.
func WithCache[S any](ttl time.Duration, key func(s S) string) NodeOption {
	return func(c *nodeConfig) { c.cacheTTL, c.cacheKey = ttl, key }
}

// checkCache checks a plain node's cache options.
func (b *Builder[S]) checkCache(ns *nodeSpec[S]) {
	if ns.cfg.cacheTTL < 0 {
		b.problem("AddNode(%q): WithCache: negative TTL %v", ns.name, ns.cfg.cacheTTL)
	}
	if _, ok := ns.cfg.cacheKey.(func(S) string); !ok && ns.cfg.cacheKey != nil {
		b.problem("AddNode(%q): WithCache's key takes the graph's state: a func(%T) string, not a %T", ns.name, *new(S), ns.cfg.cacheKey)
	}
}

// cacheNow is the cache's clock; tests replace it.
var cacheNow = time.Now

// cacheCap is the number of entries a node's cache holds; tests lower it.
var cacheCap = 4096

type cacheEntry[S any] struct {
	key     string
	out     S
	gotos   []string // where an AddCommandNode's command went, replayed on a hit
	sends   any      // the Sends of the same command, replayed on a hit
	expires time.Time
}

// cached wraps the function of node ns in its cache. codec, when the node
// has no key function, encodes the key (nil means JSON).
func cached[S any](ns *nodeSpec[S], codec Codec[S]) nodeFunc[S] {
	key, _ := ns.cfg.cacheKey.(func(S) string)
	if key == nil {
		if codec == nil {
			codec = newJSONCodec[S]()
		}
		key = func(s S) string {
			b, err := codec.Marshal(s)
			if err != nil {
				return "" // not cacheable
			}
			return string(b)
		}
	}
	fn, ttl := ns.fn, ns.cfg.cacheTTL
	var mu sync.Mutex                     // guards entries and lru
	entries := map[string]*list.Element{} // key -> element of lru holding a cacheEntry
	lru := list.New()                     // most recently used first
	return func(ctx context.Context, s S) (S, error) {
		k := key(s)
		if k != "" {
			mu.Lock()
			el, ok := entries[k]
			if ok && cacheNow().Before(el.Value.(cacheEntry[S]).expires) {
				lru.MoveToFront(el)
				e := el.Value.(cacheEntry[S])
				mu.Unlock()
				if info, ok := ctx.Value(infoKey{}).(*nodeInfo); ok {
					if info.extra == nil {
						info.extra = &taskExtra{}
					}
					info.extra.gotos, info.extra.sends, info.extra.cached = e.gotos, e.sends, true
				}
				return e.out, nil
			}
			if ok {
				lru.Remove(el)
				delete(entries, k)
			}
			mu.Unlock()
		}
		out, err := fn(ctx, s)
		if err == nil && k != "" {
			e := cacheEntry[S]{key: k, out: out, expires: cacheNow().Add(ttl)}
			if info, ok := ctx.Value(infoKey{}).(*nodeInfo); ok && info.extra != nil {
				e.gotos, e.sends = info.extra.gotos, info.extra.sends
			}
			mu.Lock()
			if el, ok := entries[k]; ok { // a parallel miss stored it first
				el.Value = e
				lru.MoveToFront(el)
			} else {
				entries[k] = lru.PushFront(e)
			}
			for lru.Len() > cacheCap {
				delete(entries, lru.Remove(lru.Back()).(cacheEntry[S]).key)
			}
			mu.Unlock()
		}
		return out, err
	}
}
