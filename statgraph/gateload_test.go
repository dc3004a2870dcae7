package statgraph

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gateLoadChain stores a full gate document at checkpoint 1 (one attempt,
// one decision) and increments 2 (a second attempt; feedback for the
// first) and 3 (a decision and a warning), each on its predecessor.
func gateLoadChain(t testing.TB) *codecTestStore {
	t.Helper()
	store := &codecTestStore{}
	put := func(id int64, x gateExtra) {
		b, err := json.Marshal(x)
		require.NoError(t, err)
		store.put(&Checkpoint{Thread: "t", ID: id, Parent: id - 1, Extra: b})
	}
	put(1, gateExtra{Version: extraVersion, Targets: []targetState{{Node: "coder", Context: 1, Tries: 1}},
		Tries: []tryJSON{{Node: "coder", Context: 1, Try: 1, Output: []byte(`{}`)}},
		Gates: []GateOutcome{{Gate: "g", Decision: GateRetry}}})
	put(2, gateExtra{Version: extraVersion, From: &extraCounts{Tries: 1, Gates: 1},
		Tries:    []tryJSON{{Node: "coder", Context: 1, Try: 2, Output: []byte(`{}`)}},
		Feedback: []feedbackJSON{{Index: 0, Feedback: "try again"}}})
	put(3, gateExtra{Version: extraVersion, Verdicts: []Verdict{{Validator: "check", Passed: true}}, From: &extraCounts{Tries: 2, Gates: 1},
		Gates: []GateOutcome{{Gate: "g", Decision: GatePassed, Passed: true}}, Warnings: []Warning{{Gate: "g", Message: "style"}}})
	return store
}

func TestLoadExtra(t *testing.T) {
	store := gateLoadChain(t)
	d, err := loadExtra(t.Context(), store, store.cps[3], true, nil)
	require.NoError(t, err)
	assert.Equal(t, extraCounts{Tries: 2, Gates: 2, Warnings: 1}, d.n)
	assert.Equal(t, []Verdict{{Validator: "check", Passed: true}}, d.verdicts)
	assert.Equal(t, "try again", d.tries[0].Feedback)
	assert.Equal(t, 2, d.tries[1].Try)
	assert.Equal(t, []GateDecision{GateRetry, GatePassed}, []GateDecision{d.gates[0].Decision, d.gates[1].Decision})
	assert.Equal(t, 2, d.sinceFull)
	assert.Equal(t, len(store.cps[1].Extra), d.fullBytes)
	assert.Equal(t, len(store.cps[2].Extra)+len(store.cps[3].Extra)+2*rowOverhead, d.incBytes)

	t.Run("version 1 documents are full", func(t *testing.T) {
		v1 := `{"targets":[{"node":"coder","context":1,"tries":1,"last":0}],"tries":[{"node":"coder","context":1,"try":1,"step":1,"output":"e30="}],` +
			`"gates":[{"gate":"g","step":3,"decision":"retry"}],"warnings":[{"gate":"g","step":3,"message":"m"}]}`
		d, err := loadExtra(t.Context(), store, &Checkpoint{Thread: "t", ID: 9, Parent: 3, Extra: []byte(v1)}, true, nil)
		require.NoError(t, err)
		assert.Equal(t, extraCounts{Tries: 1, Gates: 1, Warnings: 1}, d.n)
		assert.Equal(t, []byte(`{}`), d.tries[0].Output)
		assert.Zero(t, d.sinceFull)
	})

	t.Run("a memo base is shared by forks and not written", func(t *testing.T) {
		store := gateLoadChain(t)
		fork := gateExtra{Version: extraVersion, From: &extraCounts{Tries: 2, Gates: 1},
			Gates: []GateOutcome{{Gate: "g", Decision: GateFailed}}, Feedback: []feedbackJSON{{Index: 1, Feedback: "forked"}}}
		b, err := json.Marshal(fork)
		require.NoError(t, err)
		store.put(&Checkpoint{Thread: "t", ID: 4, Parent: 2, Extra: b})
		memo := map[int64]*gateDoc{}
		for _, id := range []int64{1, 2, 3, 4} {
			_, err := loadExtra(t.Context(), store, store.cps[id], true, memo)
			require.NoError(t, err)
		}
		assert.Equal(t, GatePassed, memo[3].gates[1].Decision)
		assert.Equal(t, GateFailed, memo[4].gates[1].Decision)
		assert.Empty(t, memo[2].tries[1].Feedback, "the fork's feedback stays in the fork")
		assert.Equal(t, "forked", memo[4].tries[1].Feedback)
		assert.Len(t, memo[2].gates, 1)
	})
}

func TestLoadExtraErrors(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(s *codecTestStore)
		want    string
	}{
		{name: "missing parent", breakIt: func(s *codecTestStore) { delete(s.cps, 2) },
			want: `thread "t" checkpoint 3: gate state: its parent 2, the base of its increment, is missing`},
		{name: "parent without gate state", breakIt: func(s *codecTestStore) { s.cps[2].Extra = nil },
			want: `thread "t" checkpoint 3: gate state: its parent 2, the base of its increment, holds no gate state`},
		{name: "bad parent", breakIt: func(s *codecTestStore) { s.cps[1].Extra = []byte(`{"tries":7}`) },
			want: `thread "t" checkpoint 1: gate state: json: cannot unmarshal`},
		{name: "increment without parent", breakIt: func(s *codecTestStore) { s.cps[2].Parent = 0 },
			want: `thread "t" checkpoint 2: gate state: increment has parent 0`},
		{name: "parent loop", breakIt: func(s *codecTestStore) { s.cps[2].Parent = 3 },
			want: `thread "t" checkpoint 2: gate state: increment has parent 3`},
		{name: "counts differ", breakIt: func(s *codecTestStore) { s.cps[3].Parent = 1 },
			want: `thread "t" checkpoint 3: gate state: increment follows 2 attempts, 1 gate decisions and 0 warnings, but its parent has 1, 1 and 0`},
		{name: "feedback out of range", breakIt: func(s *codecTestStore) {
			s.cps[2].Extra = []byte(`{"v":2,"from":{"tries":1,"gates":1,"warnings":0},"feedback":[{"index":1,"feedback":"x"}]}`)
		}, want: `thread "t" checkpoint 2: gate state: feedback for attempt 2 of 1`},
		{name: "newer version", breakIt: func(s *codecTestStore) { s.cps[1].Extra = []byte(`{"v":3}`) },
			want: `thread "t" checkpoint 1: gate state: document version 3 is newer than this statgraph reads (2)`},
	}
	for _, tt := range tests {
		for _, tries := range []bool{true, false} {
			t.Run(tt.name, func(t *testing.T) {
				store := gateLoadChain(t)
				tt.breakIt(store)
				_, err := loadExtra(t.Context(), store, store.cps[3], tries, map[int64]*gateDoc{})
				require.ErrorIs(t, err, ErrCorruptCheckpoint)
				assert.ErrorContains(t, err, tt.want)
			})
		}
	}

	t.Run("store error", func(t *testing.T) {
		store := gateLoadChain(t)
		boom := errors.New("disk on fire")
		store.getErr = boom
		_, err := loadExtra(t.Context(), store, store.cps[3], true, nil)
		require.ErrorIs(t, err, boom)
		assert.NotErrorIs(t, err, ErrCorruptCheckpoint)
		assert.ErrorContains(t, err, `loading parent 2 of checkpoint 3 of thread "t"`)
	})
}

