package statgraph

// Graph algorithms of Compile, each O(nodes + edges): a 100,000-node chain
// or fan-out compiles in linear time whatever order its names sort in.

// link sets the static successors of Start and of every node from edges
// (pairs of from and to indexes, already checked), each list sorted and
// without duplicates. The edges are bucketed by destination (a counting
// sort), so the lists come out sorted without comparing.
func (g *Graph[S]) link(edges [][2]int) {
	// Bucket b holds the edges into node b-1; bucket 0 those into End.
	first := make([]int, len(g.nodes)+2)
	for _, e := range edges {
		first[e[1]+2]++
	}
	for b := 1; b < len(first); b++ {
		first[b] += first[b-1]
	}
	from := make([]int, len(edges))
	for _, e := range edges {
		b := e[1] + 1
		from[first[b]] = e[0]
		first[b]++
	}
	// first[b] is now where bucket b+1 starts.
	lo := 0
	for b := range len(g.nodes) + 1 {
		to := b - 1
		for _, f := range from[lo:first[b]] {
			n := &g.start
			if f != startIdx {
				n = g.nodes[f]
			}
			if k := len(n.next); k == 0 || n.next[k-1] != to {
				n.next = append(n.next, to)
			}
		}
		lo = first[b]
	}
}

// mark sets seen for the nodes in from and every node reachable from them
// along next, which lists node indexes; negative ones (Start, End) are
// skipped. Nodes already seen are not walked again.
func mark(seen []bool, next func(i int) []int, from []int) {
	stack := make([]int, 0, len(from))
	for _, i := range from {
		if i >= 0 && !seen[i] {
			seen[i] = true
			stack = append(stack, i)
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, t := range next(i) {
			if t >= 0 && !seen[t] {
				seen[t] = true
				stack = append(stack, t)
			}
		}
	}
}

// reachable returns, per node, whether Start can reach it, and whether it
// can reach End, following static and routed edges.
func (g *Graph[S]) reachable() (fromStart, toEnd []bool) {
	fromStart = make([]bool, len(g.nodes))
	mark(fromStart, func(i int) []int { return g.nodes[i].successors() }, g.start.successors())
	var ends []int
	for _, n := range g.nodes {
		for _, t := range n.successors() {
			if t == endIdx {
				ends = append(ends, n.idx)
				break
			}
		}
	}
	preds := g.predecessors()
	toEnd = make([]bool, len(g.nodes))
	mark(toEnd, func(i int) []int { return preds[i] }, ends)
	return fromStart, toEnd
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
