package statgraph

import (
	"fmt"
	"html"
	"strings"
)

// Sizes of an SVG drawing, in pixels.
const (
	svgNodeW  = 132
	svgNodeH  = 36
	svgGapX   = 36
	svgGapY   = 56
	svgMargin = 24
	svgBackX  = 48 // room on the right for edges back to earlier layers
	svgSkipX  = 40 // room on the left for edges that skip a layer
)

// svg returns a drawing of the graph as a standalone SVG document (Draw),
// laid out in layers from Start (top) to End (bottom) from the same edges as
// the Mermaid and DOT drawings: a node's layer is the longest path to it from Start without
// edges back to earlier nodes, and nodes of a layer keep the order the
// edges first reach them. Back edges (retry loops), Send, command and
// fallback edges are dashed; conditional edges carry their path-map key.
//
// Each node is a <g class="node" id="sg-node-NAME" data-node="NAME"> (NAME
// escaped; the id made of letters, digits and '_' as in Mermaid), Start and
// End with the extra class "terminal" and subgraphs
// "subgraph", so a page can highlight one with CSS (e.g. by adding a class
// to it). Every name and label is XML-escaped.
func (g *Graph[S]) svg() string {
	edges := g.edgesForDrawing()
	// Node order: Start, then as edges first reach them, End last.
	order := []string{Start}
	seen := map[string]bool{Start: true, End: true}
	for _, e := range edges {
		for _, n := range []string{e.from, e.to} {
			if !seen[n] {
				seen[n] = true
				order = append(order, n)
			}
		}
	}
	for _, n := range g.nodes {
		if !seen[n.name] {
			seen[n.name] = true
			order = append(order, n.name)
		}
	}
	order = append(order, End)

	// Longest-path layers over the forward edges (a DAG: back edges are
	// exactly those closing a cycle in edgesForDrawing's walk).
	layer := map[string]int{}
	for changed, rounds := true, 0; changed && rounds <= len(order); rounds++ {
		changed = false
		for _, e := range edges {
			if e.back || e.from == e.to {
				continue
			}
			if l := layer[e.from] + 1; l > layer[e.to] {
				layer[e.to], changed = l, true
			}
		}
	}
	last := 0
	for _, n := range order {
		if n != End && layer[n] > last {
			last = layer[n]
		}
	}
	if layer[End] <= last {
		layer[End] = last + 1
	}
	rows := make([][]string, layer[End]+1)
	for _, n := range order {
		rows[layer[n]] = append(rows[layer[n]], n)
	}
	widest := 1
	for _, r := range rows {
		widest = max(widest, len(r))
	}
	// An edge down past a layer would cross that layer's nodes: it goes
	// round a lane on the left instead, when there is one.
	skipX := 0
	for _, e := range edges {
		if !e.back && layer[e.to] > layer[e.from]+1 {
			skipX = svgSkipX
		}
	}
	width := 2*svgMargin + skipX + widest*svgNodeW + (widest-1)*svgGapX + svgBackX
	height := 2*svgMargin + len(rows)*svgNodeH + (len(rows)-1)*svgGapY
	type point struct{ x, y int } // a node's top-left corner
	pos := map[string]point{}
	for i, r := range rows {
		rowW := len(r)*svgNodeW + (len(r)-1)*svgGapX
		x0 := svgMargin + skipX + ((width-skipX-svgBackX-2*svgMargin)-rowW)/2
		for j, n := range r {
			pos[n] = point{x0 + j*(svgNodeW+svgGapX), svgMargin + i*(svgNodeH+svgGapY)}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="statgraph" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="graph">`+"\n", width, height, width, height)
	// Default looks for a drawing opened on its own; :where keeps their
	// weight at zero, so that a page's own rules win.
	b.WriteString(`<style>:where(svg.statgraph) .node rect{fill:#fff;stroke:#888}` +
		`:where(svg.statgraph) .node.terminal rect{fill:#eeeeea}` +
		`:where(svg.statgraph) text{font:13px sans-serif;fill:#222}` +
		`:where(svg.statgraph) .edge path{stroke:#888}` +
		`:where(svg.statgraph) .edge.dashed path{stroke-dasharray:5 4}` +
		`:where(svg.statgraph) .label{font-size:11px;fill:#666}` +
		`:where(svg.statgraph) marker path{fill:#888}</style>` + "\n")
	b.WriteString(`<defs><marker id="sg-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker></defs>` + "\n")
	for i, e := range edges {
		from, to := pos[e.from], pos[e.to]
		class := "edge"
		if e.back || e.dashed {
			class += " dashed"
		}
		var d string
		var lx, ly int
		anchor := "start"
		switch {
		case e.back || to.y <= from.y:
			// Out of the source's right side, round the right margin, into
			// the target's right side.
			x := width - svgMargin - svgBackX/2 + (i%3)*6
			sx, sy := from.x+svgNodeW, from.y+svgNodeH/2
			tx, ty := to.x+svgNodeW, to.y+svgNodeH/2
			d = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", sx, sy, x, sy, x, ty, tx, ty)
			lx, ly = x-4, (sy+ty)/2
		case layer[e.to] > layer[e.from]+1:
			// Out of the source's left side, round the left lane, into
			// the target's left side.
			class += " skip"
			x := svgMargin + svgSkipX/2 - (i%3)*6
			sx, sy := from.x, from.y+svgNodeH/2
			tx, ty := to.x, to.y+svgNodeH/2
			d = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", sx, sy, x, sy, x, ty, tx, ty)
			lx, ly, anchor = x-2, (sy+ty)/2, "end"
		default:
			sx, sy := from.x+svgNodeW/2, from.y+svgNodeH
			tx, ty := to.x+svgNodeW/2, to.y
			d = fmt.Sprintf("M%d,%d L%d,%d", sx, sy, tx, ty)
			lx, ly = (sx+tx)/2+4, (sy+ty)/2
		}
		fmt.Fprintf(&b, `<g class="%s" data-from="%s" data-to="%s"><path d="%s" fill="none" marker-end="url(#sg-arrow)"/>`,
			class, esc(e.from), esc(e.to), d)
		if e.label != "" {
			fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="%s">%s</text>`, lx, ly, anchor, esc(e.label))
		}
		b.WriteString("</g>\n")
	}
	kinds := map[string]string{Start: " terminal", End: " terminal"}
	for _, n := range g.nodes {
		if n.sub != nil {
			kinds[n.name] = " subgraph"
		}
	}
	for _, n := range order {
		p := pos[n]
		label := n
		switch n {
		case Start:
			label = "start"
		case End:
			label = "end"
		}
		rx := 6
		if n == Start || n == End {
			rx = svgNodeH / 2
		}
		fmt.Fprintf(&b, `<g class="node%s" id="sg-node-%s" data-node="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="%d"/><text x="%d" y="%d" text-anchor="middle" dominant-baseline="central">%s</text></g>`+"\n",
			kinds[n], mermaidID(n), esc(n), p.x, p.y, svgNodeW, svgNodeH, rx, p.x+svgNodeW/2, p.y+svgNodeH/2, esc(label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// esc escapes s for XML text and attribute values.
func esc(s string) string { return html.EscapeString(s) }
