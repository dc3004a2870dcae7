package statgraph

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/statgraph/statgraph/statgraph/cache"
)

// Start and End are the names of the graph's virtual entry and exit. Edges
// leave Start to the first nodes and reach End from the last; neither may be
// used as a node name.
const (
	Start = "__start__"
	End   = "__end__"
)

// nodeFunc is the type of a node's body (see AddNode).
type nodeFunc[S any] = func(ctx context.Context, s S) (S, error)

// Builder assembles a graph. It is mutable and not safe for concurrent use.
// Problems found while building (an empty name, a duplicate node, a nil
// function) are remembered and reported together by Compile, so calls can be
// chained without checking errors one by one.
type Builder[S any] struct {
	nodes    map[string]*nodeSpec[S]
	order    []string // node names in the order they were added
	edges    []edgeSpec
	branches map[string]*branchSpec[S]
	joins    []joinSpec
	fans     map[string]*fanSpec[S] // AddSends, by source
	reducer  func(cur, update S) S
	codec    Codec[S]
	problems []string
	checks   []func(reaches func(from, to string) bool) error // AddCheck
}

type nodeSpec[S any] struct {
	name string
	fn   nodeFunc[S]
	cfg  nodeConfig
}

type edgeSpec struct{ from, to string }

type branchSpec[S any] struct {
	router func(ctx context.Context, s S) string
	routes func(context.Context, S) []string // AddRoutes; router is nil
	paths  map[string]string
	keys   []string // path-map keys, sorted
}

// New returns an empty Builder for state type S.
func New[S any]() *Builder[S] {
	return &Builder[S]{
		nodes:    make(map[string]*nodeSpec[S]),
		branches: make(map[string]*branchSpec[S]),
	}
}

