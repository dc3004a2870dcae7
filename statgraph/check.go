package statgraph

// This file runs the checks that layers over the Builder (package
// statgraph/gate) add for what they build.

import "slices"

// AddCheck adds a check that Compile runs once the graph's edges are
// known; a non-nil error is reported by Compile with the builder's other
// problems (its text should say what is wrong, where, and what to do).
// reaches(from, to) reports whether node to can run after node from by
// following one or more edges of any kind (plain, conditional, joins,
// sends, commands, fallbacks); from may be Start and to End, and an
// unknown name reaches nothing. Layers that add nodes and edges for the
// caller use it to check how the caller wired them: a gate checks that its
// retry target is upstream of it. A nil check is reported by Compile.
func (b *Builder[S]) AddCheck(check func(reaches func(from, to string) bool) error) *Builder[S] {
	if check == nil {
		b.problem("AddCheck: nil check")
		return b
	}
	b.checks = append(b.checks, check)
	return b
}

// runChecks runs b's checks on g, whose edges are linked.
func (g *Graph[S]) runChecks(b *Builder[S], add func(string, ...any)) {
	if len(b.checks) == 0 {
		return
	}
	after := make(map[int][]bool) // per source node, the nodes it reaches
	reaches := func(from, to string) bool {
		i, ok := g.byName[from]
		n := &g.start
		switch {
		case from == Start:
			i = startIdx
		case !ok:
			return false
		default:
			n = g.nodes[i]
		}
		seen, ok := after[i]
		if !ok {
			seen = make([]bool, len(g.nodes)+1) // the last is End
			mark(seen[:len(g.nodes)], func(j int) []int { return g.nodes[j].successors() }, n.successors())
			seen[len(g.nodes)] = slices.Contains(n.successors(), endIdx)
			for j, ok := range seen[:len(g.nodes)] {
				if ok && slices.Contains(g.nodes[j].successors(), endIdx) {
					seen[len(g.nodes)] = true
				}
			}
			after[i] = seen
		}
		if to == End {
			return seen[len(g.nodes)]
		}
		j, ok := g.byName[to]
		return ok && seen[j]
	}
	for _, c := range b.checks {
		if err := c(reaches); err != nil {
			add("%s", err.Error())
		}
	}
}
