package statgraph

import (
	"context"
	"time"
)

// Checkpointer stores the checkpoints of runs, keyed by thread id. The engine
// writes one checkpoint after every super-step, before the next step starts,
// and reads them back to resume a thread, list its history or fork it.
//
// Implementations must be safe for concurrent use by many goroutines and many
// threads. A checkpoint is immutable once Put returns: implementations may keep
// the pointer (the engine never modifies a checkpoint after handing it over)
// and callers must not modify what Get or Range return.
type Checkpointer interface {
	// Put stores cp. cp.ID is assigned by the engine and is greater than every
	// earlier ID of the same thread. Put returns only once cp is durable to the
	// degree the implementation documents.
	Put(ctx context.Context, cp *Checkpoint) error
	// Get returns the checkpoint id of thread, or the latest one when id is 0.
	// It returns an error wrapping ErrNoCheckpoint when there is none.
	Get(ctx context.Context, thread string, id int64) (*Checkpoint, error)
	// Range returns the checkpoints of thread whose IDs are in [from, to],
	// newest first; to <= 0 means no upper bound, so Range(ctx, thread, 0,
	// 0, 0) lists the whole thread. With limit > 0 it returns only the
	// newest limit of them. A range without checkpoints (or a
	// thread without any) gives an empty list and no error. The engine
	// reads a delta chain (from a checkpoint's Base to it) and a page of
	// History with one Range each, so stores should answer it with one
	// range scan.
	Range(ctx context.Context, thread string, from, to int64, limit int) ([]*Checkpoint, error)
	// Delete removes the checkpoints of thread whose IDs are below before,
	// or every checkpoint of thread when before <= 0, in one atomic step,
	// and returns how many it removed. Deleting from a thread that does not
	// exist removes nothing and is not an error. checkpoint.Prune (package
	// statgraph/checkpoint) calls it with a positive before, only once
	// every checkpoint it keeps can be loaded without the removed ones.
	Delete(ctx context.Context, thread string, before int64) (int, error)
	// PutWrites appends writes to the Pending of checkpoint id of thread,
	// so that Get and Range return them with it. The engine calls it
	// from the goroutine of each task of a step with two or more tasks, as
	// soon as the task finishes, against the checkpoint the step started
	// from: implementations must be safe for concurrent use and durable to
	// the degree Put is. A checkpoint that does not exist is an error
	// wrapping ErrNoCheckpoint.
	PutWrites(ctx context.Context, thread string, id int64, writes []PendingWrite) error
}

// Checkpoint sources, recorded in Checkpoint.Source and Snapshot.Source;
// the values are LangGraph's checkpoint metadata "source".
const (
	sourceInput  = "input"  // the run's input, before the first step
	sourceLoop   = "loop"   // written after a super-step
	sourceUpdate = "update" // written by UpdateState
	sourceFork   = "fork"   // the first checkpoint of a run replayed from an earlier one
)

