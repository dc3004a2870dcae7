package statgraph_test

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// traced is note 000 with an advisory style check next to the tests.
func traced(calls *counter) *statgraph.Builder[code] {
	return statgraph.New[code]().
		AddNode("coder", coder(calls)).
		AddValidator("style", check(calls, "style", 100), statgraph.WithSeverity(statgraph.SeverityMedium)).
		AddValidator("test", check(calls, "test", 3)).
		AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"style", "test"}, RetryTarget: "coder", FailTo: "failed"}).
		AddNode("done", markDone).AddNode("failed", markDone).
		AddEdge(statgraph.Start, "coder").AddEdge("coder", "style").AddEdge("coder", "test").
		AddEdge("style", "gate").AddEdge("test", "gate").
		AddEdge("gate", "done").AddEdge("done", statgraph.End).AddEdge("failed", statgraph.End)
}

func TestGateTrace(t *testing.T) {
	g := mustCompile(t, traced(&counter{}))
	var buf bytes.Buffer
	var res statgraph.Result[code]
	_, err := g.Invoke(context.Background(), code{}, statgraph.WithTrace(&buf), statgraph.WithResult(&res))
	require.NoError(t, err)
	require.Len(t, res.Warnings, 3, "style warned on each of the three rounds")
	got := regexp.MustCompile(`<d> +`).ReplaceAllString(durations.ReplaceAllString(buf.String(), "<d>"), "<d> ")
	got = regexp.MustCompile(`run [0-9a-f]{4} `).ReplaceAllString(got, "run <id> ")
	golden(t, "trace_gate.txt", got)
	require.Contains(t, got, "route          retry → coder (1/2)")
	require.Contains(t, got, `try 2  hint: "[test] test failed on version 1…"`)
	require.Contains(t, got, "WARN")
}

func TestGateStreamEvents(t *testing.T) {
	g := mustCompile(t, traced(&counter{}))
	var kinds []statgraph.EventKind
	var feedback []string
	for ev, err := range g.Stream(context.Background(), code{}) {
		require.NoError(t, err)
		switch ev.Kind {
		case statgraph.EventVerdict, statgraph.EventGatePassed, statgraph.EventGateRetry, statgraph.EventGateExhausted:
			kinds = append(kinds, ev.Kind)
		}
		if ev.Kind == statgraph.EventGateRetry {
			feedback = append(feedback, ev.Gate.Feedback)
		}
		if ev.Kind == statgraph.EventRunEnd {
			require.Len(t, ev.Warnings, 3)
		}
	}
	v, r, p := statgraph.EventVerdict, statgraph.EventGateRetry, statgraph.EventGatePassed
	require.Equal(t, []statgraph.EventKind{v, v, r, v, v, r, v, v, p}, kinds)
	require.Len(t, feedback, 2)
	require.Contains(t, feedback[1], "[test] test failed on version 2")
	require.Equal(t, "gate_retry", statgraph.EventGateRetry.String())
}

func TestGateDrawings(t *testing.T) {
	g := mustCompile(t, traced(&counter{}))
	golden(t, "gate.mmd", g.Mermaid())
	golden(t, "gate.dot", g.DOT())
	require.Contains(t, g.Mermaid(), "gate -. retry ≤2 .-> coder")
	require.Contains(t, g.DOT(), `"gate" -> "coder" [label="retry ≤2", style=dashed`)
	require.Contains(t, g.DOT(), `"gate" -> "failed" [label="exhausted"]`)
}
