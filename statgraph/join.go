package statgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// AddJoin adds a waiting join: to runs once every node of from has run
// since to last ran, however many steps each branch takes (LangGraph's
// add_edge([a, b], c)). It runs in the step after the last of them, on the
// state with all their updates merged, and the wait starts again.
//
// Plain edges from several nodes to one node do not wait: the node runs in
// the step after each of them. Which of from have run so far is saved in
// every checkpoint, so a thread resumed mid-branch keeps waiting for the
// rest. Unknown or duplicate names are reported by Compile.
func (b *Builder[S]) AddJoin(from []string, to string) *Builder[S] {
	if len(from) == 0 {
		b.problem("AddJoin(%q): no source nodes", to)
		return b
	}
	b.joins = append(b.joins, joinSpec{from: slices.Clone(from), to: to})
	return b
}

type joinSpec struct {
	from []string
	to   string
}

// join is a compiled waiting join.
type join struct {
	from []int // source nodes, in the order given
	to   int   // node index or endIdx
}

// joinIn says that a node is source pos of join j, which leads to node to.
type joinIn struct{ j, pos, to int }

// compileJoins resolves the builder's joins into g.joins and each source
// node's joinIn.
func (g *Graph[S]) compileJoins(b *Builder[S], resolve func(string) (int, bool), add func(string, ...any)) {
	for _, js := range b.joins {
		where := fmt.Sprintf("AddJoin(%q, %q)", js.from, js.to)
		to, ok := resolve(js.to)
		switch {
		case !ok:
			add("%s: unknown node %q", where, js.to)
			continue
		case to == startIdx:
			add("%s: no edge may enter %s", where, Start)
			continue
		}
		jn := join{to: to}
		for _, name := range js.from {
			i, ok := resolve(name)
			switch {
			case !ok:
				add("%s: unknown node %q", where, name)
			case i < 0:
				add("%s: %s cannot be waited for", where, name)
			case slices.Contains(jn.from, i):
				add("%s: %q is listed twice", where, name)
			default:
				jn.from = append(jn.from, i)
			}
		}
		if len(jn.from) != len(js.from) {
			continue
		}
		for pos, i := range jn.from {
			g.nodes[i].joinIn = append(g.nodes[i].joinIn, joinIn{len(g.joins), pos, jn.to})
		}
		g.joins = append(g.joins, jn)
	}
}

// joinState is which sources of each join have run since it last fired.
type joinState struct {
	arrived [][]bool // per join, per source
	count   []int    // per join: sources arrived
}

// joinTable returns the run's join state, allocating it on first use so
// that runs of graphs without joins do not carry it.
func (r *run[S]) joinTable() *joinState {
	if r.joins == nil {
		n := len(r.g.joins)
		r.joins = &joinState{arrived: make([][]bool, n), count: make([]int, n)}
	}
	return r.joins
}

// arrive records that n ran and adds the joins it completes to r.next.
func (r *run[S]) arrive(n *node[S]) {
	js := r.joinTable()
	for _, in := range n.joinIn {
		jn := &r.g.joins[in.j]
		if js.arrived[in.j] == nil {
			js.arrived[in.j] = make([]bool, len(jn.from))
		}
		if !js.arrived[in.j][in.pos] {
			js.arrived[in.j][in.pos] = true
			js.count[in.j]++
		}
		if js.count[in.j] == len(jn.from) {
			clear(js.arrived[in.j])
			js.count[in.j] = 0
			r.add(jn.to)
		}
	}
}

// joinRecord is the name of the pending-write entry that saves a join's
// waiting set: the prefix and the join's index.
const joinRecord = "__join__:"

// joinRecords returns the waiting sets to save with a checkpoint, one entry
// per join with sources arrived, holding their names as JSON.
func (r *run[S]) joinRecords() []PendingWrite {
	if r.joins == nil {
		return nil
	}
	var out []PendingWrite
	for j, arrived := range r.joins.arrived {
		if r.joins.count[j] == 0 {
			continue
		}
		var names []string
		for pos, ok := range arrived {
			if ok {
				names = append(names, r.g.nodes[r.g.joins[j].from[pos]].name)
			}
		}
		b, _ := json.Marshal(names) // strings always encode
		out = append(out, PendingWrite{Node: fmt.Sprintf("%s%d", joinRecord, j), Update: b})
	}
	return out
}

// loadJoin restores a waiting set saved by joinRecords.
func (r *run[S]) loadJoin(c *Checkpoint, pw PendingWrite) error {
	var j int
	var names []string
	_, err := fmt.Sscanf(strings.TrimPrefix(pw.Node, joinRecord), "%d", &j)
	if err == nil {
		err = json.Unmarshal(pw.Update, &names)
	}
	if err != nil || j < 0 || j >= len(r.g.joins) {
		return fmt.Errorf("%w: thread %q checkpoint %d: join record %q does not fit the graph's %d joins", ErrCorruptCheckpoint, c.Thread, c.ID, pw.Node, len(r.g.joins))
	}
	js := r.joinTable()
	from := r.g.joins[j].from
	js.arrived[j], js.count[j] = make([]bool, len(from)), 0
	for _, name := range names {
		pos := slices.IndexFunc(from, func(i int) bool { return r.g.nodes[i].name == name })
		if pos < 0 {
			return fmt.Errorf("%w: thread %q checkpoint %d: join record names %q, which is not a source of join %d", ErrCorruptCheckpoint, c.Thread, c.ID, name, j)
		}
		if !js.arrived[j][pos] {
			js.arrived[j][pos] = true
			js.count[j]++
		}
	}
	return nil
}

// records returns the engine's bookkeeping saved with every checkpoint as
// reserved pending-write entries (their names start with "__", which no
// node name may): join waiting sets, the inputs of pending Sends and the
// held WithDefer nodes.
func (r *run[S]) records() ([]PendingWrite, error) {
	if r.g.joins == nil && len(r.sendList()) == 0 && r.failureMap() == nil && r.heldList() == nil {
		return nil, nil
	}
	out := append(r.joinRecords(), r.failureRecords()...)
	out = append(out, r.deferRecords()...)
	if len(r.sendList()) > 0 {
		vk, ok := r.saver.cp.(valueKeeper)
		sends, err := r.sendRecords(ok && vk.keepsValues())
		if err != nil {
			return nil, err
		}
		out = append(out, sends...)
	}
	return out, nil
}

// loadRecords restores the bookkeeping saved by records and returns the
// pending writes that are nodes' updates.
func (r *run[S]) loadRecords(_ context.Context, c *Checkpoint) ([]PendingWrite, error) {
	var writes []PendingWrite
	for _, pw := range c.Pending {
		switch {
		case strings.HasPrefix(pw.Node, joinRecord):
			if err := r.loadJoin(c, pw); err != nil {
				return nil, err
			}
		case strings.HasPrefix(pw.Node, failureRecord):
			if err := r.loadFailure(c, pw); err != nil {
				return nil, err
			}
		case pw.Node == deferRecord:
			if err := r.loadDeferred(c, pw); err != nil {
				return nil, err
			}
		case strings.HasPrefix(pw.Node, resumeRecord):
			if r.resumes == nil {
				r.resumes = map[string][]byte{}
			}
			r.resumes[pw.Node[len(resumeRecord):]] = pw.Update
		case strings.HasPrefix(pw.Node, sendRecord):
			if err := r.loadSend(c, pw); err != nil {
				return nil, err
			}
		default:
			writes = append(writes, pw)
		}
	}
	return writes, nil
}
