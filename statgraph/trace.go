package statgraph

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// tracer writes the events of one run as a tree, one line per event:
//
//	┌─ run 3f2a  planner → executor → verifier
//	├─ s1 planner        ok     12ms
//	├─ s3 verifier       FAIL   12ms   tests failed
//	├─ s3 route          retry → executor
//	└─ end               ok     5 steps  1.3s
type tracer[S any] struct {
	w  io.Writer
	g  *Graph[S]
	t0 time.Time
}

var traceLocks sync.Map // io.Writer -> *sync.Mutex, so concurrent runs don't interleave lines

func newTracer[S any](w io.Writer, g *Graph[S]) *tracer[S] {
	return &tracer[S]{w: w, g: g}
}

func (t *tracer[S]) event(ev Event[S]) bool {
	var line string
	if ev.Namespace != "" && ev.Node != "" {
		ev.Node = ev.Namespace + "|" + ev.Node // a subgraph's node, named by its path
	}
	switch ev.Kind {
	case EventRunStart:
		t.t0 = time.Now()
		id := ev.Thread
		if id == "" {
			var b [2]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		line = fmt.Sprintf("┌─ run %s  %s", id, strings.Join(t.g.mainPath(), " → "))
		if ev.Step > 0 {
			line += fmt.Sprintf("  (continued after step %d: %s)", ev.Step, strings.Join(ev.Nodes, ", "))
		}
	case EventNodeEnd:
		status := "ok"
		switch {
		case ev.Err != nil:
			status = "FAIL"
		case ev.Cached:
			status = "cached"
		}
		line = fmt.Sprintf("├─ s%-2d %-14s %-6s %-6s", ev.Step, ev.Node, status, round(ev.Duration))
		if ev.Attempt > 1 {
			line += fmt.Sprintf(" try %d", ev.Attempt)
		}
		if ev.Err != nil {
			line += "  " + oneLine(ev.Err.Error(), 100)
		}
	case EventRetry:
		line = fmt.Sprintf("├─ s%-2d %-14s retry  in %s  (try %d failed: %s)", ev.Step, ev.Node, round(ev.Delay), ev.Attempt, oneLine(ev.Err.Error(), 80))
	case EventRoute:
		line = fmt.Sprintf("├─ s%-2d route          %s → %s", ev.Step, ev.Key, ev.To)
	case EventInterrupt:
		ids := make([]string, len(ev.Interrupts))
		for i, in := range ev.Interrupts {
			ids[i] = in.ID
		}
		line = fmt.Sprintf("├─ s%-2d interrupt      %s", ev.Step, strings.Join(ids, ", "))
	case EventRunEnd:
		status := "ok"
		if ev.Err != nil {
			status = "ERROR  " + oneLine(ev.Err.Error(), 120)
		}
		line = fmt.Sprintf("└─ end  %d steps  %s  %s", ev.Step, round(time.Since(t.t0)), status)
	default:
		return true
	}
	mu, _ := traceLocks.LoadOrStore(t.w, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	io.WriteString(t.w, strings.TrimRight(line, " ")+"\n")
	mu.(*sync.Mutex).Unlock()
	return true
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	default:
		return d.Round(time.Microsecond)
	}
}

// oneLine shortens s to its first line and at most n runes.
func oneLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + "…"
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// mainPath lists the nodes in breadth-first order from Start.
func (g *Graph[S]) mainPath() []string {
	seen := make([]bool, len(g.nodes))
	queue := []*node[S]{&g.start}
	var out []string
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, t := range n.successors() {
			if t >= 0 && !seen[t] {
				seen[t] = true
				out = append(out, g.nodes[t].name)
				queue = append(queue, g.nodes[t])
			}
		}
	}
	return out
}
