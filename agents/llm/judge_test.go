package llm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

func TestJudge(t *testing.T) {
	task := TaskInfo{ID: "7", Title: "Fix Add"}
	tests := []struct {
		name    string
		replies []llmtest.Reply
		want    Verdict
		err     error
		calls   int
	}{
		{"chooses B", []llmtest.Reply{llmtest.Text(`{"winner": "B", "reasoning": "A changes Sub too"}`, 10)},
			Verdict{Winner: "B", Reasoning: "A changes Sub too"}, nil, 1},
		{"lower case in a fence", []llmtest.Reply{llmtest.Text("```json\n{\"winner\": \"a\", \"reasoning\": \"smaller\"}\n```", 10)},
			Verdict{Winner: "A", Reasoning: "smaller"}, nil, 1},
		{"repaired once", []llmtest.Reply{llmtest.Text("A is better", 10), llmtest.Text(`{"winner": "A"}`, 10)},
			Verdict{Winner: "A"}, nil, 2},
		{"twice unreadable", []llmtest.Reply{llmtest.Text("both", 10), llmtest.Text(`{"winner": "C"}`, 10)},
			Verdict{}, ErrInvalidVerdict, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.replies...)
			c, _ := newTestClient(t, srv, nil)
			got, usage, err := c.Judge(context.Background(), task, "+\treturn a + b\n", "+\treturn b + a\n", nil)
			require.ErrorIs(t, err, tc.err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.calls, srv.Count())
			require.Equal(t, 10*tc.calls, usage.Total)
			first := srv.Requests()[0].Messages[1].Content
			require.Contains(t, first, "Fix Add")
			require.Contains(t, first, "Change A (unified diff):\n+\treturn a + b")
			require.Contains(t, first, "Change B (unified diff):\n+\treturn b + a")
		})
	}
}