func (b *Builder[S]) problem(format string, args ...any) {
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

// AddNode adds a node called name that runs fn. Names must be unique, non
// empty, and neither Start nor End.
//
// fn is the body of the node. It receives the state as of the start of its
// super-step and returns an update. Without a reducer the update replaces
// the state; with one (SetReducer) the reducer folds it into the state, so
// a node then returns only what it changes. The returned state must not
// share mutable memory with the input that the node changed in place: treat
// S as a value (append to slices, don't assign to their elements) so that
// parallel branches and saved checkpoints do not observe each other's
// writes.
func (b *Builder[S]) AddNode(name string, fn func(ctx context.Context, s S) (S, error), opts ...NodeOption) *Builder[S] {
	if fn == nil {
		b.problem("AddNode(%q): nil function", name)
		return b
	}
	ns := b.addSpec("AddNode", name, opts)
	if ns == nil {
		return b
	}
	ns.fn = fn
	b.checkCache(ns)
	return b
}

// addSpec checks name and opts and registers a node; it returns nil when the
// node cannot be added.
func (b *Builder[S]) addSpec(method, name string, opts []NodeOption) *nodeSpec[S] {
	switch {
	case name == "":
		b.problem("%s: empty node name", method)
		return nil
	case name == Start || name == End:
		b.problem("%s(%q): the name is reserved for the graph's entry or exit", method, name)
		return nil
	case strings.HasPrefix(name, "__"):
		b.problem("%s(%q): names starting with \"__\" are reserved for the engine", method, name)
		return nil
	case b.nodes[name] != nil:
		b.problem("%s(%q): a node with this name already exists", method, name)
		return nil
	}
	ns := &nodeSpec[S]{name: name}
	for _, o := range opts {
		o(&ns.cfg)
	}
	if ns.cfg.timeout < 0 {
		b.problem("%s(%q): negative timeout %v", method, name, ns.cfg.timeout)
	}
	b.nodes[name] = ns
	b.order = append(b.order, name)
	return ns
}

// AddEdge adds an edge: after from runs, to runs in the next super-step.
// from may be Start; to may be End.
func (b *Builder[S]) AddEdge(from, to string) *Builder[S] {
	b.edges = append(b.edges, edgeSpec{from, to})
	return b
}

// AddConditionalEdges makes router choose, after source runs, which node
// runs next, from the state. pathMap declares every destination: router
// returns one of its keys and the value is the node (or End) to run; another
// key ends the run with an error naming it and the declared ones. A node has at most one
// router; it may also have plain edges, which are followed as well.
func (b *Builder[S]) AddConditionalEdges(source string, router func(ctx context.Context, s S) string, pathMap map[string]string) *Builder[S] {
	return b.addBranch("AddConditionalEdges", source, router == nil, &branchSpec[S]{router: router}, pathMap)
}

// AddRoutes is AddConditionalEdges for a router that may choose several
// destinations at once: after source runs, every node named by a key the
// router returns runs in the next super-step (each once; no key means none).
// A key outside pathMap ends the run with an error naming it and the declared ones.
func (b *Builder[S]) AddRoutes(source string, router func(ctx context.Context, s S) []string, pathMap map[string]string) *Builder[S] {
	return b.addBranch("AddRoutes", source, router == nil, &branchSpec[S]{routes: router}, pathMap)
}

func (b *Builder[S]) addBranch(method, source string, nilRouter bool, bs *branchSpec[S], pathMap map[string]string) *Builder[S] {
	switch {
	case nilRouter:
		b.problem("%s(%q): nil router", method, source)
		return b
	case len(pathMap) == 0:
		b.problem("%s(%q): empty path map; declare every destination the router can choose", method, source)
		return b
	case b.branches[source] != nil:
		b.problem("%s(%q): the node already has conditional edges", method, source)
		return b
	}
	bs.paths = make(map[string]string, len(pathMap))
	for k, v := range pathMap {
		bs.paths[k] = v
	}
	bs.keys = sortedKeys(bs.paths)
	b.branches[source] = bs
	return b
}

// SetReducer sets the function that folds node updates into the state. It
// is called at the barrier of every super-step, once per node that ran, in
// node-name order, with the current state and the node's update. With a
// reducer, nodes return partial updates and several nodes may run in one
// super-step; without one, an update replaces the state and two nodes
// updating in the same step is an error.
func (b *Builder[S]) SetReducer(r func(cur, update S) S) *Builder[S] {
	b.reducer = r
	return b
}

// SetCodec sets how states are encoded in checkpoints. The default is JSON,
// with deltas between checkpoints (see Codec).
func (b *Builder[S]) SetCodec(c Codec[S]) *Builder[S] {
	b.codec = c
	return b
}

// NodeOption configures a node at AddNode, AddCommandNode or AddSubgraph.
type NodeOption func(*nodeConfig)

type nodeConfig struct {
	retry       []RetryPolicy // WithRetry, in the order given
	timeout     time.Duration
	fallback    string        // WithFallback
	sub         childGraph    // the child graph of a subgraph node (AddSubgraph)
	cacheTTL    time.Duration // WithCache
	cacheKey    any           // WithCache: a func(S) string, checked by checkCache; nil without WithCache
	cacheStores []cache.Cache // WithCache's store, at most one (checkCache); none: the node's own memory cache
	gotos       []string      // declared destinations (WithDestinations, AddCommandNode)
	command     bool          // set by AddCommandNode
	deferred    bool          // WithDefer
}

// WithRetry retries the node on error according to p. Given several times,
// it adds policies (LangGraph's sequence of retry policies): an error is
// retried under the first one whose RetryOn accepts it, within that
// policy's MaxAttempts and with its delays, the attempts being counted
// across all of them; an error no policy accepts is not retried.
func WithRetry(p RetryPolicy) NodeOption {
	return func(c *nodeConfig) { c.retry = append(c.retry, p) }
}

// WithTimeout bounds each attempt of the node: its ctx is cancelled after d
// and the attempt fails at once with an error wrapping
// context.DeadlineExceeded, so the step goes on as for any failed attempt
// (a retry, a fallback or the run's end). A node that does not heed its
// ctx is waited for a tenth of d more (between 1ms and 1s), then
// abandoned: it runs on, on a goroutine of its own, and whatever it returns
// is dropped. Such a node keeps its own attempt's RuntimeOf, but what it
// does through its ctx once abandoned reaches nothing (Runtime.Write, an
// Interrupt, a subgraph's checkpoints); it must end by itself. Zero means
// no timeout.
func WithTimeout(d time.Duration) NodeOption {
	return func(c *nodeConfig) { c.timeout = d }
}
