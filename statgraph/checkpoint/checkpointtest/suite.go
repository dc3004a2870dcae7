package checkpointtest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// Open returns a new, empty store for one test. It is called once per
// subtest, from that subtest's goroutine; the store is closed (if it needs
// closing) by a t.Cleanup that Open registers.
type Open func(t *testing.T) statgraph.Checkpointer

// Run runs the conformance suite against the stores that open returns, each
// test in a subtest with a fresh store. Subtests do not call t.Parallel, so
// a store opened on a shared server sees one test at a time.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s statgraph.Checkpointer)
	}{
		{"RoundTrip", testRoundTrip},
		{"Get", testGet},
		{"List", testList},
		{"DeleteWholeThread", testDeleteThread},
		{"PutDuplicate", testPutDuplicate},
		{"Range", testRange},
		{"DeleteBelowID", testDeleteBefore},
		{"PutWrites", testPutWrites},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentReadersOfOneThread", testConcurrentReadersOfOneThread},
		{"GraphResumeAfterFailure", testResumeAfterFailure},
		{"GraphPendingWritesOfFailedStep", testPendingWrites},
		{"GraphInterruptInsideNode", testInterruptInsideNode},
		{"GraphTwoInterruptsResumedByID", testTwoInterrupts},
		{"GraphInterruptBeforeAndAfter", testInterruptBeforeAndAfter},
		{"GraphInterruptAfterPausesBeforeNextStep", testInterruptAfterPauses},
		{"GraphHistoryReplayAndFork", testHistoryReplayAndFork},
		{"GraphDeltaRows", testDeltaRows},
		{"GraphConcurrentThreads", testConcurrentThreads},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// Checkpoint returns a checkpoint of thread with every stored field set, as
// the engine writes after a step in which a node failed and two paused.
// Store tests outside this package use it for their own cases.
func Checkpoint(thread string, id int64) *statgraph.Checkpoint {
	return &statgraph.Checkpoint{
		Thread:  thread,
		ID:      id,
		Parent:  id - 1,
		Step:    int(id) + 10,
		Source:  "loop",
		Created: time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC),
		State:   fmt.Appendf(nil, `{"s":{"N":%d}}`, id),
		Delta:   true,
		Next:    []string{"a", "b"},
		Pending: []statgraph.PendingWrite{
			{Node: "a", Update: []byte(`{"x":1}`)},
			{Node: "b", Update: []byte{0, 1, 2, 255}},
		},
		Counters: map[string]int{"a": 2, "b": 1},
		Interrupts: []statgraph.Interruption{
			{ID: "i1", Node: "a", When: "inside", Payload: []byte(`"approve?"`)},
			{ID: "i2", Node: "b", When: "before"},
		},
		Resumes: map[string][]byte{"i0": []byte(`true`)},
		Extra:   []byte(`{"gate":3}`),
	}
}

// Same fails t unless got holds what want held when it was stored: times
// compare with time.Equal, an empty collection equals nil, and live values
// (Checkpoint.Value, PendingWrite.Value) are ignored, since stores that
// serialise do not keep them.
func Same(t *testing.T, want, got *statgraph.Checkpoint) {
	t.Helper()
	require.NotNil(t, got)
	assert.True(t, want.Created.Equal(got.Created), "created %v, want %v", got.Created, want.Created)
	assert.Equal(t, comparable(want), comparable(got))
}

// comparable is cp with the differences Same allows taken out.
func comparable(cp *statgraph.Checkpoint) statgraph.Checkpoint {
	c := *cp
	c.Created, c.Value = time.Time{}, nil
	if len(c.Next) == 0 {
		c.Next = nil
	}
	if len(c.Resumes) == 0 {
		c.Resumes = nil
	}
	if len(c.Interrupts) == 0 {
		c.Interrupts = nil
	}
	if len(c.State) == 0 {
		c.State = nil
	}
	if len(c.Extra) == 0 {
		c.Extra = nil
	}
	c.Pending = nil
	for _, p := range cp.Pending {
		c.Pending = append(c.Pending, statgraph.PendingWrite{Node: p.Node, Update: p.Update})
	}
	return c
}

