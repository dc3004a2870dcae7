package statgraph_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/statgraph/statgraph/statgraph"
)

// This file holds a model of the engine's documented super-step semantics
// (doc.go, Invoke, AddRoutes, AddSends, Interrupt) and a generator of small
// random graphs over them: plain edges, routers choosing several
// destinations, Send fan-outs from nodes and from Start, a reducer, nodes
// that pause with Interrupt and are resumed, checkpoints, the step limit,
// durability modes, the updates stream and a bound on concurrent tasks
// (WithMaxConcurrency, which must change nothing). refRun interprets a generated
// graph sequentially; realRun builds it with the package and runs it with
// Stream, optionally with one of its store's writes failing and the run
// continued afterwards. The differential test and fuzz target
// (differential_fuzz_test.go) compare the two.

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
	fmt.Fprintf(&b, "%d nodes, limit %d, durability %v, updates %v, concurrency %d, asks %v\n", g.n, g.limit, g.durability, g.updates, g.conc, g.asks)
	for s := 0; s <= g.n; s++ {
		fmt.Fprintf(&b, "  %s: edges %v routes %v sends %v\n", g.source(s), g.names(g.edges[s]), g.names(g.routes[s]), g.names(g.fans[s]))
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
	g.conc = rng.IntN(4) // drawn last, so that the corpus's graphs keep their shape
	return g
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

// outcome is what a run of a generated graph shows: its trace (step
// starts with their tasks, pauses with the pending interrupt IDs, the
// state after each merge, the end), its final state and error, and the
// node runs (each call of the node's function) and executions (as the
// checkpoint's counters count them) per node.
type outcome struct {
	trace    []string
	state    fzState
	err      string
	runs     map[string]int
	counters map[string]int
}

var fzInput = fzState{Log: []string{"in"}}

// refRun interprets g as the documentation says the engine runs it,
// sequentially. A step whose tasks ask pauses after running all its tasks;
// the resumed step runs only the tasks that asked, with the answer, and
// merges every task's update as the uninterrupted step would have.
func refRun(g *genGraph) outcome {
	o := outcome{runs: map[string]int{}, counters: map[string]int{}}
	state := fzInput
	var frontier []int
	var sends []fzSend
	next := map[int]bool{}
	route := func(s int) {
		for _, d := range g.edges[s] {
			if d < g.n {
				next[d] = true
			}
		}
		sends = append(sends, g.sent(s, state)...)
		for _, d := range g.chosen(s, state) {
			if d < g.n {
				next[d] = true
			}
		}
	}
	advance := func() {
		frontier = frontier[:0]
		for d := range g.n {
			if next[d] {
				frontier = append(frontier, d)
			}
		}
		clear(next)
	}
	route(g.n)
	advance()
	step := 0
	for len(frontier)+len(sends) > 0 {
		if step >= g.limit {
			o.err = "step limit"
			break
		}
		step++
		type task struct {
			node, seq int
			in        fzState
		}
		var tasks []task
		seqs := map[int]int{}
		for _, i := range frontier {
			tasks = append(tasks, task{i, seqs[i], state})
			seqs[i]++
		}
		for _, s := range sends {
			tasks = append(tasks, task{s.node, seqs[s.node], s.in})
			seqs[s.node]++
		}
		names := make([]string, len(tasks))
		for k, t := range tasks {
			names[k] = g.name(t.node)
		}
		slices.Sort(names)
		o.trace = append(o.trace, fmt.Sprintf("step %d %v", step, names))
		outs := make([]fzState, len(tasks))
		var pending []string
		for k, t := range tasks {
			name := g.name(t.node)
			o.runs[name]++
			if g.asks[t.node] {
				id := name
				if t.seq > 0 {
					id = fmt.Sprintf("%s[%d]", name, t.seq)
				}
				pending = append(pending, fmt.Sprintf("%s:%d:0", id, step))
				continue
			}
			outs[k] = fzUpdate(name, t.in, 0)
		}
		if pending != nil {
			slices.Sort(pending)
			o.trace = append(o.trace, fmt.Sprintf("pause %v", pending), fmt.Sprintf("step %d %v", step, names))
			for k, t := range tasks {
				if g.asks[t.node] {
					o.runs[g.name(t.node)]++
					outs[k] = fzUpdate(g.name(t.node), t.in, fzAnswer)
				}
			}
		}
		for _, u := range outs {
			state = fzReduce(state, u)
		}
		for _, t := range tasks {
			o.counters[g.name(t.node)]++
		}
		if g.updates {
			o.trace = append(o.trace, fmt.Sprintf("node updates %d", len(tasks)))
		}
		o.trace = append(o.trace, fmt.Sprintf("update %d %v", step, state))
		sendsRan := sends
		sends = nil
		routed := map[int]bool{}
		for _, i := range frontier {
			routed[i] = true
			route(i)
		}
		for _, s := range sendsRan {
			if !routed[s.node] {
				routed[s.node] = true
				route(s.node)
			}
		}
		advance()
	}
	o.state = state
	o.trace = append(o.trace, fmt.Sprintf("end %q", o.err))
	return o
}

// build compiles g with the package; an error means Compile refused it.
func (g *genGraph) build(runs *sync.Map, cp statgraph.Checkpointer) (*statgraph.Graph[fzState], error) {
	b := statgraph.New[fzState]().SetReducer(fzReduce)
	count := func(name string) {
		v, _ := runs.LoadOrStore(name, new(int64))
		mu.Lock()
		*v.(*int64)++
		mu.Unlock()
	}
	for i := range g.n {
		name, asks := g.name(i), g.asks[i]
		b.AddNode(name, func(ctx context.Context, in fzState) (fzState, error) {
			count(name)
			answer := 0
			if asks {
				v, err := statgraph.Interrupt[int](ctx, name)
				if err != nil {
					return fzState{}, err
				}
				answer = v
			}
			return fzUpdate(name, in, answer), nil
		})
	}
	for s := 0; s <= g.n; s++ {
		for _, d := range g.edges[s] {
			b.AddEdge(g.source(s), g.name(d))
		}
		if g.routes[s] != nil {
			pathMap := map[string]string{}
			for _, d := range g.routes[s] {
				pathMap[g.name(d)] = g.name(d)
			}
			b.AddRoutes(g.source(s), func(_ context.Context, st fzState) []string {
				return g.names(g.chosen(s, st))
			}, pathMap)
		}
		if g.fans[s] != nil {
			b.AddSends(g.source(s), func(_ context.Context, st fzState) []statgraph.Send[fzState] {
				var out []statgraph.Send[fzState]
				for _, t := range g.sent(s, st) {
					out = append(out, statgraph.Send[fzState]{To: g.name(t.node), Input: t.in})
				}
				return out
			}, g.names(g.fans[s])...)
		}
	}
	return b.Compile(statgraph.WithCheckpointer(cp))
}

// mu guards the run counters of realRun's nodes.
var mu sync.Mutex

// errCrash is the failure crashingCP injects.
var errCrash = errors.New("injected checkpoint write failure")

// crashingCP is a store whose failAt-th write (Put or PutWrites, from 1)
// fails, as a process killed at that point would leave the thread; 0 fails
// none. writes counts the writes tried.
type crashingCP struct {
	statgraph.Checkpointer
	mu             sync.Mutex // guards writes
	writes, failAt int
}

func (c *crashingCP) write() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	if c.writes == c.failAt {
		return errCrash
	}
	return nil
}

