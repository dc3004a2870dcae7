package main

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The terminal prompt and another answerer ask at once: when the other
// answers first, the prompt stops waiting (it no longer holds the
// terminal), and the next question is still answered on the terminal.
func TestTerminalAskYieldsToAnAnswerFromElsewhere(t *testing.T) {
	in, typed := io.Pipe()
	defer typed.Close()
	out := &lockedBuffer{}
	p := newProgress(out, false, func() (int, int) { return 80, 24 })
	elsewhere := make(chan string, 1)
	other := func(ctx context.Context, unit string, e agents.Escalation) (gate.Reply, error) {
		select {
		case a := <-elsewhere:
			return gate.Reply{Answer: gate.Answer(a)}, nil
		case <-ctx.Done():
			return gate.Reply{Answer: gate.AnswerAbort}, ctx.Err()
		}
	}
	ask := control.FirstAnswer(askOnTerminal(p, in), other)
	e := agents.Escalation{Task: "1", Title: "t", Attempts: 1}

	elsewhere <- string(gate.AnswerSkip)
	done := make(chan string, 1)
	go func() {
		a, err := ask(context.Background(), "1", e)
		assert.NoError(t, err)
		done <- string(a.Answer)
	}()
	select {
	case a := <-done:
		assert.Equal(t, string(gate.AnswerSkip), a)
	case <-time.After(10 * time.Second):
		t.Fatal("the answer from elsewhere did not end the question")
	}
	// The prompt has let go of the progress display: it can write again.
	finished := make(chan struct{})
	go func() { p.notice("still drawing"); close(finished) }()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal prompt still holds the display after the question was answered elsewhere")
	}

	go func() { _, _ = typed.Write([]byte("r\n")) }()
	a, err := ask(context.Background(), "1", e)
	require.NoError(t, err)
	assert.Equal(t, gate.Reply{Answer: gate.AnswerRetry}, a, "the terminal answers the next question")
	assert.Contains(t, out.String(), "[r]etry")
}

// A plan to approve is shown on the terminal and answered there: approve;
// edit, where a plan that does not parse is refused and asked again, and
// the lines typed up to "." are the new plan; reject with its reason.
func TestTerminalPlanApproval(t *testing.T) {
	e := agents.Escalation{Kind: gate.KindApproval, Task: "4", Title: "plan me", Proposal: "{\n  \"summary\": \"the model's plan\"\n}"}
	for _, tc := range []struct {
		typed string
		want  gate.Reply
	}{
		{typed: "a\n", want: gate.Reply{Answer: gate.AnswerApprove}},
		{typed: "e\n{\"sumary\": \"typo\"}\n.\nedit\n{\"summary\": \"mine\",\n\"steps\": [\"one\"]}\n.\n",
			want: gate.Reply{Answer: gate.AnswerEdit, Text: "{\"summary\": \"mine\",\n\"steps\": [\"one\"]}\n"}},
		{typed: "maybe\nr\nnot needed\n", want: gate.Reply{Answer: gate.AnswerReject, Text: "not needed"}},
	} {
		out := &lockedBuffer{}
		p := newProgress(out, false, func() (int, int) { return 80, 24 })
		r, err := askOnTerminal(p, bytes.NewBufferString(tc.typed))(context.Background(), "4", e)
		require.NoError(t, err)
		assert.Equal(t, tc.want, r, "typed %q", tc.typed)
		assert.Contains(t, out.String(), "task 4 (plan me) has a plan to approve:\n  {\n    \"summary\": \"the model's plan\"\n  }\n")
		assert.Contains(t, out.String(), "[a]pprove, [e]dit")
		if tc.want.Answer == gate.AnswerEdit {
			assert.Contains(t, out.String(), "not a plan object", "the bad edit is refused")
		}
	}
}
