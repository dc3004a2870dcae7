package control

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/queue"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// Comment is a person's review comment on lines of a task's diff: the
// file (as the diff names it), the line in the new version of the file
// (EndLine, when not 0, ends a range) and what to change.
type Comment struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line,omitempty"`
	Text    string `json:"text"`
}

// Limits of Review's comments.
const (
	MaxComments     = 100
	MaxCommentBytes = 4 << 10
)

var (
	// ErrBadComment is wrapped by the errors of ParseComment and Review
	// for a comment that cannot be used.
	ErrBadComment = errors.New("bad review comment")
	// ErrNotReviewable is wrapped by Review's error for a task that is
	// not done.
	ErrNotReviewable = errors.New("only a done task can be sent back with review comments")
)

// String formats c as "file:line: text" ("file:12-14: text" for a range),
// the form the executor reads in its feedback.
func (c Comment) String() string {
	lines := strconv.Itoa(c.Line)
	if c.EndLine > c.Line {
		lines += "-" + strconv.Itoa(c.EndLine)
	}
	return c.File + ":" + lines + ": " + c.Text
}

// ParseComment reads a comment written as file:line:text (or
// file:12-14:text for a range), as statgraph review --comment takes it.
func ParseComment(s string) (Comment, error) {
	file, rest, ok1 := strings.Cut(s, ":")
	lines, text, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 {
		return Comment{}, fmt.Errorf("%w %q: write it as file:line:text, e.g. main.go:12:handle the error", ErrBadComment, s)
	}
	c := Comment{File: file, Text: strings.TrimSpace(text)}
	first, last, isRange := strings.Cut(lines, "-")
	var err1, err2 error
	c.Line, err1 = strconv.Atoi(first)
	if isRange {
		c.EndLine, err2 = strconv.Atoi(last)
	}
	if err1 != nil || err2 != nil {
		return Comment{}, fmt.Errorf("%w %q: %q is not a line number or range (12, or 12-14)", ErrBadComment, s, lines)
	}
	return c, checkComment(c)
}

// checkComment refuses a comment with no file, a path leaving the
// repository, a line below 1, a range ending before it starts, or no or
// too long a text.
func checkComment(c Comment) error {
	switch {
	case c.File == "" || path.IsAbs(c.File) || path.Clean(c.File) != c.File || strings.HasPrefix(c.File, "../") || c.File == "..":
		return fmt.Errorf("%w on %q: the file must be a path inside the repository as the diff names it, e.g. cmd/main.go", ErrBadComment, c.File)
	case c.Line < 1:
		return fmt.Errorf("%w on %s: line %d; lines count from 1", ErrBadComment, c.File, c.Line)
	case c.EndLine != 0 && c.EndLine < c.Line:
		return fmt.Errorf("%w on %s: the range %d-%d ends before it starts", ErrBadComment, c.File, c.Line, c.EndLine)
	case strings.TrimSpace(c.Text) == "":
		return fmt.Errorf("%w on %s:%d: it has no text; say what to change", ErrBadComment, c.File, c.Line)
	case len(c.Text) > MaxCommentBytes:
		return fmt.Errorf("%w on %s:%d: %d bytes, over the %d allowed", ErrBadComment, c.File, c.Line, len(c.Text), MaxCommentBytes)
	}
	return nil
}

// ReviewFeedback is the feedback an attempt sent back by a review gets:
// one line per comment (Comment.String), under a heading saying where
// they come from.
func ReviewFeedback(comments []Comment) string {
	var b strings.Builder
	b.WriteString("A reviewer read your diff and asks for changes. Address every comment (file:line: comment):\n")
	for _, c := range comments {
		b.WriteString("- " + c.String() + "\n")
	}
	return b.String()
}

