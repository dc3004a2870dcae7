package statgraph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// observer is a retryLoop coder that records the attempt context of each
// run and fails its crashAt-th call, as a killed process would.
type observer struct {
	calls, crashAt int
	runs           []statgraph.AttemptContext[cycleState]
}

func (o *observer) coder(ctx context.Context, s cycleState) (cycleState, error) {
	o.calls++
	if o.calls == o.crashAt {
		return s, errors.New("killed")
	}
	o.runs = append(o.runs, statgraph.Attempts[cycleState](ctx))
	s.Version++
	return s, nil
}

// extraKind reports whether c's gate state is an increment, and its version.
func extraKind(t *testing.T, c *statgraph.Checkpoint) (increment bool, version int) {
	t.Helper()
	var doc struct {
		V    int
		From json.RawMessage
	}
	require.NoError(t, json.Unmarshal(c.Extra, &doc), "checkpoint %d", c.ID)
	return doc.From != nil, doc.V
}

// midChain returns the latest checkpoint of thread after which is an
// increment whose parent is an increment too, and for which keep holds.
func midChain(t *testing.T, cp statgraph.Checkpointer, thread string, keep func(*statgraph.Checkpoint) bool) *statgraph.Checkpoint {
	t.Helper()
	list, err := cp.List(context.Background(), thread, 0)
	require.NoError(t, err)
	for i, c := range list[:len(list)-1] {
		inc, _ := extraKind(t, c)
		pinc, _ := extraKind(t, list[i+1])
		if inc && pinc && keep(c) {
			return c
		}
	}
	require.FailNow(t, "no checkpoint in the middle of an increment chain")
	return nil
}

func TestGateExtraStaysSmallInALongRetryLoop(t *testing.T) {
	const retries = 300
	ctx := context.Background()
	cp := &statgraph.MemoryCheckpointer{Encode: true}
	var o observer
	g := mustCompile(t, retryLoop(retries+1, o.coder), statgraph.WithCheckpointer(cp))

	// What each checkpoint must hold, from the events of the run.
	wantGates := map[int64][]statgraph.GateOutcome{}
	wantWarnings := map[int64][]statgraph.Warning{}
	var gates []statgraph.GateOutcome
	var warnings []statgraph.Warning
	for ev, err := range g.Stream(ctx, cycleState{}, statgraph.WithThread("long"), statgraph.WithStepLimit(4*retries)) {
		require.NoError(t, err)
		switch ev.Kind {
		case statgraph.EventGateRetry, statgraph.EventGatePassed:
			gates = append(gates, *ev.Gate)
			warnings = append(warnings, ev.Gate.Warnings...)
		case statgraph.EventCheckpoint:
			wantGates[ev.CheckpointID] = slices.Clone(gates)
			wantWarnings[ev.CheckpointID] = slices.Clone(warnings)
		}
	}
	require.Len(t, gates, retries+1)
	require.Len(t, warnings, retries+1)
	require.Len(t, o.runs, retries+1)

	hist, err := g.History(ctx, "long", 0)
	require.NoError(t, err)
	require.Len(t, hist, len(wantGates))
	for _, s := range hist {
		require.Equal(t, wantGates[s.CheckpointID], s.Gates, "gate decisions of checkpoint %d", s.CheckpointID)
		require.Equal(t, wantWarnings[s.CheckpointID], s.Warnings, "warnings of checkpoint %d", s.CheckpointID)
	}

	list, err := cp.List(ctx, "long", 0)
	require.NoError(t, err)
	slices.Reverse(list)
	var incs []int // size of each increment
	full, sinceFull, incBytes := 0, 0, 0
	for _, c := range list {
		inc, v := extraKind(t, c)
		require.Equal(t, 2, v, "checkpoint %d", c.ID)
		if !inc {
			full, sinceFull, incBytes = len(c.Extra), 0, 0
			continue
		}
		incs = append(incs, len(c.Extra))
		sinceFull++
		incBytes += len(c.Extra)
		// 64 per row: what the engine counts for a stored checkpoint.
		require.Less(t, incBytes+64*sinceFull, full, "the increments up to checkpoint %d (and their rows) outweigh their full document", c.ID)
	}
	require.Greater(t, len(incs), len(list)*9/10, "most checkpoints hold increments")
	third := len(incs) / 3
	early, late := slices.Max(incs[:third]), slices.Max(incs[len(incs)-third:])
	require.LessOrEqual(t, late, early+early/10, "increments grow with the step count: %d bytes early, %d late", early, late)
	require.Greater(t, full, 20*late, "the full document outgrows the increments")
}