func (c *crashingCP) Put(ctx context.Context, cp *statgraph.Checkpoint) error {
	if err := c.write(); err != nil {
		return err
	}
	return c.Checkpointer.Put(ctx, cp)
}

func (c *crashingCP) PutWrites(ctx context.Context, thread string, id int64, ws []statgraph.PendingWrite) error {
	if err := c.write(); err != nil {
		return err
	}
	return c.Checkpointer.PutWrites(ctx, thread, id, ws)
}

// realRun runs g with the package, resuming each pause with fzAnswer for
// every pending interrupt, and reports what it showed. ok is false when
// Compile refused the graph. The store's failAt-th write fails (0: none);
// the run is then continued as a restarted process would: the thread from
// its checkpoint with no input, or from the start when it has none.
func realRun(g *genGraph, failAt int) (o outcome, cp *crashingCP, ok bool) {
	runs := &sync.Map{}
	cp = &crashingCP{Checkpointer: statgraph.NewMemoryCheckpointer(false), failAt: failAt}
	cg, err := g.build(runs, cp)
	if err != nil {
		return outcome{}, nil, false
	}
	ctx := context.Background()
	kinds := []statgraph.EventKind{statgraph.EventStepStart, statgraph.EventUpdate, statgraph.EventRunEnd}
	if g.updates {
		kinds = append(kinds, statgraph.EventNodeUpdate)
	}
	opts := []statgraph.RunOption{statgraph.WithThread("fz"), statgraph.WithStepLimit(g.limit), statgraph.WithDurability(g.durability), statgraph.WithEvents(kinds...), statgraph.WithMaxConcurrency(g.conc)}
	var resume statgraph.ResumeMap
	input := fzInput
	for range 100 {
		runOpts := opts
		if resume != nil {
			runOpts = append(slices.Clip(opts), statgraph.WithResume(resume))
		}
		var end error
		updates := 0
		for ev, err := range cg.Stream(ctx, input, runOpts...) {
			switch ev.Kind {
			case statgraph.EventStepStart:
				o.trace = append(o.trace, fmt.Sprintf("step %d %v", ev.Step, ev.Nodes))
				updates = 0
			case statgraph.EventNodeUpdate:
				updates++
			case statgraph.EventUpdate:
				o.trace = append(o.trace, fmt.Sprintf("update %d %v", ev.Step, ev.State))
				if g.updates {
					o.trace = append(o.trace[:len(o.trace)-1], fmt.Sprintf("node updates %d", updates), o.trace[len(o.trace)-1])
				}
			case statgraph.EventRunEnd:
				o.state = ev.State
			}
			if err != nil {
				end = err
			}
		}
		var paused interface {
			Interrupts() []statgraph.Interruption
		}
		var pending []statgraph.Interruption
		switch {
		case errors.Is(end, errCrash):
			o.trace = append(o.trace, "crash")
			resume, input = nil, fzState{}
			if _, err := cg.State(ctx, "fz"); errors.Is(err, statgraph.ErrNoCheckpoint) {
				input = fzInput
			}
			continue
		case errors.As(end, &paused):
			pending = paused.Interrupts()
		case errors.Is(end, statgraph.ErrInterrupted):
			// Continued without WithResume after a crash: the thread
			// still waits at its interrupts.
			snap, err := cg.State(ctx, "fz")
			if err != nil {
				o.err = err.Error()
				break
			}
			pending = snap.Interrupts
		}
		if pending == nil {
			switch {
			case end == nil:
			case errors.Is(end, statgraph.ErrStepLimit):
				o.err = "step limit"
			default:
				o.err = end.Error()
			}
			break
		}
		resume = statgraph.ResumeMap{}
		var ids []string
		for _, in := range pending {
			ids = append(ids, in.ID)
			resume[in.ID] = fzAnswer
		}
		slices.Sort(ids)
		o.trace = append(o.trace, fmt.Sprintf("pause %v", ids))
	}
	o.trace = append(o.trace, fmt.Sprintf("end %q", o.err))
	o.runs = map[string]int{}
	runs.Range(func(k, v any) bool {
		o.runs[k.(string)] = int(*v.(*int64))
		return true
	})
	snap, err := cg.State(ctx, "fz")
	if err != nil {
		o.err += "; State: " + err.Error()
		return o, cp, true
	}
	o.counters = snap.Counters
	if o.err == "" && !slices.Equal(snap.State.Log, o.state.Log) {
		o.err = fmt.Sprintf("State's log %v differs from the run's", snap.State.Log)
	}
	return o, cp, true
}
