package tasks

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBestOfFields decodes "attempts", "candidates" and "judge", in a task
// and from defaults, and the candidate each entry makes.
func TestBestOfFields(t *testing.T) {
	f, err := Parse("tasks.json", []byte(`{"defaults": {"attempts": 2, "judge": true, "executor": "codex"},
	"tasks": [{"id": 1, "title": "a"},
	          {"id": 2, "title": "b", "judge": "judge-model", "model": "m",
	           "candidates": [{"executor": {"command": ["./a.sh"]}}, {"model": "other"}, {}]},
	          {"id": 3, "title": "c", "attempts": 4, "judge": false}]}`), "")
	require.NoError(t, err)
	one, _ := f.Task("1")
	require.Equal(t, 2, one.Candidates())
	require.Equal(t, &Judge{On: true}, one.Judge)
	two, _ := f.Task("2")
	require.Equal(t, 2, two.Candidates(), "attempts from defaults wins over the count of candidates")
	require.Equal(t, &Judge{On: true, Model: "judge-model"}, two.Judge)
	require.Equal(t, []string{"./a.sh"}, two.Candidate(1).Executor.Command)
	require.Equal(t, "m", two.Candidate(1).Model)
	require.Equal(t, "codex", two.Candidate(2).Executor.Preset)
	require.Equal(t, "other", two.Candidate(2).Model)
	require.Equal(t, "codex", two.Candidate(3).Executor.Preset)
	three, _ := f.Task("3")
	require.Equal(t, 4, three.Candidates())
	require.Equal(t, &Judge{}, three.Judge)

	f, err = Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "a", "candidates": [{}, {}, {}]}, {"id": 2, "title": "b"}]}`), "")
	require.NoError(t, err)
	one, _ = f.Task("1")
	require.Equal(t, 3, one.Candidates())
	two, _ = f.Task("2")
	require.Equal(t, 1, two.Candidates())
}

// TestBestOfFieldsInvalid reports each bad best-of-N field where it is.
func TestBestOfFieldsInvalid(t *testing.T) {
	_, err := Parse("tasks.json", []byte(`{"tasks": [
{"id": 1, "title": "a", "attempts": 0},
{"id": 2, "title": "b", "attempts": 17},
{"id": 3, "title": "c", "candidates": {"model": "x"}},
{"id": 4, "title": "d", "candidates": [{"modle": "x"}, 5]},
{"id": 5, "title": "e", "judge": 3}]}`), "")
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	var got []string
	for _, p := range ve.Problems {
		got = append(got, p.String())
	}
	require.Equal(t, []string{
		`tasks.json:2:37: task 1: "attempts" is 0; want 1 to 16 (1 runs the task once, as without it)`,
		`tasks.json:3:37: task 2: "attempts" is 17; want 1 to 16 (1 runs the task once, as without it)`,
		`tasks.json:4:39: task 3: "candidates" is an object; want an array of objects such as [{"executor": "codex"}, {"model": "NAME"}]`,
		`tasks.json:5:41: task 4: unknown field "modle" in candidates[0] (known: executor, model)`,
		`tasks.json:5:56: task 4: candidates[1] is a number (5); want an object with "executor" and/or "model"`,
		`tasks.json:6:34: task 5: "judge" is a number (3); want true (the task's model judges), false, or a model's name`,
	}, got)
}