func TestGateResumeMidChainKeepsAttempts(t *testing.T) {
	const retries, crashAt = 60, 40
	ctx := context.Background()
	ref := observer{}
	var want statgraph.Result[cycleState]
	_, err := mustCompile(t, retryLoop(retries+1, ref.coder)).Invoke(ctx, cycleState{}, statgraph.WithResult(&want))
	require.NoError(t, err)
	require.Len(t, ref.runs, retries+1)
	require.Len(t, ref.runs[retries].All, retries)

	tests := []struct {
		name   string
		before func(t *testing.T, g *statgraph.Graph[cycleState])
	}{
		{name: "resume"},
		{name: "update state, then resume", before: func(t *testing.T, g *statgraph.Graph[cycleState]) {
			snap, err := g.State(ctx, "k")
			require.NoError(t, err)
			_, err = g.UpdateState(ctx, "k", snap.State, "")
			require.NoError(t, err)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp := &statgraph.MemoryCheckpointer{Encode: true}
			o := observer{crashAt: crashAt}
			g := mustCompile(t, retryLoop(retries+1, o.coder), statgraph.WithCheckpointer(cp))
			_, err := g.Invoke(ctx, cycleState{}, statgraph.WithThread("k"))
			require.ErrorContains(t, err, "killed")
			latest, err := cp.Get(ctx, "k", 0)
			require.NoError(t, err)
			require.Equal(t, latest, midChain(t, cp, "k", func(*statgraph.Checkpoint) bool { return true }), "the crash leaves the thread mid-chain")

			// A new process: a fresh graph on the same store.
			g = mustCompile(t, retryLoop(retries+1, o.coder), statgraph.WithCheckpointer(cp))
			if tt.before != nil {
				tt.before(t, g)
			}
			var got statgraph.Result[cycleState]
			_, err = g.Invoke(ctx, cycleState{}, statgraph.WithThread("k"), statgraph.WithResult(&got))
			require.NoError(t, err)
			require.Equal(t, ref.runs, o.runs, "every coder run sees the attempts of the uninterrupted run")
			require.Equal(t, want, got)
		})
	}
}

func TestGateForkFromMidChain(t *testing.T) {
	const retries = 60
	ctx := context.Background()
	cp := &statgraph.MemoryCheckpointer{Encode: true}
	ref := observer{}
	var want statgraph.Result[cycleState]
	_, err := mustCompile(t, retryLoop(retries+1, ref.coder), statgraph.WithCheckpointer(cp)).
		Invoke(ctx, cycleState{}, statgraph.WithThread("f"), statgraph.WithResult(&want))
	require.NoError(t, err)

	from := midChain(t, cp, "f", func(c *statgraph.Checkpoint) bool {
		return slices.Equal(c.Next, []string{"coder"}) && c.Step < 3*retries/2
	})
	o := observer{}
	g := mustCompile(t, retryLoop(retries+1, o.coder), statgraph.WithCheckpointer(cp))
	at, err := g.History(ctx, "f", 0)
	require.NoError(t, err)
	i := slices.IndexFunc(at, func(s statgraph.Snapshot[cycleState]) bool { return s.CheckpointID == from.ID })
	require.GreaterOrEqual(t, i, 0)
	before := at[i]
	require.NotEmpty(t, before.Gates)

	var got statgraph.Result[cycleState]
	_, err = g.Invoke(ctx, cycleState{}, statgraph.WithThread("f"), statgraph.FromCheckpoint(from.ID), statgraph.WithResult(&got))
	require.NoError(t, err)
	require.Equal(t, want, got, "the replay decides as the original run did")
	require.Equal(t, ref.runs[before.State.Version:], o.runs, "the replayed coder runs see the attempts of the original ones")

	hist, err := g.History(ctx, "f", 0)
	require.NoError(t, err)
	fork := slices.IndexFunc(hist, func(s statgraph.Snapshot[cycleState]) bool { return s.Source == statgraph.SourceFork })
	require.GreaterOrEqual(t, fork, 0)
	require.Equal(t, from.ID, hist[fork].Parent)
	require.Equal(t, before.Gates, hist[fork].Gates)
	require.Equal(t, before.Warnings, hist[fork].Warnings)
	require.Equal(t, want.Gates, hist[0].Gates)
	require.Equal(t, want.Warnings, hist[0].Warnings)
}

// tamperStore returns checkpoint id (from Get, List and Range) as tamper makes a
// copy of it, or as missing when tamper returns nil.
type tamperStore struct {
	*statgraph.MemoryCheckpointer
	id     int64
	tamper func(c *statgraph.Checkpoint) *statgraph.Checkpoint
}

