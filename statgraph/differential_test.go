package statgraph_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/statgraph/statgraph/statgraph"
)

// This file holds a generator of small random graphs over the engine's
// features; differential_model_test.go holds a model of the documented
// super-step semantics (doc.go, docs/library.md and the doc comments of
// AddRoutes, AddSends, AddJoin, WithDefer, AddCommandNode, WithRetry,
// WithTimeout, WithFallback, WithCache, Interrupt, WithInterruptBefore and
// WithInterruptAfter) that interprets a generated graph sequentially, and
// differential_real_test.go builds the graph with the package and runs it
// with Stream, optionally with one of its store's writes failing and the
// run continued afterwards. The differential test and fuzz target
// (differential_fuzz_test.go) compare the two.
//
// The features: plain edges, routers choosing several destinations, Send
// fan-outs from nodes and from Start, a reducer, nodes that pause with
// Interrupt and are resumed, waiting joins, deferred nodes, command nodes
// (Goto and Sends), retries of injected failures and timeouts, fallbacks,
// the node cache, breakpoints before and after nodes, checkpoints, the step
// limit, durability modes, every stream event kind, and bounds on
// concurrent tasks (WithMaxConcurrency, per step and per node, which must
// change nothing).

// fzState is the state of generated graphs: a log every task appends one
// entry to (naming its node and what it saw, so that the input each task
// ran on and the merge order show), and a sum.
type fzState struct {
	Log []string
	Sum int
}

func fzReduce(cur, u fzState) fzState {
	return fzState{Log: statgraph.Append(cur.Log, u.Log), Sum: cur.Sum + u.Sum}
}

// fzAnswer is the value every interrupt is resumed with.
const fzAnswer = 2

// fzUpdate is the update of node name run on in; answer is what its
// Interrupt returned (0 for a node that does not ask).
func fzUpdate(name string, in fzState, answer int) fzState {
	return fzState{Log: []string{fmt.Sprintf("%s<%d,%d>", name, len(in.Log), in.Sum)}, Sum: 1 + answer}
}

// fzKey is the cache key of an input: a hash of all of it.
func fzKey(in fzState) string {
	h := fnv.New64a()
	fmt.Fprint(h, in.Sum, in.Log)
	return fmt.Sprintf("%x", h.Sum64())
}

// genJoin is a waiting join of the generated graph (AddJoin).
type genJoin struct {
	from []int
	to   int
}

// genGraph is a generated graph over nodes n0..n<n-1>. Sources are indexed
// 0..n-1 for the nodes and n for Start; destinations 0..n-1 for the nodes
// and n for End.
type genGraph struct {
	n          int
	edges      [][]int // per source: plain edges
	routes     [][]int // per source: a router's declared destinations; nil: no router
	fans       [][]int // per source: Send destinations; nil: no fan-out
	asks       []bool  // per node: Interrupt on every run
	limit      int     // WithStepLimit
	durability statgraph.Durability
	updates    bool // stream EventNodeUpdate too
	conc       int  // WithMaxConcurrency; 0: none

	// Drawn after the above, so that the fuzz corpus's older graphs keep
	// their shape (with these features off where the draw says so).
	fail     []int       // per node: failing attempts of each execution: 0, 1 (retried), 2 (fails for good)
	timeout  []int       // per node failing for good: its attempts 0: return an error, 1: time out heeding ctx, 2: time out ignoring it
	fallback []int       // per node: its WithFallback handler, or -1
	cached   []bool      // per node: WithCache keyed by fzKey
	deferred []bool      // per node: WithDefer
	joins    []genJoin   // AddJoin
	gotos    [][]int     // per node: a command node's Goto destinations; nil: not a command node
	cmdSends [][]int     // per command node: its Send destinations (declared too)
	before   []int       // WithInterruptBefore
	after    []int       // WithInterruptAfter
	events   bool        // stream every event kind and check them
	nodeConc map[int]int // WithMaxConcurrency(n, node)
	features map[string]bool
}

func (g *genGraph) name(i int) string {
	if i == g.n {
		return statgraph.End
	}
	return fmt.Sprintf("n%d", i)
}

func (g *genGraph) source(i int) string {
	if i == g.n {
		return statgraph.Start
	}
	return g.name(i)
}

