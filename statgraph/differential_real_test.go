package statgraph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

// fzTimeout is the WithTimeout of nodes whose attempts time out.
const fzTimeout = 5 * time.Millisecond

// errInjected is the failure of a generated node's failing attempts.
var errInjected = errors.New("injected node failure")

// fzCounts counts the node runs of realRun's graphs and notes what a
// node saw that the documentation rules out.
type fzCounts struct {
	mu        sync.Mutex // guards the fields
	runs      map[string]int
	anomalies []string
}

func (c *fzCounts) run(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs[name]++
}

func (c *fzCounts) anomaly(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.anomalies = append(c.anomalies, fmt.Sprintf(format, args...))
}

// build compiles g with the package; an error means Compile refused it.
func (g *genGraph) build(counts *fzCounts, cp statgraph.Checkpointer) (*statgraph.Graph[fzState], error) {
	b := statgraph.New[fzState]().SetReducer(fzReduce)
	for i := range g.n {
		name := g.name(i)
		body := func(ctx context.Context, in fzState) (fzState, error) {
			counts.run(name)
			rt := statgraph.RuntimeOf(ctx)
			rt.Write(name)
			if rt.Fallback != nil {
				var ne *statgraph.NodeError
				if !errors.As(rt.Fallback, &ne) || g.fallback[g.index(ne.Node)] != i {
					counts.anomaly("%s ran as a fallback of %v, not a *NodeError of a node it handles", name, rt.Fallback)
				}
			}
			if rt.Attempt <= g.fail[i] {
				switch g.timeout[i] {
				case 1:
					<-ctx.Done()
					return fzState{}, ctx.Err()
				case 2:
					time.Sleep(2 * fzTimeout) // abandoned at the deadline
				}
				return fzState{}, errInjected
			}
			answer := 0
			if g.asks[i] {
				v, err := statgraph.Interrupt[int](ctx, name)
				if err != nil {
					return fzState{}, err
				}
				answer = v
			}
			return fzUpdate(name, in, answer), nil
		}
		var opts []statgraph.NodeOption
		if g.fail[i] > 0 {
			opts = append(opts, statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Microsecond, BackoffFactor: 1}))
		}
		if g.timeout[i] > 0 {
			opts = append(opts, statgraph.WithTimeout(fzTimeout))
		}
		if h := g.fallback[i]; h >= 0 {
			opts = append(opts, statgraph.WithFallback(g.name(h)))
		}
		if g.cached[i] {
			opts = append(opts, statgraph.WithCache(time.Hour, fzKey))
		}
		if g.deferred[i] {
			opts = append(opts, statgraph.WithDefer())
		}
		if g.gotos[i] == nil {
			b.AddNode(name, body, opts...)
			continue
		}
		b.AddCommandNode(name, func(ctx context.Context, in fzState) (statgraph.Command[fzState], error) {
			out, err := body(ctx, in)
			if err != nil {
				return statgraph.Command[fzState]{}, err
			}
			gotos, sends := g.command(i, in)
			c := statgraph.Command[fzState]{Update: out, Goto: g.names(gotos)}
			for _, s := range sends {
				c.Sends = append(c.Sends, statgraph.Send[fzState]{To: g.name(s.node), Input: s.in})
			}
			return c, nil
		}, g.names(append(slices.Clone(g.gotos[i]), g.cmdSends[i]...)), opts...)
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
	for _, j := range g.joins {
		b.AddJoin(g.names(j.from), g.name(j.to))
	}
	opts := []statgraph.CompileOption{statgraph.WithCheckpointer(cp)}
	if g.before != nil {
		opts = append(opts, statgraph.WithInterruptBefore(g.names(g.before)...))
	}
	if g.after != nil {
		opts = append(opts, statgraph.WithInterruptAfter(g.names(g.after)...))
	}
	return b.Compile(opts...)
}

// index is the node index of name.
func (g *genGraph) index(name string) int {
	for i := range g.n {
		if g.name(i) == name {
			return i
		}
	}
	return -1
}

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