// FuzzLoadExtra loads arbitrary bytes as the gate state of the newest
// checkpoint of a chain and of its parent: a load returns the state or an
// ErrCorruptCheckpoint, and never panics.
func FuzzLoadExtra(f *testing.F) {
	seed := gateLoadChain(f)
	for _, c := range seed.cps {
		f.Add(c.Extra, false)
	}
	f.Add([]byte(`{"v":2,"from":{"tries":-1}}`), true)
	f.Add([]byte(`{"v":2,"from":{"tries":2,"gates":1,"warnings":0},"feedback":[{"index":-5}]}`), false)
	f.Fuzz(func(t *testing.T, extra []byte, parent bool) {
		store := gateLoadChain(t)
		id := int64(3)
		if parent {
			id = 2
		}
		store.cps[id].Extra = extra
		for _, tries := range []bool{true, false} {
			d, err := loadExtra(t.Context(), store, store.cps[3], tries, map[int64]*gateDoc{})
			if err != nil {
				require.ErrorIs(t, err, ErrCorruptCheckpoint)
				continue
			}
			require.GreaterOrEqual(t, d.n.Tries, 0)
			if tries {
				require.Len(t, d.tries, d.n.Tries)
			}
			require.Len(t, d.gates, d.n.Gates)
			require.Len(t, d.warnings, d.n.Warnings)
		}
	})
}