func (g *genGraph) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d nodes, limit %d, durability %v, updates %v, concurrency %d %v, asks %v, events %v\n", g.n, g.limit, g.durability, g.updates, g.conc, g.nodeConc, g.asks, g.events)
	fmt.Fprintf(&b, "  fail %v timeout %v fallback %v cached %v deferred %v joins %v before %v after %v\n", g.fail, g.timeout, g.fallback, g.cached, g.deferred, g.joins, g.names(g.before), g.names(g.after))
	for s := 0; s <= g.n; s++ {
		fmt.Fprintf(&b, "  %s: edges %v routes %v sends %v", g.source(s), g.names(g.edges[s]), g.names(g.routes[s]), g.names(g.fans[s]))
		if s < g.n && g.gotos[s] != nil {
			fmt.Fprintf(&b, " goto %v command sends %v", g.names(g.gotos[s]), g.names(g.cmdSends[s]))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (g *genGraph) names(is []int) []string {
	if is == nil {
		return nil
	}
	out := make([]string, len(is))
	for k, i := range is {
		out[k] = g.name(i)
	}
	return out
}

// genFrom generates a graph from seed. Not every graph compiles (a node
// Start cannot reach, or one that cannot reach End): the caller skips those.
func genFrom(seed uint64) *genGraph {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n := 1 + rng.IntN(5)
	g := &genGraph{
		n: n, edges: make([][]int, n+1), routes: make([][]int, n+1), fans: make([][]int, n+1), asks: make([]bool, n),
		limit:      3 + rng.IntN(8),
		durability: []statgraph.Durability{statgraph.DurabilitySync, statgraph.DurabilityAsync, statgraph.DurabilityExit}[rng.IntN(3)],
		updates:    rng.IntN(2) == 0,
	}
	pick := func(hi, k int) []int {
		var out []int
		for range k {
			if d := rng.IntN(hi); !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
		return out
	}
	for s := 0; s <= n; s++ {
		g.edges[s] = pick(n+1, rng.IntN(3))
		if s < n && rng.IntN(2) == 0 && !slices.Contains(g.edges[s], n) {
			g.edges[s] = append(g.edges[s], n) // most nodes may end the run
		}
		if rng.IntN(3) == 0 {
			g.routes[s] = pick(n+1, 1+rng.IntN(3))
		}
		if rng.IntN(4) == 0 {
			g.fans[s] = pick(n, 1+rng.IntN(2))
		}
	}
	if len(g.edges[n]) == 0 && g.routes[n] == nil && g.fans[n] == nil {
		g.edges[n] = []int{0}
	}
	g.edges[n] = slices.DeleteFunc(g.edges[n], func(d int) bool { return d == n })
	for i := range g.asks {
		g.asks[i] = rng.IntN(5) == 0
	}
	g.conc = rng.IntN(4) // drawn here, so that the corpus's graphs keep their shape
	g.drawFeatures(rng, pick)
	return g
}

// drawFeatures draws the features added to the generator after the fuzz
// corpus was first written: each is off in about half of the graphs, so
// that the older shapes stay common.
func (g *genGraph) drawFeatures(rng *rand.Rand, pick func(hi, k int) []int) {
	n := g.n
	g.fail, g.timeout, g.fallback = make([]int, n), make([]int, n), make([]int, n)
	g.cached, g.deferred, g.gotos, g.cmdSends = make([]bool, n), make([]bool, n), make([][]int, n), make([][]int, n)
	on := func() bool { return rng.IntN(2) == 0 }
	failing, caching, deferring, commanding, joining, pausing := on(), on(), rng.IntN(3) == 0, on(), rng.IntN(3) == 0, rng.IntN(3) == 0
	g.events = on()
	for i := range n {
		g.fallback[i] = -1
		if failing && rng.IntN(3) == 0 {
			g.fail[i] = 1 + rng.IntN(2)
		}
		g.cached[i] = caching && rng.IntN(2) == 0
		g.deferred[i] = deferring && rng.IntN(3) == 0
		if commanding && rng.IntN(2) == 0 {
			g.gotos[i] = pick(n+1, 1+rng.IntN(2))
			if rng.IntN(2) == 0 {
				g.cmdSends[i] = pick(n, 1+rng.IntN(2))
			}
		}
	}
	for i := range n {
		if g.fail[i] == 2 || (failing && rng.IntN(4) == 0) {
			h := rng.IntN(n)
			if h == i || g.fail[h] == 2 {
				g.fail[i] = min(g.fail[i], 1) // no handler that fails for good: retried only
				continue
			}
			g.fallback[i] = h
			if g.fail[i] == 2 && rng.IntN(3) == 0 {
				// Only nodes whose every attempt fails time out: a
				// successful attempt could overrun a short deadline on a
				// loaded machine.
				// Timeouts are drawn but off: an abandoned attempt's
				// goroutine may start only after the run returned, so its
				// node's run count cannot be compared with the model's at
				// a fixed point. (The engine's race with such an attempt
				// is fixed and tested on its own:
				// TestAbandonedAttemptKeepsItsOwnRuntime.) The draw keeps
				// the seeds' graphs.
				g.timeout[i] = 0 * (1 + rng.IntN(2))
			}
		}
	}
	if joining && n >= 2 {
		for range 1 + rng.IntN(2) {
			from := pick(n, 2+rng.IntN(2))
			if len(from) >= 2 {
				g.joins = append(g.joins, genJoin{from: from, to: rng.IntN(n + 1)})
			}
		}
	}
	if pausing {
		g.before, g.after = pick(n, rng.IntN(2)), pick(n, rng.IntN(2))
	}
	if rng.IntN(4) == 0 {
		g.nodeConc = map[int]int{rng.IntN(n): 1 + rng.IntN(2)}
	}
	g.features = g.featureSet()
}

// featureSet names the features the graph uses, for the coverage of
// feature pairs.
func (g *genGraph) featureSet() map[string]bool {
	f := map[string]bool{
		"durability " + fmt.Sprint(g.durability): true,
		"edge":                                   true,
	}
	set := func(name string, on bool) {
		if on {
			f[name] = true
		}
	}
	for s := 0; s <= g.n; s++ {
		set("router", g.routes[s] != nil)
		set("send from a router", g.fans[s] != nil && s < g.n)
		set("send from start", g.fans[s] != nil && s == g.n)
	}
	for i := range g.n {
		set("interrupt", g.asks[i])
		set("retry", g.fail[i] == 1 && g.timeout[i] == 0)
		set("timeout", g.timeout[i] != 0)
		set("fallback", g.fallback[i] >= 0)
		set("cache", g.cached[i])
		set("defer", g.deferred[i])
		set("command goto", g.gotos[i] != nil)
		set("command send", g.cmdSends[i] != nil)
	}
	set("join", g.joins != nil)
	set("interrupt before", g.before != nil)
	set("interrupt after", g.after != nil)
	set("node updates stream", g.updates)
	set("every event", g.events)
	set("concurrency bound", g.conc > 0)
	set("node concurrency bound", g.nodeConc != nil)
	return f
}

// chosen is what source s's router returns on state st: the declared
// destinations at positions j with (len+sum+j+s) % 3 != 0.
func (g *genGraph) chosen(s int, st fzState) []int {
	var out []int
	for j, d := range g.routes[s] {
		if (len(st.Log)+st.Sum+j+s)%3 != 0 {
			out = append(out, d)
		}
	}
	return out
}

// fzSend is a Send of the model: a node and its input.
type fzSend struct {
	node int
	in   fzState
}

// sent is what source s's fan-out sends on state st: up to two tasks while
// the log is short, so that fan-outs in a loop stay small.
func (g *genGraph) sent(s int, st fzState) []fzSend {
	if g.fans[s] == nil || len(st.Log) >= 10 {
		return nil
	}
	var out []fzSend
	for j := range (len(st.Log) + st.Sum + s) % 3 {
		d := g.fans[s][(j+len(st.Log))%len(g.fans[s])]
		out = append(out, fzSend{d, fzState{Log: []string{fmt.Sprintf("sent%d.%d", s, j)}, Sum: j}})
	}
	return out
}

// command is what command node i returns on its input in: the Goto
// destinations at positions j with (len+sum+j+i) % 2 == 0, and up to one
// Send while the input's log is short, on an input naming the task's own
// (so that two tasks of a step never send one input to one node).
func (g *genGraph) command(i int, in fzState) (gotos []int, sends []fzSend) {
	for j, d := range g.gotos[i] {
		if (len(in.Log)+in.Sum+j+i)%2 == 0 {
			gotos = append(gotos, d)
		}
	}
	if g.cmdSends[i] != nil && len(in.Log) < 6 && (len(in.Log)+in.Sum)%2 == 1 {
		d := g.cmdSends[i][in.Sum%len(g.cmdSends[i])]
		sends = append(sends, fzSend{d, fzState{Log: []string{fmt.Sprintf("cmd%d/%s", i, fzKey(in))}, Sum: 1}})
	}
	return gotos, sends
}