func (s *tamperStore) Get(ctx context.Context, thread string, id int64) (*statgraph.Checkpoint, error) {
	c, err := s.MemoryCheckpointer.Get(ctx, thread, id)
	if err != nil || c.ID != s.id {
		return c, err
	}
	cc := *c
	if out := s.tamper(&cc); out != nil {
		return out, nil
	}
	return nil, fmt.Errorf("thread %q checkpoint %d: %w", thread, id, statgraph.ErrNoCheckpoint)
}

func (s *tamperStore) List(ctx context.Context, thread string, limit int) ([]*statgraph.Checkpoint, error) {
	list, err := s.MemoryCheckpointer.List(ctx, thread, limit)
	return s.tamperList(list, err)
}

func (s *tamperStore) Range(ctx context.Context, thread string, from, to int64, limit int) ([]*statgraph.Checkpoint, error) {
	list, err := s.MemoryCheckpointer.Range(ctx, thread, from, to, limit)
	return s.tamperList(list, err)
}

func (s *tamperStore) tamperList(list []*statgraph.Checkpoint, err error) ([]*statgraph.Checkpoint, error) {
	if err != nil {
		return nil, err
	}
	out := list[:0:0]
	for _, c := range list {
		if c.ID == s.id {
			cc := *c
			if c = s.tamper(&cc); c == nil {
				continue
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// TestGateCorruptExtraChain damages the gate state of the parent of a
// thread's latest checkpoint (an increment), leaving its state whole.
func TestGateCorruptExtraChain(t *testing.T) {
	ctx := context.Background()
	setExtra := func(b string) func(c *statgraph.Checkpoint) *statgraph.Checkpoint {
		return func(c *statgraph.Checkpoint) *statgraph.Checkpoint {
			c.Extra = []byte(b)
			return c
		}
	}
	tests := []struct {
		name   string
		tamper func(c *statgraph.Checkpoint) *statgraph.Checkpoint
		want   string
	}{
		{name: "parent is not JSON", tamper: setExtra("{"), want: "gate state: unexpected end of JSON input"},
		{name: "parent has no gate state", tamper: setExtra(""), want: "holds no gate state"},
		{name: "parent from a newer statgraph", tamper: setExtra(`{"v":3}`), want: "document version 3 is newer"},
		{name: "parent holds other counts", tamper: setExtra(`{"v":2,"from":{"tries":0,"gates":0,"warnings":0}}`), want: "increment follows"},
		{name: "parent is missing", want: "is missing"},
	}
	operations := []struct {
		name string
		run  func(g *statgraph.Graph[cycleState]) error
	}{
		{"State", func(g *statgraph.Graph[cycleState]) error { _, err := g.State(ctx, "c"); return err }},
		{"History", func(g *statgraph.Graph[cycleState]) error { _, err := g.History(ctx, "c", 0); return err }},
		{"resume", func(g *statgraph.Graph[cycleState]) error {
			_, err := g.Invoke(ctx, cycleState{}, statgraph.WithThread("c"))
			return err
		}},
		{"UpdateState", func(g *statgraph.Graph[cycleState]) error {
			_, err := g.UpdateState(ctx, "c", cycleState{}, "")
			return err
		}},
	}
	for _, tt := range tests {
		for _, op := range operations {
			t.Run(tt.name+"/"+op.name, func(t *testing.T) {
				mem := &statgraph.MemoryCheckpointer{Encode: true}
				o := observer{crashAt: 20}
				g := mustCompile(t, retryLoop(30, o.coder), statgraph.WithCheckpointer(mem))
				_, err := g.Invoke(ctx, cycleState{}, statgraph.WithThread("c"))
				require.ErrorContains(t, err, "killed")
				latest, err := mem.Get(ctx, "c", 0)
				require.NoError(t, err)
				require.Equal(t, latest, midChain(t, mem, "c", func(*statgraph.Checkpoint) bool { return true }))

				store := &tamperStore{MemoryCheckpointer: mem, id: latest.Parent, tamper: tt.tamper}
				if tt.tamper == nil {
					store.tamper = func(*statgraph.Checkpoint) *statgraph.Checkpoint { return nil }
				}
				g = mustCompile(t, retryLoop(30, o.coder), statgraph.WithCheckpointer(store))
				err = op.run(g)
				require.ErrorIs(t, err, statgraph.ErrCorruptCheckpoint)
				require.ErrorContains(t, err, `thread "c" checkpoint `)
				require.ErrorContains(t, err, tt.want)
			})
		}
	}
}