// Checkpoint is one saved point of a run: the state after a super-step and
// everything needed to continue from there.
type Checkpoint struct {
	Thread string // run key chosen by the caller
	ID     int64  // monotonic within the thread, starting at 1
	Parent int64  // ID of the checkpoint this one follows; 0 for the first
	Step   int    // super-steps completed when this checkpoint was written
	// Source says what wrote the checkpoint, as LangGraph's metadata
	// "source": "input" (the run's input, before the first step), "loop"
	// (after a super-step), "update" (UpdateState) or "fork" (the first
	// checkpoint of a run replayed from an earlier one, see FromCheckpoint).
	Source  string
	Created time.Time // when the engine wrote it

	// Base is the oldest checkpoint that loading this one reads: the chains
	// of deltas and increments behind State, Counters and Extra all start at
	// or after it (Base == ID when this checkpoint holds everything in
	// full). Stores must keep it. 0 means unknown (a checkpoint written by
	// an older statgraph): loads then follow Parent one Get at a time.
	Base int64

	// State is the encoded state (see Codec). When Delta is true it is a
	// delta against the state of Parent, produced by a deltaCodec; the engine
	// writes a full state again once the deltas since the last one add up
	// to its size, so a load reads O(state size) bytes (see Base).
	State []byte
	Delta bool
	// Value is the live state value, set only for checkpointers that keep
	// values in memory instead of bytes (see NewMemoryCheckpointer). Stores that
	// serialise must ignore it.
	Value any

	// Next is the frontier: the nodes to run in the next super-step, sorted.
	Next []string
	// Pending holds the updates of nodes that finished in a step where a
	// sibling failed, so that a resume does not run them again; in a step
	// with two or more tasks, each task's update is also appended to the
	// step's starting checkpoint as the task finishes (PutWrites), so that
	// a crash mid-step loses only the unfinished tasks.
	Pending []PendingWrite
	// Counters holds per-node execution counts on the thread, so that
	// counts survive a resume; a new run, a replay and a fork go on from
	// the thread's latest counts. To keep a step's checkpoint small the engine writes them only
	// on some checkpoints (with every full state, and at least every 256
	// checkpoints); when nil they are the parent's counters plus one for
	// each node in the parent's Next.
	Counters map[string]int
	// Interrupts are the pauses waiting for WithResume; Resumes the values given
	// to them, by interrupt ID, not yet consumed.
	Interrupts []Interruption
	Resumes    map[string][]byte
	// Extra is opaque bytes that stores keep. The engine writes none today;
	// before gates moved to package statgraph/gate it held their state, and
	// stores keep the column so that such rows still load.
	Extra []byte
}

// PendingWrite is the update of a node that completed in a step that did not
// complete as a whole.
type PendingWrite struct {
	Node   string
	Update []byte // the node's update, encoded with the graph's Codec
	Value  any    // the live update, for value-keeping checkpointers only
}

// Codec turns states (and node updates) into bytes for checkpoints and back;
// Builder.SetCodec sets it. Implementations must be safe for concurrent use.
//
// The default codec encodes states with encoding/json, and a state that is
// a struct (or a pointer to one) also as a delta against the previous
// checkpoint's: unchanged fields are left out and a slice field that grew
// by appending stores only its new elements, so that a checkpoint's size
// follows what a step changed rather than the size of the whole state.
// Fields are compared as values, so a change written in place into memory
// that the previous state shares (an element of a slice within its length,
// a map entry, the target of a pointer) is invisible to the delta: nodes
// must treat the state they receive as immutable and return new slices and
// maps for anything they change other than by appending (parallel nodes of
// one step share that memory too, so in-place writes would also be data
// races). The state is stored in full when S is not a struct or pointer to
// struct, when S or *S implements json.Marshaler, json.Unmarshaler,
// encoding.TextMarshaler or encoding.TextUnmarshaler, when the struct has
// embedded fields, or when a pointer state is nil; and periodically anyway,
// which also bounds the chain of deltas a load reads. Loading, like
// encoding/json, ignores fields that S does not have (or no longer has), so
// checkpoints written before a field was removed still load.
type Codec[S any] interface {
	Marshal(s S) ([]byte, error)
	Unmarshal(data []byte) (S, error)
}

// deltaCodec is a Codec that can also encode a state as a change against an
// earlier one, so that a checkpoint's size follows what changed in a step and
// not the size of the whole state. The engine uses it when the graph's codec
// implements it, as the default codec does.
type deltaCodec[S any] interface {
	Codec[S]
	// MarshalDelta encodes cur relative to prev. ok is false when no delta
	// is possible; the engine then stores cur in full.
	MarshalDelta(prev, cur S) (delta []byte, ok bool, err error)
	// ApplyDelta rebuilds the state that MarshalDelta(prev, cur) encoded.
	ApplyDelta(prev S, delta []byte) (S, error)
}

// countersEvery bounds the run of checkpoints without Counters.
const countersEvery = 256

// rowOverhead is what the engine counts for one stored checkpoint besides
// its state, when it decides that the deltas since the
// last full state add up to its size: so a run of tiny deltas is also
// bounded, and reading a chain costs O(state size) however small they are.
const rowOverhead = 64
