package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/fsutil"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// A run in another process (statgraph run in a terminal) and a Control
// share its escalations through files in the plan's state directory:
// the run's Ask hook (RemoteAsk) writes <unit>.question and waits for
// <unit>.answer, which Control.Answer writes. Both are written to a
// temporary name and renamed (the question) or linked (the answer, so
// the first wins) into place, so a reader never sees half a file. An
// answer names the question's nonce: an answer left over from an
// earlier question of the unit is ignored.

// remoteQuestion is a <unit>.question file.
type remoteQuestion struct {
	Nonce    string   `json:"nonce"`
	PID      int      `json:"pid"`
	Question Question `json:"question"`
}

// remoteAnswer is a <unit>.answer file.
type remoteAnswer struct {
	Nonce string     `json:"nonce"`
	Reply gate.Reply `json:"answer"` // a Reply, or the answer alone as a string
}

// questionDir is where a plan's runs leave their pending questions.
func questionDir(plan dispatch.Plan) string { return filepath.Join(plan.Dir, "questions") }

// RemoteAskPoll is how often RemoteAsk looks for an answer.
const RemoteAskPoll = 100 * time.Millisecond

// RemoteAsk returns an Ask hook (dispatch.Dispatcher.Ask) that makes each
// escalation of plan a question other processes see (Control.Tasks,
// Questions) and answer (Control.Answer: statgraph serve, statgraph mcp),
// and waits for the answer until ctx is done (then "abort" with ctx's
// error). The question is removed once answered or given up; the answer
// taken stays until the unit's next question, so that a later answer to
// the same question is refused. It fails
// when the question cannot be written. Safe for concurrent use, one
// question per unit at a time.
func RemoteAsk(plan dispatch.Plan) func(ctx context.Context, unit string, e agents.Escalation) (gate.Reply, error) {
	return func(ctx context.Context, unit string, e agents.Escalation) (gate.Reply, error) {
		abort := gate.Reply{Answer: gate.AnswerAbort}
		dir := questionDir(plan)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return abort, fmt.Errorf("escalation of task %s: %w", unit, err)
		}
		var b [12]byte
		rand.Read(b[:])
		q := remoteQuestion{Nonce: hex.EncodeToString(b[:]), PID: os.Getpid(), Question: Question{Escalation: e, Asked: time.Now()}}
		qf, af := filepath.Join(dir, unit+".question"), filepath.Join(dir, unit+".answer")
		os.Remove(af) // an answer to an earlier question of the unit
		if err := writeJSON(qf, q, false); err != nil {
			return abort, fmt.Errorf("escalation of task %s: %w", unit, err)
		}
		defer os.Remove(qf)
		t := time.NewTicker(RemoteAskPoll)
		defer t.Stop()
		for {
			var a remoteAnswer
			if readJSON(af, &a) == nil {
				if a.Reply.Check(e.Kind) == nil && a.Nonce == q.Nonce {
					// The answer stays until the unit's next question:
					// a second answerer who read the question before it
					// went would otherwise find no answer and win too.
					os.Remove(qf)
					return a.Reply, nil
				}
				os.Remove(af)
			}
			select {
			case <-ctx.Done():
				return abort, ctx.Err()
			case <-t.C:
			}
		}
	}
}

// FirstAnswer returns an Ask hook that asks every one of asks at once and
// returns the first answer; the others are cancelled (their context is
// done) and their answers ignored.
func FirstAnswer(asks ...func(context.Context, string, agents.Escalation) (gate.Reply, error)) func(context.Context, string, agents.Escalation) (gate.Reply, error) {
	return func(ctx context.Context, unit string, e agents.Escalation) (gate.Reply, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type result struct {
			answer gate.Reply
			err    error
		}
		res := make(chan result, len(asks))
		for _, ask := range asks {
			go func() {
				a, err := ask(ctx, unit, e)
				res <- result{a, err}
			}()
		}
		r := <-res
		return r.answer, r.err
	}
}

// remoteQuestions returns the pending questions of runs in other
// processes, by unit; none when the directory is missing. A question whose
// process is gone (killed while it asked, so it could not remove its file)
// is left out: nobody waits for its answer. The file stays until the next
// run asks the unit again.
func remoteQuestions(plan dispatch.Plan) map[string]remoteQuestion {
	ents, err := os.ReadDir(questionDir(plan))
	if err != nil {
		return nil
	}
	out := map[string]remoteQuestion{}
	for _, ent := range ents {
		unit, ok := strings.CutSuffix(ent.Name(), ".question")
		if !ok {
			continue
		}
		var q remoteQuestion
		if readJSON(filepath.Join(questionDir(plan), ent.Name()), &q) == nil && fsutil.ProcessAlive(q.PID) {
			out[unit] = q
		}
	}
	return out
}

// pendingQuestion reads unit's question of a run in another process; it
// fails with ErrNoQuestion when there is none or its run has ended.
func pendingQuestion(plan dispatch.Plan, unit string) (remoteQuestion, error) {
	var q remoteQuestion
	err := readJSON(filepath.Join(questionDir(plan), unit+".question"), &q)
	if errors.Is(err, os.ErrNotExist) {
		return q, fmt.Errorf("%w for task %s: it was answered already, or its run ended", ErrNoQuestion, unit)
	}
	if err != nil {
		return q, fmt.Errorf("read the question of task %s: %w", unit, err)
	}
	if !fsutil.ProcessAlive(q.PID) {
		return q, fmt.Errorf("%w for task %s: the run that asked (process %d) has ended", ErrNoQuestion, unit, q.PID)
	}
	return q, nil
}

// placeAnswer writes the answer to q, unit's question read by
// pendingQuestion. The first answer wins: a second finds the first's file
// (the asking run leaves it, see RemoteAsk) and fails with ErrNoQuestion.
func placeAnswer(plan dispatch.Plan, unit string, q remoteQuestion, r gate.Reply) error {
	err := writeJSON(filepath.Join(questionDir(plan), unit+".answer"), remoteAnswer{Nonce: q.Nonce, Reply: r}, true)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w for task %s: another answer came first", ErrNoQuestion, unit)
	}
	if err != nil {
		return fmt.Errorf("answer task %s: %w", unit, err)
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// writeJSON writes v to path so that a reader never sees half of it
// (fsutil.WriteFile); with excl set it fails (fs.ErrExist) when path
// exists, so that of two writers the first wins (fsutil.WriteNew).
func writeJSON(path string, v any, excl bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if excl {
		return fsutil.WriteNew(path, b, 0o600)
	}
	return fsutil.WriteFile(path, b, 0o600)
}
