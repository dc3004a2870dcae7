package agents

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/store"
	"github.com/statgraph/statgraph/verifier"
)

// Lessons are what the orchestrator learns about a repository from its
// tasks and keeps in the graph's long-term store (statgraph.WithStore,
// read through statgraph.RuntimeOf), under LessonNamespace(repo), so that
// later tasks, of any plan, start knowing it:
//
//   - "retry": a task failed a check and a later attempt passed it; the
//     lesson names the check, its failure and what the passing attempt
//     did;
//   - "flaky": a check failed, then passed on an attempt that changed
//     nothing in the workspace;
//   - "slow": a check ran longer than SlowCheck.
//
// Before planning, the planner node picks the MaxLessons most relevant
// lessons for the task into TaskState.Lessons, which the planner's and
// the executor's prompts show. Relevance: each file a lesson names that
// the task's text mentions counts 2, each check of the lesson that the
// task also runs counts 1; lessons scoring 0 are left out, ties go to the
// most recently learned (among the lessonPool newest).
const (
	LessonRetry = "retry"
	LessonFlaky = "flaky"
	LessonSlow  = "slow"
)

// MaxLessons is how many lessons a task's prompts show at most.
const MaxLessons = 3

// SlowCheck is the duration from which a check is recorded as slow.
const SlowCheck = time.Minute

// lessonPool is how many of the newest lessons are scored for a task.
const lessonPool = 100

// LessonNamespace is the store namespace of the lessons of the repository
// at the absolute path repo.
func LessonNamespace(repo string) []string { return []string{"lessons", repo} }

// Lesson is a lesson as stored: Item.Value holds these fields.
type Lesson struct {
	Kind   string   `json:"kind"`
	Task   string   `json:"task,omitempty"`
	Checks []string `json:"checks,omitempty"`
	Files  []string `json:"files,omitempty"`
	// Text is the note the prompts show.
	Text string `json:"text"`
}

// Value returns l as a store value.
func (l Lesson) Value() map[string]any {
	v := map[string]any{"kind": l.Kind, "text": l.Text}
	if l.Task != "" {
		v["task"] = l.Task
	}
	if len(l.Checks) > 0 {
		v["checks"] = l.Checks
	}
	if len(l.Files) > 0 {
		v["files"] = l.Files
	}
	return v
}

// LessonOf reads a Lesson back from a store value.
func LessonOf(v map[string]any) Lesson {
	str := func(k string) string { s, _ := v[k].(string); return s }
	list := func(k string) []string {
		var out []string
		if xs, ok := v[k].([]any); ok {
			for _, x := range xs {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
		}
		return out
	}
	return Lesson{Kind: str("kind"), Task: str("task"), Text: str("text"), Checks: list("checks"), Files: list("files")}
}

// pickLessons returns the texts of the lessons in the run's store most
// relevant to s (see Lessons); none without a store or namespace.
func (o *orchestrator) pickLessons(ctx context.Context, s TaskState) ([]string, error) {
	st := statgraph.RuntimeOf(ctx).Store
	if st == nil || len(o.cfg.LessonNamespace) == 0 {
		return nil, nil
	}
	items, err := st.Search(ctx, o.cfg.LessonNamespace, store.Query{Limit: lessonPool})
	if err != nil {
		return nil, fmt.Errorf("reading the repository's lessons: %w", err)
	}
	text := strings.Join([]string{s.Task.Title, s.Task.Description, s.Task.Details, s.Task.TestStrategy}, "\n")
	type scored struct {
		text  string
		score int
	}
	var picks []scored
	for _, it := range items {
		l := LessonOf(it.Value)
		if l.Task == s.Task.ID || l.Text == "" {
			continue // a task's own lessons are in its feedback already
		}
		score := 0
		for _, f := range l.Files {
			if strings.Contains(text, f) {
				score += 2
			}
		}
		for _, c := range l.Checks {
			if slices.Contains(o.cfg.CheckNames, c) {
				score++
			}
		}
		if score > 0 {
			picks = append(picks, scored{l.Text, score})
		}
	}
	slices.SortStableFunc(picks, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	var out []string
	for _, p := range picks[:min(len(picks), MaxLessons)] {
		out = append(out, p.text)
	}
	return out, nil
}

// learn records what the verification v of s's latest attempt teaches
// (see Lessons) in the run's store. A failure to record is a warning, not
// the task's failure.
func (o *orchestrator) learn(ctx context.Context, s *TaskState, v verifier.Verification) {
	st := statgraph.RuntimeOf(ctx).Store
	if st == nil || len(o.cfg.LessonNamespace) == 0 {
		return
	}
	var lessons []struct {
		key string
		l   Lesson
	}
	add := func(key string, l Lesson) {
		lessons = append(lessons, struct {
			key string
			l   Lesson
		}{key, l})
	}
	for _, c := range v.Checks {
		if c.Duration >= SlowCheck {
			add("slow:"+c.Name, Lesson{Kind: LessonSlow, Task: s.Task.ID, Checks: []string{c.Name},
				Text: fmt.Sprintf("Check %q takes about %s: aim to pass it in one attempt.", c.Name, c.Duration.Round(time.Second))})
		}
	}
	n := len(s.Attempts)
	if v.Passed() && n >= 2 && !s.Attempts[n-2].Passed {
		prev, last := s.Attempts[n-2], s.Attempts[n-1]
		checks := failedChecks(prev.Errors)
		if last.NoProgress {
			for _, c := range checks {
				add("flaky:"+c, Lesson{Kind: LessonFlaky, Task: s.Task.ID, Checks: []string{c},
					Text: fmt.Sprintf("Check %q looks flaky: in task %s it failed, then passed with no change to the files.", c, s.Task.ID)})
			}
		} else if len(checks) > 0 {
			add("retry:"+s.Task.ID, Lesson{Kind: LessonRetry, Task: s.Task.ID, Checks: checks, Files: s.Plan.Files,
				Text: fmt.Sprintf("In task %s (%s), %s failed on attempt %d (%s); attempt %d passed: %s.",
					s.Task.ID, s.Task.Title, quoteAll(checks), prev.N, clipText(strings.Join(prev.Errors, "; "), 300), last.N, clipText(firstLine(last.Summary), 200))})
		}
	}
	for _, x := range lessons {
		if err := st.Put(ctx, store.Item{Namespace: o.cfg.LessonNamespace, Key: x.key, Value: x.l.Value()}); err != nil {
			s.Warnings = append(slices.Clip(s.Warnings), "recording a lesson: "+err.Error())
		}
	}
}

// failedChecks returns the check names of a verification's error lines
// ("tests: 2 failed (...)"), each once.
func failedChecks(errs []string) []string {
	var out []string
	for _, e := range errs {
		name, _, ok := strings.Cut(e, ": ")
		if ok && name != "" && !slices.Contains(out, name) && e != noProgress {
			out = append(out, name)
		}
	}
	return out
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("check %q", n)
	}
	return strings.Join(q, " and ")
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