// Review sends done task id back with review comments on its diff: they
// become the feedback of a new attempt, as a failed check's output does,
// so the executor reads them, the checks run again after it and the
// task's retries (a new retry context, as an escalation answered "retry"
// starts), token budget and attempt log apply. The task's last attempt
// records the comments (its Errors and Feedback), error_history gains a
// "Review: ..." line and the task goes back to pending with a reason; the
// next run (statgraph run, resume, or Start) continues its thread with
// the executor, in a workspace that starts from the task's branch. Tasks
// already built on the task are left as they are. For a plan run on
// workers (statgraph run --queue) the state is read and written in the
// workers' run store, the queue's Postgres (see Options.Queue), so that
// the next run on the queue continues it; a queue out of reach fails.
//
// It fails with ErrBadComment for an unusable comment, with ErrRunning
// while a run holds the plan, with tasks.ErrNoTask for an unknown id, and
// when the task is not done or has no run in the run store; nothing is
// changed then.
func (c *Control) Review(ctx context.Context, id string, comments []Comment) error {
	switch {
	case len(comments) == 0:
		return fmt.Errorf("%w: no comment given; say what to change with at least one (file, line, text)", ErrBadComment)
	case len(comments) > MaxComments:
		return fmt.Errorf("%w: %d comments, over the %d allowed in one review", ErrBadComment, len(comments), MaxComments)
	}
	for _, cm := range comments {
		if err := checkComment(cm); err != nil {
			return err
		}
	}
	err := c.locked(func(f *tasks.File) (bool, error) {
		t, ok := f.Task(id)
		if !ok {
			return false, fmt.Errorf("%w: %s in %s", ErrNoTask, id, c.o.File)
		}
		if !tasks.IsDone(t.Status) {
			return false, fmt.Errorf("task %s is %s: %w", id, cmp.Or(t.Status, tasks.StatusPending), ErrNotReviewable)
		}
		// The run store the reads use: the workers' for a plan run on a
		// queue (the next run there continues the thread), else the
		// local one.
		g, _, err := c.reader(ctx, false)
		if err != nil {
			return false, err
		}
		if err := c.QueueErr(); err != nil {
			return false, fmt.Errorf("task %s ran on workers, whose run store cannot be read: %w", id, err)
		}
		if g == nil {
			return false, fmt.Errorf("%w: task %s has no run in %s to send back (it was done before statgraph ran it, or its run was cleaned)", ErrNoRun, id, c.o.Store)
		}
		snap, err := g.State(ctx, c.plan.Thread(id))
		if errors.Is(err, statgraph.ErrNoCheckpoint) {
			return false, fmt.Errorf("%w: task %s has no run in %s to send back (it was done before statgraph ran it, or its run was cleaned)", ErrNoRun, id, c.where())
		}
		if err != nil {
			return false, err
		}
		if err := c.sendBackOnQueue(ctx, id); err != nil {
			return false, err
		}
		s := sentBack(snap.State, comments)
		if _, err := g.UpdateState(ctx, c.plan.Thread(id), s, agents.NodeVerifier); err != nil {
			return false, fmt.Errorf("send task %s back: %w", id, err)
		}
		reason := fmt.Sprintf("sent back with %d review comment(s); the next run makes a new attempt", len(comments))
		return true, f.Apply(id, tasks.Outcome{Status: tasks.StatusPending, Reason: reason, RetryCount: s.RetryCount, ErrorHistory: s.ErrorHistory})
	})
	if err == nil {
		c.hub.resyncAll()
	}
	return err
}

// sentBack is s, a done task's last state, with the review comments as a
// failed verification whose feedback goes to the executor, in a new retry
// context.
func sentBack(s agents.TaskState, comments []Comment) agents.TaskState {
	lines := make([]string, len(comments))
	for i, cm := range comments {
		lines[i] = "review: " + cm.String()
	}
	feedback := ReviewFeedback(comments)
	s.Verification = verifier.Verification{Errors: lines, Feedback: feedback}
	s.ErrorHistory = append(slices.Clip(s.ErrorHistory), fmt.Sprintf("Review after %d attempts: %s", len(s.Attempts), strings.Join(lines, "; ")))
	if n := len(s.Attempts); n > 0 {
		s.Attempts = slices.Clone(s.Attempts)
		a := &s.Attempts[n-1]
		a.Errors = append(slices.Clip(a.Errors), lines...)
		a.Feedback = feedback
	}
	s.RetryCount, s.Phase, s.FailedAt, s.Decision = 0, agents.PhaseExecuting, nil, "review"
	return s
}

// sendBackOnQueue tells the queue of a plan run on workers that unit id
// runs again (queue.SendBack), so that the next statgraph run --queue
// makes its new attempt instead of taking its done result; nothing for a
// plan run here.
func (c *Control) sendBackOnQueue(ctx context.Context, id string) error {
	c.storeMu.Lock()
	pool, remote := c.queue.pool, c.queue.remote
	c.storeMu.Unlock()
	if pool == nil {
		return nil
	}
	return queue.SendBack(ctx, pool, queue.PlanID(remote, c.plan), id)
}
