package statgraph

import (
	"context"
	"slices"
)

// nodeKind tells plain nodes from validators and gates.
type nodeKind uint8

const (
	plainNode nodeKind = iota
	validatorKind
	gateKind
)

// validatorNode is the compiled form of an AddValidator node.
type validatorNode[S any] struct {
	severity Severity
	mode     Mode
	key      func(S) string // nil: no input key
	slot     int            // index into gateRun.verdicts
}

// gateNode is the compiled form of an AddGate node.
type gateNode[S any] struct {
	cfg        GateConfig[S]
	validators []int // node indices, in the order of cfg.Validators
	targetOf   []int // per validator: its retry target's slot in gateGraph.targets
	targets    []int // distinct target slots of the gate, sorted
	// covers[a][b] reports that targets[a] is upstream of targets[b], so
	// that retrying a re-runs b anyway.
	covers     [][]bool
	single     [][]int    // per target position: []int{targets[i]}, shared by decisions
	names      [][]string // per target position: []string{its name}, shared by decisions
	failTo     int        // node index of cfg.FailTo; -1 when empty
	maxRetries int        // cfg.MaxRetries resolved
}

// gateGraph is what a graph with gates needs at run time beyond its nodes.
type gateGraph[S any] struct {
	targets    []targetSpec
	tslot      []int // per node: its slot in targets, or -1
	startSlot  int   // Start's slot in targets, or -1
	validators int   // number of validator nodes
}

// targetSpec is a node that some gate retries, with the limits that apply
// to it: the most restrictive of every gate that retries it.
type targetSpec struct {
	idx       int // node index or startIdx
	name      string
	limit     int // retries per retry context
	nodeLimit int // retries over the run; 0 = none
}

// slotOf returns the target slot of node index i (startIdx for Start), or -1.
func (gg *gateGraph[S]) slotOf(i int) int {
	if i == startIdx {
		return gg.startSlot
	}
	return gg.tslot[i]
}

// validatorBody wraps a validator so that it runs as a node: the verdict
// goes into the slot's nodeInfo and the node returns no update.
func validatorBody[S any](fn ValidatorFunc[S]) NodeFunc[S] {
	return func(ctx context.Context, s S) (S, error) {
		v, err := fn(ctx, s)
		if err == nil {
			if info, ok := ctx.Value(infoKey{}).(*nodeInfo); ok && info.gate != nil {
				info.gate.verdict, info.gate.hasVerdict = v, true
			}
		}
		var zero S
		return zero, err
	}
}

// compileGates resolves validators and gates: the gates' validators, retry
// targets, failure nodes and limits. Retry targets must be upstream of their
// gate, and no check may retry itself.
func (g *Graph[S]) compileGates(b *Builder[S], add func(string, ...any)) {
	var gg *gateGraph[S]
	for _, n := range g.nodes {
		ns := b.nodes[n.name]
		if ns.validate == nil && ns.gate == nil {
			continue
		}
		if gg == nil {
			gg = &gateGraph[S]{startSlot: -1, tslot: make([]int, len(g.nodes))}
			for i := range gg.tslot {
				gg.tslot[i] = -1
			}
		}
		if ns.validate != nil {
			key, _ := ns.cfg.inputKey.(func(S) string)
			n.kind = validatorKind
			n.val = &validatorNode[S]{severity: ns.cfg.severity, mode: ns.cfg.mode, key: key, slot: gg.validators}
			n.fn = validatorBody(ns.validate)
			gg.validators++
			continue
		}
		n.kind = gateKind
		n.gate = &gateNode[S]{cfg: *ns.gate, failTo: -1}
		switch {
		case ns.gate.MaxRetries == 0:
			n.gate.maxRetries = 2
		case ns.gate.MaxRetries > 0:
			n.gate.maxRetries = ns.gate.MaxRetries
		}
		if f := ns.gate.FailTo; f != "" {
			i, ok := g.byName[f]
			switch {
			case !ok:
				add("gate %q: FailTo names unknown node %q", n.name, f)
			case i == n.idx:
				add("gate %q: FailTo names the gate itself", n.name)
			default:
				n.gate.failTo = i
			}
		}
		if ns.gate.OnExhausted == Escalate && g.cfg.checkpointer == nil {
			add("gate %q escalates on exhaustion, which pauses the run: add WithCheckpointer", n.name)
		}
	}
	if gg == nil {
		return
	}
	g.gates = gg
	preds := g.predecessors()
	listed := make([]bool, len(g.nodes))
	for _, n := range g.nodes {
		if n.gate != nil {
			g.compileGate(n, preds, listed, add)
		}
	}
	for _, n := range g.nodes {
		if n.kind == validatorKind && !listed[n.idx] {
			add("validator %q feeds no gate: list it in a gate's Validators", n.name)
		}
	}
}