func testRoundTrip(t *testing.T, s statgraph.Checkpointer) {
	ctx := t.Context()
	full := Checkpoint("t", 1)
	require.NoError(t, s.Put(ctx, full))
	got, err := s.Get(ctx, "t", 1)
	require.NoError(t, err)
	Same(t, Checkpoint("t", 1), got)

	// Empty collections and a zero time survive as empty and zero.
	bare := &statgraph.Checkpoint{Thread: "t", ID: 2, Parent: 1, Source: "input",
		Next: []string{}, Counters: map[string]int{}, State: []byte("{}")}
	require.NoError(t, s.Put(ctx, bare))
	got, err = s.Get(ctx, "t", 2)
	require.NoError(t, err)
	assert.True(t, got.Created.IsZero(), "created %v, want the zero time", got.Created)
	// Counters are the exception: empty means "every count is 0", nil
	// "the parent's counts plus one per node in its Next" (Checkpoint).
	Same(t, &statgraph.Checkpoint{Thread: "t", ID: 2, Parent: 1, Source: "input", State: []byte("{}"), Counters: map[string]int{}}, got)
	require.NotNil(t, got.Counters, "empty Counters came back nil, which says to derive them from the parent")
	nilCounters := &statgraph.Checkpoint{Thread: "t", ID: 3, Parent: 2, Source: "loop", State: []byte("{}")}
	require.NoError(t, s.Put(ctx, nilCounters))
	got, err = s.Get(ctx, "t", 3)
	require.NoError(t, err)
	require.Nil(t, got.Counters, "nil Counters came back as a map")

	// Names with quotes, backslashes, control characters and non-ASCII
	// letters are kept as they are.
	odd := Checkpoint(`th"re\ad`+"\n✓", 1)
	odd.Next = []string{`q"`, "tab\t", "ünï"}
	odd.Counters = map[string]int{`q"`: 1, "ünï": 1 << 40}
	require.NoError(t, s.Put(ctx, odd))
	got, err = s.Get(ctx, odd.Thread, 0)
	require.NoError(t, err)
	Same(t, odd, got)
}

func testGet(t *testing.T, s statgraph.Checkpointer) {
	ctx := t.Context()
	for id := int64(1); id <= 3; id++ {
		require.NoError(t, s.Put(ctx, Checkpoint("t", id)))
	}
	require.NoError(t, s.Put(ctx, Checkpoint("other", 9)))
	tests := []struct {
		name    string
		thread  string
		id      int64
		wantID  int64
		wantErr bool
	}{
		{name: "latest", thread: "t", id: 0, wantID: 3},
		{name: "by id", thread: "t", id: 2, wantID: 2},
		{name: "first", thread: "t", id: 1, wantID: 1},
		{name: "latest of other thread", thread: "other", id: 0, wantID: 9},
		{name: "missing id", thread: "t", id: 7, wantErr: true},
		{name: "id of another thread", thread: "t", id: 9, wantErr: true},
		{name: "negative id", thread: "t", id: -1, wantErr: true},
		{name: "missing thread", thread: "nope", id: 0, wantErr: true},
		{name: "missing thread by id", thread: "nope", id: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Get(ctx, tt.thread, tt.id)
			if tt.wantErr {
				require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
				assert.ErrorContains(t, err, fmt.Sprintf("%q", tt.thread), "the error names the thread")
				return
			}
			require.NoError(t, err)
			Same(t, Checkpoint(tt.thread, tt.wantID), got)
		})
	}
}

func testList(t *testing.T, s statgraph.Checkpointer) {
	ctx := t.Context()
	for id := int64(1); id <= 5; id++ {
		require.NoError(t, s.Put(ctx, Checkpoint("t", id)))
		require.NoError(t, s.Put(ctx, Checkpoint("u", id*10)))
	}
	ids := func(cps []*statgraph.Checkpoint) []int64 {
		var out []int64
		for _, cp := range cps {
			assert.Equal(t, "t", cp.Thread)
			out = append(out, cp.ID)
		}
		return out
	}
	tests := []struct {
		limit int
		want  []int64
	}{
		{0, []int64{5, 4, 3, 2, 1}},
		{-1, []int64{5, 4, 3, 2, 1}},
		{1, []int64{5}},
		{2, []int64{5, 4}},
		{5, []int64{5, 4, 3, 2, 1}},
		{50, []int64{5, 4, 3, 2, 1}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("limit=", tt.limit), func(t *testing.T) {
			cps, err := s.Range(ctx, "t", 0, 0, tt.limit)
			require.NoError(t, err)
			assert.Equal(t, tt.want, ids(cps))
		})
	}
	cps, err := s.Range(ctx, "t", 0, 0, 0)
	require.NoError(t, err)
	for _, cp := range cps {
		Same(t, Checkpoint("t", cp.ID), cp)
	}
	cps, err = s.Range(ctx, "nope", 0, 0, 0)
	require.NoError(t, err, "a thread without checkpoints lists nothing, without an error")
	assert.Empty(t, cps)
}

