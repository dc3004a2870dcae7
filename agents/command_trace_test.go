package agents

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/internal/obs"
)

// spanLog is an obs.Hook that keeps the name and all attributes (at start
// and at end) of each operation it is given.
type spanLog struct {
	mu    sync.Mutex // guards spans
	spans []loggedSpan
}

type loggedSpan struct {
	name  string
	attrs map[string]any
}

func (l *spanLog) hook(ctx context.Context, name string, attrs []obs.Attr) (context.Context, obs.End) {
	return ctx, func(_ error, late ...obs.Attr) {
		s := loggedSpan{name: name, attrs: map[string]any{}}
		for _, a := range append(attrs, late...) {
			s.attrs[a.Key] = a.Value
		}
		l.mu.Lock()
		l.spans = append(l.spans, s)
		l.mu.Unlock()
	}
}

// TestAgentSpanTokens: the tokens an agent CLI reports (a real process
// printing a preset's JSON output) are on its "agent <cli>" span as the
// GenAI input and output token attributes, the same figures the budget is
// charged; a CLI that reports none gets no token attributes rather than
// zeros.
func TestAgentSpanTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		tail    string
		parse   UsageFunc
		in, out int
		none    bool
	}{
		{name: "claude", parse: claudeUsage, in: 120, out: 30,
			tail: `echo '{"type":"result","subtype":"success","result":"Added Greet","usage":{"input_tokens":100,"cache_read_input_tokens":20,"output_tokens":30}}'` + "\n"},
		{name: "codex", parse: codexUsage, in: 120, out: 10,
			tail: `echo '{"type":"turn.completed","usage":{"input_tokens":100,"output_tokens":7}}'
echo '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"patched"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":20,"output_tokens":3}}'
`},
		{name: "no usage", parse: claudeUsage, none: true, tail: "echo plain text, no JSON\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script, _ := recorder(t, tc.tail)
			var log spanLog
			b := llm.NewBudget(0, nil)
			e := CommandExecutor{Argv: []string{script}, Workdir: t.TempDir(), PromptDir: t.TempDir(), Usage: tc.parse, Budget: b}
			_, err := e.Execute(obs.With(context.Background(), log.hook), TaskState{Task: task("t1")})
			require.NoError(t, err)
			require.Len(t, log.spans, 1)
			s := log.spans[0]
			assert.Equal(t, "agent agent", s.name)
			assert.Equal(t, 0, s.attrs["process.exit.code"])
			if tc.none {
				assert.NotContains(t, s.attrs, "gen_ai.usage.input_tokens")
				assert.NotContains(t, s.attrs, "gen_ai.usage.output_tokens")
				assert.Zero(t, b.Spent())
				return
			}
			assert.Equal(t, tc.in, s.attrs["gen_ai.usage.input_tokens"])
			assert.Equal(t, tc.out, s.attrs["gen_ai.usage.output_tokens"])
			assert.Equal(t, tc.in+tc.out, b.Spent(), "the span and the budget count the same tokens")
		})
	}
}
