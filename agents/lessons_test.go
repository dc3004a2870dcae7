package agents

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/store"
	"github.com/statgraph/statgraph/verifier"
)

type plannerFunc func(ctx context.Context, s TaskState) (Plan, error)

func (f plannerFunc) Plan(ctx context.Context, s TaskState) (Plan, error) { return f(ctx, s) }

// TestPickLessonsByRelevance: a lesson naming a file the task mentions
// (2 per file) comes before one about a check the task runs (1), which
// comes before an older one of the same score; lessons scoring 0, and
// the task's own, are left out; at most MaxLessons are shown.
func TestPickLessonsByRelevance(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mem := store.NewMemory(store.WithClock(func() time.Time { now = now.Add(time.Second); return now }))
	ns := LessonNamespace("/src/app")
	for _, x := range []struct {
		key string
		l   Lesson
	}{
		{"old-check", Lesson{Kind: LessonRetry, Task: "a", Checks: []string{"tests"}, Text: "old check lesson"}},
		{"file", Lesson{Kind: LessonRetry, Task: "b", Files: []string{"parse.go"}, Text: "file lesson"}},
		{"other-check", Lesson{Kind: LessonSlow, Task: "c", Checks: []string{"e2e"}, Text: "unrelated check"}},
		{"other-file", Lesson{Kind: LessonRetry, Task: "d", Files: []string{"main.go"}, Text: "unrelated file"}},
		{"own", Lesson{Kind: LessonRetry, Task: "7", Checks: []string{"tests"}, Text: "the task's own lesson"}},
		{"new-check", Lesson{Kind: LessonFlaky, Task: "e", Checks: []string{"lint"}, Text: "new check lesson"}},
		{"newest-check", Lesson{Kind: LessonFlaky, Task: "f", Checks: []string{"tests"}, Text: "newest check lesson"}},
	} {
		require.NoError(t, mem.Put(ctx, store.Item{Namespace: ns, Key: x.key, Value: x.l.Value()}))
	}
	var got []string
	g, err := NewGraph(Config{
		Planner:  plannerFunc(func(_ context.Context, s TaskState) (Plan, error) { got = s.Lessons; return Plan{}, nil }),
		Executor: ExecutorFunc(func(context.Context, TaskState) (string, error) { return "done", nil }),
		Verifier: VerifierFunc(func(context.Context, TaskState) (verifier.Verification, error) {
			return verifier.Verification{TestsPassed: true, LintPassed: true}, nil
		}),
		LessonNamespace: ns, CheckNames: []string{"tests", "lint"},
	}, statgraph.WithStore(mem))
	require.NoError(t, err)
	_, err = g.Invoke(ctx, TaskState{Task: Task{ID: "7", Title: "Fix the parser in parse.go"}})
	require.NoError(t, err)
	// Each put is a second later than the one before: of the three check
	// lessons (score 1) the two newest are shown, newest first.
	require.Equal(t, []string{"file lesson", "newest check lesson", "new check lesson"}, got)
}
