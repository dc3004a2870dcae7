package statgraph_test

import (
	"fmt"
	"slices"
)

// outcome is what a run of a generated graph shows: its trace (step
// starts with their tasks, pauses with the pending interrupt IDs, the
// state after each merge, the end, and the totals of the events streamed),
// its final state and error, and the node runs (each call of the node's
// function) and executions (as the checkpoint's counters count them) per
// node.
type outcome struct {
	trace    []string
	state    fzState
	err      string
	runs     map[string]int
	counters map[string]int
	maxStep  int // the most node runs of one step (model only)
}

var fzInput = fzState{Log: []string{"in"}}

// fzTotals are the totals of the events of a run that the model predicts.
type fzTotals struct {
	starts, cached, retries, customs, interrupts int
}

func (t fzTotals) String() string {
	return fmt.Sprintf("events: %d node starts, %d cached, %d retries, %d custom, %d interrupts", t.starts, t.cached, t.retries, t.customs, t.interrupts)
}

// fzResult is what one execution of a task gives: its update, where a
// command node goes, and whether it failed for good.
type fzResult struct {
	out    fzState
	gotos  []int
	sends  []fzSend
	failed bool
}

// refRun interprets g as the documentation says the engine runs it,
// sequentially. A step whose tasks ask pauses after running all its tasks;
// the resumed step runs only the tasks that asked, with the answer, and
// merges every task's update as the uninterrupted step would have.
func refRun(g *genGraph) outcome {
	o := outcome{runs: map[string]int{}, counters: map[string]int{}}
	var tot fzTotals
	state := fzInput
	var frontier, held []int
	var sends []fzSend
	next := map[int]bool{}
	arrived := make([]map[int]bool, len(g.joins))
	cache := map[string]fzResult{}
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
		for j, jn := range g.joins {
			if !slices.Contains(jn.from, s) {
				continue
			}
			if arrived[j] == nil {
				arrived[j] = map[int]bool{}
			}
			if arrived[j][s] = true; len(arrived[j]) == len(jn.from) {
				clear(arrived[j])
				if jn.to < g.n {
					next[jn.to] = true
				}
			}
		}
	}
	advance := func() {
		frontier = frontier[:0]
		for d := range g.n {
			if !next[d] {
				continue
			}
			if !g.deferred[d] {
				frontier = append(frontier, d)
			} else if !slices.Contains(held, d) {
				held = append(held, d)
			}
		}
		clear(next)
		if len(frontier) == 0 && len(sends) == 0 {
			frontier, held = append(frontier, held...), held[:0]
			slices.Sort(frontier)
		}
	}
	// exec runs one task of node i on in, answer being its Interrupt's
	// value (0: none yet); asked reports a pause.
	exec := func(i int, in fzState, answer int) (r fzResult, asked bool) {
		name := g.name(i)
		key := name + "/" + fzKey(in)
		tot.starts++
		if hit, ok := cache[key]; g.cached[i] && ok {
			tot.cached++
			return hit, false
		}
		for attempt := 1; ; attempt++ {
			o.runs[name]++
			tot.customs++
			if attempt <= g.fail[i] {
				if attempt == 2 {
					return fzResult{failed: true}, false
				}
				tot.retries++
				tot.starts++
				continue
			}
			break
		}
		if g.asks[i] && answer == 0 {
			return fzResult{}, true
		}
		r.out = fzUpdate(name, in, answer)
		if g.gotos[i] != nil {
			r.gotos, r.sends = g.command(i, in)
		}
		if g.cached[i] {
			cache[key] = r
		}
		return r, false
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
		var before []string
		for k, t := range tasks {
			names[k] = g.name(t.node)
			if id := fmt.Sprintf("%s:before:%d", names[k], step); slices.Contains(g.before, t.node) && !slices.Contains(before, id) {
				before = append(before, id)
			}
		}
		if before != nil {
			slices.Sort(before)
			o.trace = append(o.trace, fmt.Sprintf("pause %v", before))
			tot.interrupts++
		}
		slices.Sort(names)
		o.trace = append(o.trace, fmt.Sprintf("step %d %v", step, names))
		runsBefore := total(o.runs)
		res := make([]fzResult, len(tasks))
		var pending []string
		for k, t := range tasks {
			name := g.name(t.node)
			r, asked := exec(t.node, t.in, 0)
			if asked {
				id := name
				if t.seq > 0 {
					id = fmt.Sprintf("%s[%d]", name, t.seq)
				}
				pending = append(pending, fmt.Sprintf("%s:%d:0", id, step))
				continue
			}
			res[k] = r
		}
		if pending != nil {
			slices.Sort(pending)
			tot.interrupts++
			o.trace = append(o.trace, fmt.Sprintf("pause %v", pending), fmt.Sprintf("step %d %v", step, names))
			for k, t := range tasks {
				if g.asks[t.node] && res[k].out.Log == nil && !res[k].failed {
					res[k], _ = exec(t.node, t.in, fzAnswer)
				}
			}
		}
		o.maxStep = max(o.maxStep, total(o.runs)-runsBefore)
		merged := 0
		for _, r := range res {
			if !r.failed {
				state = fzReduce(state, r.out)
				merged++
			}
		}
		for _, t := range tasks {
			o.counters[g.name(t.node)]++
		}
		if g.updates {
			o.trace = append(o.trace, fmt.Sprintf("node updates %d", merged))
		}
		o.trace = append(o.trace, fmt.Sprintf("update %d %v", step, state))
		sends = nil
		routed := map[int]bool{}
		follow := func(t task, r fzResult, first bool) {
			if r.failed {
				next[g.fallback[t.node]] = true
				return
			}
			if first {
				route(t.node)
			}
			for _, d := range r.gotos {
				if d < g.n {
					next[d] = true
				}
			}
			sends = append(sends, r.sends...)
		}
		nf := len(frontier)
		for k, t := range tasks[:nf] {
			routed[t.node] = true
			follow(t, res[k], true)
		}
		for k, t := range tasks[nf:] {
			follow(t, res[nf+k], !routed[t.node])
			routed[t.node] = true
		}
		advance()
		var after []string
		for _, t := range tasks {
			if id := fmt.Sprintf("%s:after:%d", g.name(t.node), step); slices.Contains(g.after, t.node) && !slices.Contains(after, id) {
				after = append(after, id)
			}
		}
		if after != nil && len(frontier)+len(sends) > 0 {
			slices.Sort(after)
			o.trace = append(o.trace, fmt.Sprintf("pause %v", after))
			tot.interrupts++
		}
	}
	o.state = state
	if g.events {
		o.trace = append(o.trace, tot.String())
	}
	o.trace = append(o.trace, fmt.Sprintf("end %q", o.err))
	return o
}

// total is the sum of a run count map's values.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
