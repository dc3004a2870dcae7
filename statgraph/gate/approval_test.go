package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
)

type proposal struct {
	Text  string `json:"text"`
	Reply gate.Reply
}

// TestApprove pauses a node on an approval question; a resume value that
// does not answer it (an edit without text, one the node's check refuses,
// an exhaustion answer) asks again saying why, and an accepted reply
// reaches the node.
func TestApprove(t *testing.T) {
	ctx := context.Background()
	g, err := statgraph.New[proposal]().
		AddNode("approve", func(ctx context.Context, s proposal) (proposal, error) {
			r, err := gate.Escalation{Task: "7", Proposal: s.Text}.Approve(ctx, func(text string) error {
				if text == "bad" {
					return errors.New("not a plan")
				}
				return nil
			})
			s.Reply = r
			return s, err
		}).
		AddEdge(statgraph.Start, "approve").AddEdge("approve", statgraph.End).
		Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
	require.NoError(t, err)
	ask := func(resume any) gate.Escalation {
		t.Helper()
		var res statgraph.Result[proposal]
		opts := []statgraph.RunOption{statgraph.WithThread("t"), statgraph.WithResult(&res)}
		if resume != nil {
			opts = append(opts, statgraph.WithResume(resume))
		}
		_, err := g.Invoke(ctx, proposal{Text: "the plan"}, opts...)
		require.ErrorIs(t, err, statgraph.ErrInterrupted)
		require.Len(t, res.Interrupts, 1)
		var esc gate.Escalation
		require.NoError(t, json.Unmarshal(res.Interrupts[0].Payload, &esc))
		return esc
	}
	esc := ask(nil)
	require.Equal(t, gate.KindApproval, esc.Kind)
	require.Equal(t, "the plan", esc.Proposal)
	require.Equal(t, []string{"approve", "edit", "reject"}, esc.Choices)
	require.Equal(t, gate.ApprovalHint, esc.Hint)
	require.Contains(t, ask(gate.Reply{Answer: gate.AnswerEdit}).Invalid, "edit needs the edited plan")
	require.Equal(t, "not a plan", ask(gate.Reply{Answer: gate.AnswerEdit, Text: "bad"}).Invalid)
	require.Contains(t, ask("retry").Invalid, `unknown answer "retry": answer approve, edit`)
	s, err := g.Invoke(ctx, proposal{}, statgraph.WithThread("t"), statgraph.WithResume(gate.Reply{Answer: gate.AnswerEdit, Text: "better"}))
	require.NoError(t, err)
	require.Equal(t, gate.Reply{Answer: gate.AnswerEdit, Text: "better"}, s.Reply)
}

func TestReplyJSON(t *testing.T) {
	for in, want := range map[string]gate.Reply{
		`"skip"`:                               {Answer: gate.AnswerSkip},
		`{"answer":"reject","text":"too big"}`: {Answer: gate.AnswerReject, Text: "too big"},
	} {
		var got gate.Reply
		require.NoError(t, json.Unmarshal([]byte(in), &got), in)
		require.Equal(t, want, got, in)
	}
	var r gate.Reply
	require.Error(t, json.Unmarshal([]byte(`5`), &r))
}
