package statgraph_test

import (
	"context"
	"encoding/xml"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// svgNode is a node group of an SVG drawing.
type svgNode struct {
	Class string `xml:"class,attr"`
	ID    string `xml:"id,attr"`
	Node  string `xml:"data-node,attr"`
	Rect  struct {
		X string `xml:"x,attr"`
		Y string `xml:"y,attr"`
	} `xml:"rect"`
	Text string `xml:"text"`
}

// parseSVG checks that s is well-formed XML and returns its node groups
// and the class of each edge by "from->to".
func parseSVG(t *testing.T, s string) (map[string]svgNode, map[string]string) {
	t.Helper()
	nodes, edges := map[string]svgNode{}, map[string]string{}
	dec := xml.NewDecoder(strings.NewReader(s))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG is well-formed XML")
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "g" {
			continue
		}
		attr := map[string]string{}
		for _, a := range se.Attr {
			attr[a.Name.Local] = a.Value
		}
		switch {
		case strings.HasPrefix(attr["class"], "node"):
			var n svgNode
			require.NoError(t, dec.DecodeElement(&n, &se))
			n.Class, n.ID, n.Node = attr["class"], attr["id"], attr["data-node"]
			nodes[n.Node] = n
		case strings.HasPrefix(attr["class"], "edge"):
			edges[attr["data-from"]+"->"+attr["data-to"]] = attr["class"]
		}
	}
	return nodes, edges
}

// draw returns g's drawing in format, failing the test if Draw fails.
func draw[S any](t testing.TB, g *statgraph.Graph[S], format string) string {
	t.Helper()
	s, err := g.Draw(format)
	require.NoError(t, err)
	return s
}

// TestDrawFormats: Draw gives each of its three formats and refuses
// another, naming the three.
func TestDrawFormats(t *testing.T) {
	g := mustCompile(t, w1())
	for format, start := range map[string]string{"mermaid": "flowchart TD\n", "dot": "digraph statgraph {\n", "svg": "<svg "} {
		require.True(t, strings.HasPrefix(draw(t, g, format), start), "%s drawing starts with %q", format, start)
	}
	_, err := g.Draw("png")
	require.EqualError(t, err, `statgraph: Draw: unknown format "png"; use mermaid, dot or svg`)
}

// The retry loop is laid out top to bottom, each node a group the page can
// find by id and data-node, the retry edge dashed, End below everything.
func TestSVGLayersAndIDs(t *testing.T) {
	g := mustCompile(t, w1())
	nodes, edges := parseSVG(t, draw(t, g, "svg"))
	require.Len(t, nodes, 6, "start, end and four nodes")
	y := func(n string) int { v, _ := strconv.Atoi(nodes[n].Rect.Y); return v }
	require.Less(t, y(statgraph.Start), y("planner"))
	require.Less(t, y("planner"), y("executor"))
	require.Less(t, y("executor"), y("verifier"))
	require.Less(t, y("verifier"), y("failed"))
	require.Less(t, y("failed"), y(statgraph.End))
	require.Equal(t, "sg-node-executor", nodes["executor"].ID)
	require.Equal(t, "node terminal", nodes[statgraph.Start].Class)
	require.Equal(t, "start", nodes[statgraph.Start].Text)
	require.Equal(t, "edge dashed", edges["verifier->executor"], "the retry edge")
	require.Equal(t, "edge", edges["planner->executor"])
	require.Equal(t, draw(t, g, "svg"), draw(t, g, "svg"), "stable output")

	// verifier -> End skips failed's layer: it is routed left of failed,
	// not drawn through it.
	require.Equal(t, "edge skip", edges["verifier->"+statgraph.End])
	m := regexp.MustCompile(`data-from="verifier" data-to="` + statgraph.End + `"><path d="([^"]*)"`).FindStringSubmatch(draw(t, g, "svg"))
	require.Len(t, m, 2, "the skip edge's path")
	left, _ := strconv.Atoi(nodes["failed"].Rect.X)
	for _, pt := range regexp.MustCompile(`(\d+),\d+`).FindAllStringSubmatch(m[1], -1) {
		x, _ := strconv.Atoi(pt[1])
		require.LessOrEqual(t, x, left, "every point of %s is left of failed (x=%d)", m[1], left)
	}
}

// Node names are escaped: a name with markup stays text.
func TestSVGEscapesNames(t *testing.T) {
	name := `<script>alert("x")</script>&`
	nop := func(_ context.Context, s st) (st, error) { return s, nil }
	g := mustCompile(t, statgraph.New[st]().AddNode(name, nop).AddEdge(statgraph.Start, name).AddEdge(name, statgraph.End))
	s := draw(t, g, "svg")
	require.NotContains(t, s, "<script>")
	nodes, _ := parseSVG(t, s)
	require.Equal(t, name, nodes[name].Node)
	require.Equal(t, name, nodes[name].Text)
	require.Regexp(t, regexp.MustCompile(`^sg-node-[A-Za-z0-9_]+$`), nodes[name].ID)
}
