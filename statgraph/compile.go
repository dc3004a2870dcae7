package statgraph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/statgraph/statgraph/statgraph/store"
)

// defaultStepLimit is the number of super-steps a run may take unless
// WithStepLimit says otherwise.
const defaultStepLimit = 10_000

const (
	endIdx   = -1
	startIdx = -2
)

// Graph is a compiled graph. It is immutable and safe for concurrent use:
// any number of goroutines may Invoke or Stream it at once.
type Graph[S any] struct {
	nodes        []*node[S] // sorted by name; a node's index is its position
	byName       map[string]int
	start        node[S] // the virtual Start node: only its edges are used
	reducer      func(cur, update S) S
	codec        Codec[S]
	delta        deltaCodec[S] // codec as a deltaCodec, or nil
	cfg          compileConfig
	before       []bool // per node: interrupt before it runs
	after        []bool // per node: interrupt after it ran
	trace        io.Writer
	single       [][]string // per node: []string{name}, shared by checkpoints
	defers       bool       // some node has WithDefer (defer.go)
	hasSubgraphs bool       // some node is a subgraph (AddSubgraph)
	joins        []join     // waiting joins (AddJoin)
}

type node[S any] struct {
	name     string
	idx      int
	fn       nodeFunc[S]
	retry    []RetryPolicy // WithRetry's policies, tried in order
	timeout  time.Duration
	next     []int // static successors (endIdx for End), sorted
	branch   *branch[S]
	joinIn   []joinIn   // the waiting joins the node is a source of
	fan      *fanOut[S] // AddSends
	cmd      *commandTo // AddCommandNode
	fallback *int       // WithFallback: the handler's index
	sub      childGraph // the child graph of a subgraph node
	deferred bool       // WithDefer
}

type branch[S any] struct {
	router func(ctx context.Context, s S) string
	routes func(context.Context, S) []string // AddRoutes; router is nil
	keys   []string                          // path-map keys, sorted
	to     map[string]int                    // key -> node index or endIdx
}

// CompileOption configures Compile.
type CompileOption func(*compileConfig)

type compileConfig struct {
	checkpointer Checkpointer
	store        store.Store
	before       []string
	after        []string
}

// WithCheckpointer saves a checkpoint after every super-step into cp, which
// makes runs resumable (WithThread), interruptible and inspectable (History).
func WithCheckpointer(cp Checkpointer) CompileOption {
	return func(c *compileConfig) { c.checkpointer = cp }
}

// WithStore gives the graph's nodes and routers s, their long-term store,
// through RuntimeOf(ctx).Store (LangGraph's compile(store=...)): what they
// keep there outlives threads and runs, unlike the checkpointed state. The
// graph's subgraphs compiled without a store of their own use it too.
func WithStore(s store.Store) CompileOption {
	return func(c *compileConfig) { c.store = s }
}

// WithInterruptBefore pauses a run before any of nodes runs. WithResume
// continues it. Needs a checkpointer.
func WithInterruptBefore(nodes ...string) CompileOption {
	return func(c *compileConfig) { c.before = append(c.before, nodes...) }
}

// WithInterruptAfter pauses a run after any of nodes ran, once the step's
// checkpoint is saved. WithResume continues it. Needs a checkpointer.
func WithInterruptAfter(nodes ...string) CompileOption {
	return func(c *compileConfig) { c.after = append(c.after, nodes...) }
}

// compileError lists every problem Compile found.
type compileError struct {
	problems []string
}

func (e *compileError) Error() string {
	if len(e.problems) == 1 {
		return "statgraph: compile: " + e.problems[0]
	}
	return fmt.Sprintf("statgraph: compile: %d problems:\n  - %s", len(e.problems), strings.Join(e.problems, "\n  - "))
}

// Unwrap returns one error per problem, as errors.Join's error does.
func (e *compileError) Unwrap() []error {
	errs := make([]error, len(e.problems))
	for i, p := range e.problems {
		errs[i] = errors.New(p)
	}
	return errs
}

