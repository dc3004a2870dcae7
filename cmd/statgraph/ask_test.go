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
	other := func(ctx context.Context, unit string, e agents.Escalation) (string, error) {
		select {
		case a := <-elsewhere:
			return a, nil
		case <-ctx.Done():
			return string(gate.AnswerAbort), ctx.Err()
		}
	}
	ask := control.FirstAnswer(askOnTerminal(p, in), other)
	e := agents.Escalation{Task: "1", Title: "t", Attempts: 1}

	elsewhere <- string(gate.AnswerSkip)
	done := make(chan string, 1)
	go func() {
		a, err := ask(context.Background(), "1", e)
		assert.NoError(t, err)
		done <- a
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
	assert.Equal(t, string(gate.AnswerRetry), a, "the terminal answers the next question")
	assert.Contains(t, out.String(), "[r]etry")
}
