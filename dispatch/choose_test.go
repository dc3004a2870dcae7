package dispatch

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/tasks"
)

func cand(k int, passed bool, warnings, lines int) *candidate {
	return &candidate{Candidate: agents.Candidate{K: k, Passed: passed, Warnings: warnings, DiffLines: lines}}
}

// TestChoose applies the documented order: passing only, fewest warnings,
// the judge's tournament, the smallest diff, the lowest number.
func TestChoose(t *testing.T) {
	prefer := func(k int) judgeFunc {
		return func(_ context.Context, a, b *candidate) (int, string, error) {
			if b.K == k {
				return b.K, "prefers " + string(rune('0'+k)), nil
			}
			return a.K, "prefers " + string(rune('0'+k)), nil
		}
	}
	broken := func(context.Context, *candidate, *candidate) (int, string, error) {
		return 0, "", errors.New("server down")
	}
	tests := []struct {
		name   string
		cs     []*candidate
		judge  judgeFunc
		winner int
		why    string
		rounds []agents.JudgeRound
	}{
		{"none passed", []*candidate{cand(1, false, 0, 1), cand(2, false, 0, 1)}, nil, 0, "", nil},
		{"only one passed", []*candidate{cand(1, false, 0, 1), cand(2, true, 3, 90)}, nil, 2, "only passing candidate", nil},
		{"fewest warnings beat a smaller diff", []*candidate{cand(1, true, 2, 1), cand(2, true, 1, 50)}, nil, 2, "fewest warnings", nil},
		{"smallest diff among the fewest warnings", []*candidate{cand(1, true, 2, 1), cand(2, true, 1, 50), cand(3, true, 1, 2)}, nil, 3, "smallest diff", nil},
		{"lowest number on a full tie", []*candidate{cand(1, true, 0, 5), cand(2, true, 0, 5)}, nil, 1, "smallest diff", nil},
		{"judge over the tied ones only", []*candidate{cand(1, true, 1, 1), cand(2, true, 0, 9), cand(3, true, 0, 5), cand(4, true, 0, 7)}, prefer(4),
			4, "judge", []agents.JudgeRound{{A: 2, B: 3, Winner: 2, Reasoning: "prefers 4"}, {A: 2, B: 4, Winner: 4, Reasoning: "prefers 4"}}},
		{"judge that fails leaves the diff rule", []*candidate{cand(1, true, 0, 9), cand(2, true, 0, 5)}, broken,
			2, "smallest diff", []agents.JudgeRound{{A: 1, B: 2, Reasoning: "the judge could not decide: server down"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, why, rounds := choose(context.Background(), tasks.Task{}, tc.cs, tc.judge)
			got := 0
			if w != nil {
				got = w.K
			}
			require.Equal(t, tc.winner, got)
			require.Equal(t, tc.why, why)
			require.Equal(t, tc.rounds, rounds)
		})
	}
}

// TestOutright stops the rest only for a passing candidate with no
// warnings, no judge, and candidates still running.
func TestOutright(t *testing.T) {
	on := &tasks.Judge{On: true}
	require.True(t, outright(tasks.Task{}, []*candidate{cand(2, true, 0, 9)}, 3))
	require.False(t, outright(tasks.Task{}, []*candidate{cand(2, true, 1, 9)}, 3))
	require.False(t, outright(tasks.Task{}, []*candidate{cand(2, false, 0, 9)}, 3))
	require.False(t, outright(tasks.Task{Judge: on}, []*candidate{cand(2, true, 0, 9)}, 3))
	require.False(t, outright(tasks.Task{}, []*candidate{cand(1, true, 0, 9), cand(2, true, 0, 9)}, 2))
}