// Compile checks the graph and returns its immutable, runnable form. It
// returns one error listing every problem, one per line, whose
// Unwrap() []error method (as errors.Join's) gives an error per problem:
// unknown nodes in edges or
// path maps, duplicate or reserved names, nothing leaving Start, nodes that
// Start cannot reach, nodes from which End cannot be reached, the
// problems remembered while building and the errors of AddCheck's checks.
// The Builder may be reused afterwards; later changes do not affect the
// compiled Graph.
func (b *Builder[S]) Compile(opts ...CompileOption) (*Graph[S], error) {
	var cfg compileConfig
	for _, o := range opts {
		o(&cfg)
	}
	problems := slices.Clone(b.problems)
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	names := slices.Sorted(maps.Keys(b.nodes))
	g := &Graph[S]{
		nodes:   make([]*node[S], len(names)),
		byName:  make(map[string]int, len(names)),
		reducer: b.reducer,
		codec:   b.codec,
		cfg:     cfg,
		start:   node[S]{name: Start, idx: startIdx},
		single:  make([][]string, 0, len(names)),
	}
	for i, name := range names {
		ns := b.nodes[name]
		g.nodes[i] = &node[S]{name: name, idx: i, fn: ns.fn, retry: slices.Clone(ns.cfg.retry), timeout: ns.cfg.timeout, sub: ns.cfg.sub, deferred: ns.cfg.deferred}
		g.defers = g.defers || ns.cfg.deferred
		g.hasSubgraphs = g.hasSubgraphs || ns.cfg.sub != nil
		if ns.cfg.cacheTTL > 0 {
			g.nodes[i].fn = cached(ns, b.codec)
		}
		g.byName[name] = i
		g.single = append(g.single, []string{name})
	}
	if g.codec == nil {
		g.codec = newJSONCodec[S]()
	}
	g.delta, _ = g.codec.(deltaCodec[S])

	// resolve returns the index of a node name used as an edge endpoint.
	resolve := func(name string) (int, bool) {
		switch name {
		case End:
			return endIdx, true
		case Start:
			return startIdx, true
		}
		i, ok := g.byName[name]
		return i, ok
	}
	nodeOf := func(i int) *node[S] {
		if i == startIdx {
			return &g.start
		}
		return g.nodes[i]
	}
	edges := make([][2]int, 0, len(b.edges))
	for _, e := range b.edges {
		from, okf := resolve(e.from)
		to, okt := resolve(e.to)
		switch {
		case !okf:
			add("edge %s -> %s: unknown node %q", e.from, e.to, e.from)
		case !okt:
			add("edge %s -> %s: unknown node %q", e.from, e.to, e.to)
		case from == endIdx:
			add("edge %s -> %s: no edge may leave %s", e.from, e.to, End)
		case to == startIdx:
			add("edge %s -> %s: no edge may enter %s", e.from, e.to, Start)
		default:
			edges = append(edges, [2]int{from, to})
		}
	}
	g.link(edges)
	for _, src := range slices.Sorted(maps.Keys(b.branches)) {
		bs := b.branches[src]
		from, ok := resolve(src)
		if !ok {
			add("conditional edges from %q: unknown node", src)
			continue
		}
		if from == endIdx {
			add("conditional edges from %s: no edge may leave %s", End, End)
			continue
		}
		// Only valid paths are kept, so that reachability is judged on them
		// and a bad path is reported once.
		br := &branch[S]{router: bs.router, routes: bs.routes, to: make(map[string]int, len(bs.paths))}
		for _, k := range bs.keys {
			to, ok := resolve(bs.paths[k])
			switch {
			case !ok:
				add("conditional edges from %q: path %q leads to unknown node %q", src, k, bs.paths[k])
			case to == startIdx:
				add("conditional edges from %q: path %q leads to %s", src, k, Start)
			default:
				br.to[k] = to
				br.keys = append(br.keys, k)
			}
		}
		nodeOf(from).branch = br
	}
	g.compileJoins(b, resolve, add)
	g.compileFans(b, resolve, nodeOf, add)
	g.compileCommands(b, resolve, add)
	g.compileFallbacks(b, add)
	if len(g.start.next) == 0 && g.start.branch == nil && g.start.fan == nil {
		add("nothing leaves %s: add an edge from statgraph.Start to the first node", Start)
	}

	reach, toEnd := g.reachable()
	for _, n := range g.nodes {
		if !reach[n.idx] {
			add("node %q is unreachable from %s", n.name, Start)
		}
		if !toEnd[n.idx] {
			add("node %q cannot reach %s: give it an edge onward", n.name, End)
		}
	}

	g.runChecks(b, reach, toEnd, add)
	g.before = g.flags(cfg.before, "WithInterruptBefore", add)
	g.after = g.flags(cfg.after, "WithInterruptAfter", add)
	if (len(cfg.before) > 0 || len(cfg.after) > 0) && cfg.checkpointer == nil {
		add("interrupts need a checkpointer: add WithCheckpointer (e.g. statgraph.NewMemoryCheckpointer(false))")
	}
	if len(problems) > 0 {
		return nil, &compileError{problems: problems}
	}
	if os.Getenv("STATGRAPH_TRACE") == "1" {
		g.trace = os.Stderr
	}
	return g, nil
}

func (g *Graph[S]) flags(names []string, opt string, add func(string, ...any)) []bool {
	if len(names) == 0 {
		return nil
	}
	f := make([]bool, len(g.nodes))
	for _, name := range names {
		i, ok := g.byName[name]
		if !ok {
			add("%s: unknown node %q", opt, name)
			continue
		}
		f[i] = true
	}
	return f
}

// successors returns every node the node can lead to, static or routed.
func (n *node[S]) successors() []int {
	if n.branch == nil && n.joinIn == nil && n.fan == nil && n.cmd == nil && n.fallback == nil {
		return n.next
	}
	out := slices.Clone(n.next)
	if n.branch != nil {
		for _, k := range n.branch.keys {
			out = append(out, n.branch.to[k])
		}
	}
	for _, in := range n.joinIn {
		out = append(out, in.to)
	}
	if n.fan != nil {
		for _, name := range n.fan.names {
			out = append(out, n.fan.to[name])
		}
	}
	if n.cmd != nil {
		for _, name := range n.cmd.names {
			out = append(out, n.cmd.to[name])
		}
	}
	if n.fallback != nil {
		out = append(out, *n.fallback)
	}
	return out
}

func (g *Graph[S]) name(i int) string {
	switch i {
	case endIdx:
		return End
	case startIdx:
		return Start
	}
	return g.nodes[i].name
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