func testDeleteThread(t *testing.T, s statgraph.Checkpointer) {
	ctx := t.Context()
	for id := int64(1); id <= 3; id++ {
		require.NoError(t, s.Put(ctx, Checkpoint("t", id)))
		require.NoError(t, s.Put(ctx, Checkpoint("keep", id)))
	}
	n, err := s.Delete(ctx, "t", 0)
	require.NoError(t, err)
	require.Equal(t, 3, n, "before <= 0 removes the whole thread and counts it")
	_, err = s.Get(ctx, "t", 0)
	require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
	_, err = s.Get(ctx, "t", 2)
	require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
	cps, err := s.Range(ctx, "t", 0, 0, 0)
	require.NoError(t, err)
	assert.Empty(t, cps)
	cps, err = s.Range(ctx, "keep", 0, 0, 0)
	require.NoError(t, err)
	assert.Len(t, cps, 3, "other threads are kept")

	n, err = s.Delete(ctx, "never existed", 0)
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, s.Put(ctx, Checkpoint("t", 1)), "a deleted thread can start again")
	got, err := s.Get(ctx, "t", 0)
	require.NoError(t, err)
	Same(t, Checkpoint("t", 1), got)
}

func testPutDuplicate(t *testing.T, s statgraph.Checkpointer) {
	ctx := t.Context()
	require.NoError(t, s.Put(ctx, Checkpoint("t", 1)))
	second := Checkpoint("t", 1)
	second.State = []byte(`{"s":{"N":"overwritten"}}`)
	err := s.Put(ctx, second)
	require.Error(t, err, "a second checkpoint with an existing id is refused")
	assert.ErrorContains(t, err, `"t"`, "the error names the thread")
	got, err := s.Get(ctx, "t", 1)
	require.NoError(t, err)
	Same(t, Checkpoint("t", 1), got)
}

// testConcurrentWriters has 16 goroutines write 16 threads at once, each
// with a reader alongside, and checks that every checkpoint landed in its
// own thread.
func testConcurrentWriters(t *testing.T, s statgraph.Checkpointer) {
	ctx := t.Context()
	const threads, perThread = 16, 100
	var wg sync.WaitGroup
	errs := make(chan error, threads*2)
	for g := range threads {
		thread := fmt.Sprint("thread-", g)
		wg.Go(func() {
			for id := int64(1); id <= perThread; id++ {
				if err := s.Put(ctx, Checkpoint(thread, id)); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			for range perThread / 10 {
				cps, err := s.Range(ctx, thread, 0, 0, 5)
				if err != nil {
					errs <- err
					return
				}
				for _, cp := range cps {
					if cp.Thread != thread {
						errs <- fmt.Errorf("listing %q returned a checkpoint of %q", thread, cp.Thread)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for g := range threads {
		thread := fmt.Sprint("thread-", g)
		cps, err := s.Range(ctx, thread, 0, 0, 0)
		require.NoError(t, err)
		require.Len(t, cps, perThread)
		for i, cp := range cps {
			Same(t, Checkpoint(thread, int64(perThread-i)), cp)
		}
	}
}

// testConcurrentReadersOfOneThread writes one thread, as the engine does
// (one writer, growing ids), while 8 readers list and get it: a reader
// never sees the thread go back, nor a list out of order.
func testConcurrentReadersOfOneThread(t *testing.T, s statgraph.Checkpointer) {
	ctx := t.Context()
	const n = 200
	require.NoError(t, s.Put(ctx, Checkpoint("one", 1)))
	var wg sync.WaitGroup
	errs := make(chan error, 9)
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for id := int64(2); id <= n; id++ {
			if err := s.Put(ctx, Checkpoint("one", id)); err != nil {
				errs <- err
				return
			}
		}
	})
	for range 8 {
		wg.Go(func() {
			var last int64
			for {
				select {
				case <-done:
					return
				default:
				}
				cp, err := s.Get(ctx, "one", 0)
				if err != nil {
					errs <- err
					return
				}
				if cp.ID < last {
					errs <- fmt.Errorf("latest checkpoint went back from %d to %d", last, cp.ID)
					return
				}
				last = cp.ID
				cps, err := s.Range(ctx, "one", 0, 0, 10)
				if err != nil {
					errs <- err
					return
				}
				if !slices.IsSortedFunc(cps, func(a, b *statgraph.Checkpoint) int { return int(b.ID - a.ID) }) || len(cps) == 0 || cps[0].ID < last {
					errs <- fmt.Errorf("list after latest %d is not newest first from at least it: %v", last, listIDs(cps))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	cps, err := s.Range(ctx, "one", 0, 0, 0)
	require.NoError(t, err)
	require.Len(t, cps, n)
}

func listIDs(cps []*statgraph.Checkpoint) []int64 {
	ids := make([]int64, len(cps))
	for i, cp := range cps {
		ids[i] = cp.ID
	}
	return ids
}
