package statgraph

// This file runs the checks that layers over the Builder (package
// statgraph/gate) add for what they build.

// AddCheck adds a check that Compile runs once the graph's edges are
// known; a non-nil error is reported by Compile with the builder's other
// problems (its text should say what is wrong, where, and what to do).
// reaches(from, to) reports whether node to can run after node from by
// following one or more edges of any kind (plain, conditional, joins,
// sends, commands, fallbacks); from may be Start and to End, and an
// unknown name reaches nothing. Layers that add nodes and edges for the
// caller use it to check how the caller wired them: a gate checks that its
// retry target is upstream of it. A nil check is reported by Compile.
//
// Compile prepares the answers once, in O(nodes + edges): a query from
// Start, to End, within a cycle or against the graph's topological order
// costs O(1) (a gate's retry target, which the gate has an edge back to,
// is upstream of it exactly when the two share a cycle). Only a query
// along the order between nodes of different cycles searches the graph,
// visiting at most the nodes between the two. The checks run one after
// the other, in the goroutine that calls Compile.
func (b *Builder[S]) AddCheck(check func(reaches func(from, to string) bool) error) *Builder[S] {
	if check == nil {
		b.problem("AddCheck: nil check")
		return b
	}
	b.checks = append(b.checks, check)
	return b
}

// runChecks runs b's checks on g, whose edges are linked; fromStart and
// toEnd are reachable's answers.
func (g *Graph[S]) runChecks(b *Builder[S], fromStart, toEnd []bool, add func(string, ...any)) {
	if len(b.checks) == 0 {
		return
	}
	r := newReachIndex(g, fromStart, toEnd)
	for _, c := range b.checks {
		if err := c(r.reaches); err != nil {
			add("%s", err.Error())
		}
	}
}

// reachIndex answers AddCheck's reaches queries on a compiled graph. The
// strongly connected components and a depth-first numbering of the nodes
// are computed on the first query between two nodes, in one O(nodes +
// edges) pass; after that a query is O(1) unless it needs a search.
type reachIndex struct {
	names            map[string]int
	startSucc        []int // Start's successors, End included
	fromStart, toEnd []bool
	next             func(i int) []int // a node's successors, End included

	succ   [][]int // per node, its successors that are nodes
	comp   []int   // per node, its component, numbered in reverse topological order
	cyclic []bool  // per component, whether one of its nodes reaches itself
	// A node j was discovered while the walk was at node i, so that i
	// reaches j, when pre[i] < pre[j] <= last[i].
	pre, last []int

	seen    []uint32 // search marks: a node is seen when seen[i] == gen
	gen     uint32
	stack   []int
	visited int // nodes the component pass and the searches visited (tests bound it)
}

func newReachIndex[S any](g *Graph[S], fromStart, toEnd []bool) *reachIndex {
	return &reachIndex{
		names:     g.byName,
		startSucc: g.start.successors(),
		fromStart: fromStart,
		toEnd:     toEnd,
		next:      func(i int) []int { return g.nodes[i].successors() },
	}
}

// reaches is the function AddCheck's checks are given.
func (r *reachIndex) reaches(from, to string) bool {
	j, okTo := r.names[to]
	if from == Start {
		if to == End {
			for _, t := range r.startSucc {
				if t == endIdx || t >= 0 && r.toEnd[t] {
					return true
				}
			}
			return false
		}
		return okTo && r.fromStart[j]
	}
	i, ok := r.names[from]
	switch {
	case !ok:
		return false
	case to == End:
		return r.toEnd[i]
	case !okTo:
		return false
	}
	if r.comp == nil {
		r.components()
	}
	ci, cj := r.comp[i], r.comp[j]
	switch {
	case ci == cj:
		return r.cyclic[ci] // i == j needs a cycle through i; else they share one
	case ci < cj:
		return false // j's component comes before i's in topological order
	case r.pre[i] < r.pre[j] && r.pre[j] <= r.last[i]:
		return true // found under i by the numbering walk
	}
	return r.search(i, j)
}

// search reports whether node i reaches node j, of another component
// that comes after i's in topological order, walking from i only through
// the nodes whose components lie between the two.
func (r *reachIndex) search(i, j int) bool {
	r.gen++
	if r.gen == 0 { // wrapped: clear the marks
		clear(r.seen)
		r.gen = 1
	}
	cj := r.comp[j]
	stack := append(r.stack[:0], i)
	r.seen[i] = r.gen
	found := false
	for len(stack) > 0 && !found {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		r.visited++
		for _, t := range r.succ[x] {
			switch {
			case r.comp[t] == cj || r.pre[t] < r.pre[j] && r.pre[j] <= r.last[t]:
				found = true
			case r.comp[t] < cj || r.seen[t] == r.gen:
				// cannot reach j, or already walked
			default:
				r.seen[t] = r.gen
				stack = append(stack, t)
			}
		}
	}
	r.stack = stack[:0]
	return found
}

// components numbers the strongly connected components of the nodes
// (Tarjan's algorithm, without recursion) and the nodes in depth-first
// order, walking first from Start's successors so that the numbering
// follows the graph's own paths.
func (r *reachIndex) components() {
	n := len(r.names)
	r.succ = make([][]int, n)
	r.comp = make([]int, n)
	r.pre = make([]int, n)
	r.last = make([]int, n)
	r.seen = make([]uint32, n)
	selfLoop := make([]bool, n)
	for i := range n {
		for _, t := range r.next(i) {
			if t >= 0 {
				r.succ[i] = append(r.succ[i], t)
				selfLoop[i] = selfLoop[i] || t == i
			}
		}
	}
	low := make([]int, n)
	onStack := make([]bool, n)
	var stack []int // Tarjan's stack of nodes not yet in a component
	type frame struct{ v, k int }
	var walk []frame
	counter := 0
	visit := func(v int) {
		counter++
		r.pre[v], low[v] = counter, counter
		onStack[v] = true
		stack = append(stack, v)
		walk = append(walk, frame{v: v})
		r.visited++
	}
	roots := make([]int, 0, len(r.startSucc)+n)
	for _, t := range r.startSucc {
		if t >= 0 {
			roots = append(roots, t)
		}
	}
	for i := range n {
		roots = append(roots, i)
	}
	for _, root := range roots {
		if r.pre[root] != 0 {
			continue
		}
		visit(root)
		for len(walk) > 0 {
			f := &walk[len(walk)-1]
			v := f.v
			if f.k < len(r.succ[v]) {
				w := r.succ[v][f.k]
				f.k++
				switch {
				case r.pre[w] == 0:
					visit(w)
				case onStack[w]:
					low[v] = min(low[v], r.pre[w])
				}
				continue
			}
			r.last[v] = counter
			walk = walk[:len(walk)-1]
			if len(walk) > 0 {
				p := walk[len(walk)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != r.pre[v] {
				continue
			}
			c := len(r.cyclic)
			k := len(stack) - 1
			for stack[k] != v {
				k--
			}
			for _, w := range stack[k:] {
				onStack[w] = false
				r.comp[w] = c
			}
			r.cyclic = append(r.cyclic, len(stack)-k > 1 || selfLoop[v])
			stack = stack[:k]
		}
	}
}