// fzStore is the store a realRun runs on: the in-memory one unless a test
// gives another.
type fzStore func() statgraph.Checkpointer

func memoryStore() statgraph.Checkpointer { return statgraph.NewMemoryCheckpointer(false) }

// allKinds are the event kinds a graph with g.events streams.
var allKinds = []statgraph.EventKind{
	statgraph.EventRunStart, statgraph.EventStepStart, statgraph.EventNodeStart, statgraph.EventRetry,
	statgraph.EventNodeEnd, statgraph.EventUpdate, statgraph.EventRoute, statgraph.EventCheckpoint,
	statgraph.EventInterrupt, statgraph.EventRunEnd, statgraph.EventCustom,
}

// realRun runs g with the package, resuming each pause with fzAnswer for
// every pending interrupt, and reports what it showed. ok is false when
// Compile refused the graph. The store's failAt-th write fails (0: none);
// the run is then continued as a restarted process would: the thread from
// its checkpoint with no input, or from the start when it has none.
func realRun(g *genGraph, failAt int, open fzStore) (o outcome, cp *crashingCP, ok bool) {
	counts := &fzCounts{runs: map[string]int{}}
	cp = &crashingCP{Checkpointer: open(), failAt: failAt}
	cg, err := g.build(counts, cp)
	if err != nil {
		return outcome{}, nil, false
	}
	ctx := context.Background()
	kinds := []statgraph.EventKind{statgraph.EventStepStart, statgraph.EventUpdate, statgraph.EventRunEnd}
	if g.events {
		kinds = allKinds
	}
	if g.updates {
		kinds = append(slices.Clip(kinds), statgraph.EventNodeUpdate)
	}
	opts := []statgraph.RunOption{statgraph.WithThread("fz"), statgraph.WithStepLimit(g.limit), statgraph.WithDurability(g.durability), statgraph.WithEvents(kinds...), statgraph.WithMaxConcurrency(g.conc)}
	for i, n := range g.nodeConc {
		opts = append(opts, statgraph.WithMaxConcurrency(n, g.name(i)))
	}
	var tot fzTotals
	stepNodes, started := map[int][]string{}, map[int][]string{}
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
				stepNodes[ev.Step] = ev.Nodes
			case statgraph.EventNodeUpdate:
				updates++
			case statgraph.EventUpdate:
				o.trace = append(o.trace, fmt.Sprintf("update %d %v", ev.Step, ev.State))
				if g.updates {
					o.trace = append(o.trace[:len(o.trace)-1], fmt.Sprintf("node updates %d", updates), o.trace[len(o.trace)-1])
				}
			case statgraph.EventRunEnd:
				o.state = ev.State
			case statgraph.EventNodeStart:
				tot.starts++
				if !slices.Contains(started[ev.Step], ev.Node) {
					started[ev.Step] = append(started[ev.Step], ev.Node)
				}
			case statgraph.EventNodeEnd:
				if ev.Cached {
					tot.cached++
				}
			case statgraph.EventRetry:
				tot.retries++
			case statgraph.EventCustom:
				tot.customs++
				if ev.Custom != ev.Node {
					counts.anomaly("custom event of %s carries %v", ev.Node, ev.Custom)
				}
			case statgraph.EventInterrupt:
				tot.interrupts++
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
	if g.events {
		o.trace = append(o.trace, tot.String())
		for step, names := range started {
			want := slices.Compact(slices.Sorted(slices.Values(stepNodes[step])))
			if got := slices.Sorted(slices.Values(names)); !slices.Equal(got, want) {
				counts.anomaly("step %d started tasks of %v, its EventStepStart lists %v", step, got, want)
			}
		}
	}
	o.trace = append(o.trace, fmt.Sprintf("end %q", o.err))
	o.runs = counts.runs
	if counts.anomalies != nil {
		slices.Sort(counts.anomalies)
		o.err += fmt.Sprintf("; anomalies: %v", counts.anomalies)
	}
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
