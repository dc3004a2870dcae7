package control_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// A question of a run in another process (RemoteAsk) shows in Questions
// and Tasks; an answer file left from an earlier question, or naming
// another question, is ignored; Control.Answer's answer is taken, once.
func TestRemoteQuestionIgnoresStaleAnswers(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	c, err := control.Open(control.Options{File: file})
	require.NoError(t, err)
	defer c.Close()
	dir := filepath.Join(c.Plan().Dir, "questions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	stale := []byte(`{"nonce":"from-an-earlier-question","answer":"abort"}`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1.answer"), stale, 0o600))

	type result struct {
		answer string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		a, err := control.RemoteAsk(c.Plan())(bg, "1", agents.Escalation{Task: "1", Title: "write fixed", Attempts: 1})
		got <- result{string(a.Answer), err}
	}()
	require.Eventually(t, func() bool { return c.Questions()["1"].Task == "1" }, 10*time.Second, 10*time.Millisecond)
	ts, err := c.Tasks(bg)
	require.NoError(t, err)
	require.NotNil(t, ts[0].Question)
	require.Equal(t, "write fixed", ts[0].Question.Title)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "1.answer"), stale, 0o600))
	select {
	case r := <-got:
		t.Fatalf("a stale answer was taken: %+v", r)
	case <-time.After(5 * control.RemoteAskPoll):
	}
	require.NoError(t, c.Answer("1", gate.AnswerRetry))
	select {
	case r := <-got:
		require.NoError(t, r.err)
		require.Equal(t, string(gate.AnswerRetry), r.answer)
	case <-time.After(10 * time.Second):
		t.Fatal("the answer was not taken")
	}
	require.Empty(t, c.Questions())
	require.ErrorIs(t, c.Answer("1", gate.AnswerSkip), control.ErrNoQuestion)

	// A run that stops while asking takes its question back.
	ctx, cancel := context.WithCancel(bg)
	go func() {
		a, err := control.RemoteAsk(c.Plan())(ctx, "2", agents.Escalation{Task: "2"})
		got <- result{string(a.Answer), err}
	}()
	require.Eventually(t, func() bool { return c.Questions()["2"].Task == "2" }, 10*time.Second, 10*time.Millisecond)
	cancel()
	r := <-got
	require.ErrorIs(t, r.err, context.Canceled)
	require.Empty(t, c.Questions())
}

// Of two answers to a run's question the second is refused, also when it
// read the question before the run took the first answer and writes its
// own only after the run went on (the window in which
// TestTerminalRunAnsweredThroughHTTP's second answer got 200 under load).
func TestRemoteSecondAnswerAfterTheRunTookTheFirstIsRefused(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	c, err := control.Open(control.Options{File: file})
	require.NoError(t, err)
	defer c.Close()
	got := make(chan string, 1)
	go func() {
		a, err := control.RemoteAsk(c.Plan())(bg, "1", agents.Escalation{Task: "1", Title: "write fixed", Attempts: 1})
		assert.NoError(t, err)
		got <- string(a.Answer)
	}()
	require.Eventually(t, func() bool { return c.Questions()["1"].Task == "1" }, 10*time.Second, 10*time.Millisecond)

	late, err := control.AnswerInTwoSteps(c, "1", string(gate.AnswerAbort))
	require.NoError(t, err)
	require.NoError(t, c.Answer("1", gate.AnswerSkip))
	select {
	case a := <-got:
		require.Equal(t, string(gate.AnswerSkip), a)
	case <-time.After(10 * time.Second):
		t.Fatal("the answer was not taken")
	}
	require.ErrorIs(t, late(), control.ErrNoQuestion, "the first answer wins")
	require.ErrorIs(t, c.Answer("1", gate.AnswerRetry), control.ErrNoQuestion)
}

// A run killed while it asked leaves its question file behind; the
// question is not shown or answerable, since no process waits for it.
func TestRemoteQuestionOfAKilledRunIsLeftOut(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	c, err := control.Open(control.Options{File: file})
	require.NoError(t, err)
	defer c.Close()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	dir := filepath.Join(c.Plan().Dir, "questions")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	q := fmt.Sprintf(`{"nonce":"n1","pid":%d,"question":{"task":"1","title":"write fixed","attempts":3}}`, dead.Process.Pid)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1.question"), []byte(q), 0o600))

	require.Empty(t, c.Questions(), "a dead run's question is not pending")
	err = c.Answer("1", gate.AnswerRetry)
	require.ErrorIs(t, err, control.ErrNoQuestion)
	require.Contains(t, err.Error(), "has ended")
	require.NoFileExists(t, filepath.Join(dir, "1.answer"))

	// The same file naming this (live) process is a pending question.
	q = fmt.Sprintf(`{"nonce":"n1","pid":%d,"question":{"task":"1","title":"write fixed","attempts":3}}`, os.Getpid())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1.question"), []byte(q), 0o600))
	require.Equal(t, "1", c.Questions()["1"].Task)
}
