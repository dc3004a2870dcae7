package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

func TestReview(t *testing.T) {
	task := TaskInfo{ID: "7", Title: "Fix Add"}
	diff := "diff --git a/calc.go b/calc.go\n-\treturn a - b\n+\treturn a + b\n"
	tests := []struct {
		name    string
		replies []llmtest.Reply
		want    Review
		err     error
		calls   int
	}{
		{"approves", []llmtest.Reply{llmtest.Text(`{"approve": true, "feedback": "fine"}`, 10)},
			Review{Approve: true, Feedback: "fine"}, nil, 1},
		{"rejects in a code fence", []llmtest.Reply{llmtest.Text("```json\n{\"approve\": false, \"feedback\": \"Sub is changed too\"}\n```", 10)},
			Review{Feedback: "Sub is changed too"}, nil, 1},
		{"repaired once", []llmtest.Reply{llmtest.Text("looks good to me", 10), llmtest.Text(`{"approve": true}`, 10)},
			Review{Approve: true}, nil, 2},
		{"twice unreadable", []llmtest.Reply{llmtest.Text("ok", 10), llmtest.Text(`{"feedback": "x"}`, 10)},
			Review{}, ErrInvalidReview, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tc.replies...)
			c, _ := newTestClient(t, srv, nil)
			got, usage, err := c.Review(context.Background(), task, Plan{Summary: "flip the sign"}, diff, nil)
			require.ErrorIs(t, err, tc.err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.calls, srv.Count())
			require.Equal(t, 10*tc.calls, usage.Total)
			first := srv.Requests()[0].Messages[1].Content
			require.Contains(t, first, "Fix Add")
			require.Contains(t, first, "flip the sign")
			require.Contains(t, first, "return a + b")
			if tc.calls == 2 {
				require.Contains(t, srv.Requests()[1].Messages[3].Content, "could not be read")
			}
		})
	}
}

func TestReviewCapsTheDiff(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Text(`{"approve": true}`, 10))
	c, _ := newTestClient(t, srv, nil)
	diff := "+start\n" + strings.Repeat("+filler line\n", 20000) + "+end\n"
	_, _, err := c.Review(context.Background(), TaskInfo{ID: "1", Title: "big"}, Plan{}, diff, nil)
	require.NoError(t, err)
	sent := srv.Requests()[0].Messages[1].Content
	require.Less(t, len(sent), maxReviewDiff+2048)
	require.Contains(t, sent, "+start")
	require.Contains(t, sent, "+end")
	require.Contains(t, sent, "bytes of the diff left out")
}