func (g *Graph[S]) compileGate(n *node[S], preds [][]int, listed []bool, add func(string, ...any)) {
	gg, gn, cfg := g.gates, n.gate, &n.gate.cfg
	up := upstream(preds, n.idx)
	checked := map[string]int{} // target name -> slot, or -1 when invalid
	target := func(name string) int {
		if s, ok := checked[name]; ok {
			return s
		}
		i, ok := g.byName[name]
		switch {
		case name == Start:
			i, ok = startIdx, true
		case !ok:
			add("gate %q: retry target %q is not a node", n.name, name)
		case i == n.idx:
			add("gate %q retries itself: a retry target must be upstream of the gate", n.name)
			ok = false
		case !up[i]:
			add("gate %q: retry target %q is not upstream of the gate; retries go upstream only", n.name, name)
			ok = false
		}
		s := -1
		if ok {
			s = gg.slot(i, name, gn.maxRetries, cfg.MaxNodeRetries)
		}
		checked[name] = s
		return s
	}
	for _, v := range cfg.Validators {
		i, ok := g.byName[v]
		switch {
		case !ok:
			add("gate %q: validator %q is not a node", n.name, v)
			continue
		case g.nodes[i].kind != validatorKind:
			add("gate %q: %q is not a validator; add it with AddValidator", n.name, v)
			continue
		}
		listed[i] = true
		name := cfg.RetryTarget
		if t, ok := cfg.RetryTargets[v]; ok {
			name = t
		}
		if name == "" {
			continue // reported by AddGate
		}
		if name == v {
			add("validator %q of gate %q retries itself: a retry target must be upstream of the check", v, n.name)
			continue
		}
		s := target(name)
		if s < 0 {
			continue
		}
		gn.validators = append(gn.validators, i)
		gn.targetOf = append(gn.targetOf, s)
		if !slices.Contains(gn.targets, s) {
			gn.targets = append(gn.targets, s)
		}
	}
	for _, v := range sortedKeys(cfg.RetryTargets) {
		if !slices.Contains(cfg.Validators, v) {
			add("gate %q: RetryTargets names %q, which is not one of its Validators", n.name, v)
		}
	}
	slices.Sort(gn.targets)
	for _, s := range gn.targets {
		gn.single = append(gn.single, []int{s})
		gn.names = append(gn.names, []string{gg.targets[s].name})
	}
	gn.covers = make([][]bool, len(gn.targets))
	for a, sa := range gn.targets {
		gn.covers[a] = make([]bool, len(gn.targets))
		for bi, sb := range gn.targets {
			ia, ib := gg.targets[sa].idx, gg.targets[sb].idx
			gn.covers[a][bi] = a != bi && (ia == startIdx || (ib != startIdx && upstream(preds, ib)[ia]))
		}
	}
}

// slot returns the target slot of node index i, creating it, and tightens
// its limits with those of one more gate.
func (gg *gateGraph[S]) slot(i int, name string, limit, nodeLimit int) int {
	s := gg.slotOf(i)
	if s < 0 {
		s = len(gg.targets)
		gg.targets = append(gg.targets, targetSpec{idx: i, name: name, limit: limit, nodeLimit: nodeLimit})
		if i == startIdx {
			gg.startSlot = s
		} else {
			gg.tslot[i] = s
		}
		return s
	}
	t := &gg.targets[s]
	t.limit = min(t.limit, limit)
	if nodeLimit > 0 && (t.nodeLimit == 0 || nodeLimit < t.nodeLimit) {
		t.nodeLimit = nodeLimit
	}
	return s
}

// predecessors returns, per node, the nodes with an edge to it; Start is
// left out, as it is upstream of every node.
func (g *Graph[S]) predecessors() [][]int {
	preds := make([][]int, len(g.nodes))
	for _, n := range g.nodes {
		for _, t := range n.successors() {
			if t >= 0 {
				preds[t] = append(preds[t], n.idx)
			}
		}
	}
	return preds
}

// upstream reports, per node, whether it can lead to node i.
func upstream(preds [][]int, i int) []bool {
	up := make([]bool, len(preds))
	mark(up, func(j int) []int { return preds[j] }, preds[i])
	return up
}
