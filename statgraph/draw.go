package statgraph

import (
	"fmt"
	"strings"
)

// Draw returns a drawing of the graph in format, one of:
//
//   - "mermaid": a Mermaid flowchart;
//   - "dot": a Graphviz digraph;
//   - "svg": a standalone SVG document, laid out without outside tools in
//     layers from Start (top) to End (bottom). Each node is a
//     <g class="node" id="sg-node-NAME" data-node="NAME"> (the id made of
//     letters, digits and '_' as in Mermaid), Start and End with the extra
//     class "terminal" and subgraph nodes "subgraph", so a page can
//     highlight one with CSS; every name and label is XML-escaped.
//
// All three draw the same edges. Conditional edges are labelled with their
// path-map keys and a waiting join's edges with "join"; edges back to an
// earlier node (retry loops) are dashed, Send edges (AddSends) are dashed
// and labelled "send", a command node's declared destinations
// (AddCommandNode, WithDestinations) and fallback edges (WithFallback,
// labelled "on error") are dashed; in mermaid and dot a subgraph node is a
// box holding its child graph. Another format is an error naming the three. Draw is a pure
// function of the compiled graph, safe for concurrent use.
func (g *Graph[S]) Draw(format string) (string, error) {
	switch format {
	case "mermaid":
		return g.mermaid(), nil
	case "dot":
		return g.dot(), nil
	case "svg":
		return g.svg(), nil
	}
	return "", fmt.Errorf("statgraph: Draw: unknown format %q; use mermaid, dot or svg", format)
}

// drawEdge is one arrow of a drawing.
type drawEdge struct {
	from, to string
	label    string // path-map key of a conditional edge
	back     bool   // leads back to an earlier node (a retry edge)
	dashed   bool   // drawn dashed: a Send edge
}

// edgesForDrawing lists every edge in a fixed order, marking back edges:
// edges to a node that is still on the depth-first path from Start.
func (g *Graph[S]) edgesForDrawing() []drawEdge {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make([]int, len(g.nodes))
	var out []drawEdge
	var visit func(n *node[S])
	visit = func(n *node[S]) {
		if n.idx >= 0 {
			state[n.idx] = onPath
		}
		emit := func(t int, label string) {
			e := drawEdge{from: g.name(n.idx), to: g.name(t), label: label}
			if t >= 0 && state[t] == onPath {
				e.back = true
			}
			out = append(out, e)
			if t >= 0 && state[t] == unvisited {
				visit(g.nodes[t])
			}
		}
		for _, t := range n.next {
			emit(t, "")
		}
		if n.branch != nil {
			for _, k := range n.branch.keys {
				emit(n.branch.to[k], k)
			}
		}
		for _, in := range n.joinIn {
			emit(in.to, "join")
		}
		if n.fallback != nil {
			at := len(out)
			emit(*n.fallback, fallbackKey)
			out[at].dashed = true
		}
		if n.cmd != nil {
			for _, name := range n.cmd.names {
				at := len(out)
				emit(n.cmd.to[name], "")
				out[at].dashed = true
			}
		}
		if n.fan != nil {
			for _, name := range n.fan.names {
				at := len(out)
				emit(n.fan.to[name], sendKey)
				out[at].dashed = true
			}
		}
		if n.idx >= 0 {
			state[n.idx] = done
		}
	}
	visit(&g.start)
	return out
}

// mermaid returns a Mermaid flowchart of the graph (Draw).
func (g *Graph[S]) mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	fmt.Fprintf(&b, "    %s([start])\n", mermaidID(Start))
	for _, n := range g.nodes {
		if n.sub != nil { // a box holding the child graph (subgraph.go)
			fmt.Fprintf(&b, "    subgraph %s[%q]\n", mermaidID(n.name), n.name)
			n.sub.drawMermaid(&b, n.name+"__", "        ")
			b.WriteString("    end\n")
			continue
		}
		fmt.Fprintf(&b, "    %s[%q]\n", mermaidID(n.name), n.name)
	}
	fmt.Fprintf(&b, "    %s([end])\n", mermaidID(End))
	for _, e := range g.edgesForDrawing() {
		from, to := mermaidID(e.from), mermaidID(e.to)
		switch {
		case (e.back || e.dashed) && e.label != "":
			fmt.Fprintf(&b, "    %s -. %s .-> %s\n", from, e.label, to)
		case e.back || e.dashed:
			fmt.Fprintf(&b, "    %s -.-> %s\n", from, to)
		case e.label != "":
			fmt.Fprintf(&b, "    %s -- %s --> %s\n", from, e.label, to)
		default:
			fmt.Fprintf(&b, "    %s --> %s\n", from, to)
		}
	}
	return b.String()
}

// mermaidID makes a node name safe as a Mermaid identifier.
func mermaidID(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "_%x_", r)
		}
	}
	if s := b.String(); s != "end" && s != "graph" && s != "subgraph" {
		return s
	}
	return "n_" + b.String()
}

// dot returns a Graphviz drawing of the graph (Draw).
func (g *Graph[S]) dot() string {
	var b strings.Builder
	b.WriteString("digraph statgraph {\n    rankdir=TB;\n    node [shape=box, style=rounded];\n")
	fmt.Fprintf(&b, "    %q [label=\"start\", shape=oval];\n", Start)
	fmt.Fprintf(&b, "    %q [label=\"end\", shape=oval];\n", End)
	for _, n := range g.nodes {
		if n.sub != nil {
			dotCluster(&b, n.sub, n.name, "    ")
		}
	}
	for _, e := range g.edgesForDrawing() {
		var attrs []string
		if e.label != "" {
			attrs = append(attrs, fmt.Sprintf("label=%q", e.label))
		}
		if e.back {
			attrs = append(attrs, "style=dashed", "constraint=false")
		} else if e.dashed {
			attrs = append(attrs, "style=dashed")
		}
		fmt.Fprintf(&b, "    %q -> %q", e.from, e.to)
		if len(attrs) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(attrs, ", "))
		}
		b.WriteString(";\n")
	}
	b.WriteString("}\n")
	return b.String()
}
