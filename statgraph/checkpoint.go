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
// and callers must not modify what Get or List return.
type Checkpointer interface {
	// Put stores cp. cp.ID is assigned by the engine and is greater than every
	// earlier ID of the same thread. Put returns only once cp is durable to the
	// degree the implementation documents.
	Put(ctx context.Context, cp *Checkpoint) error
	// Get returns the checkpoint id of thread, or the latest one when id is 0.
	// It returns an error wrapping ErrNoCheckpoint when there is none.
	Get(ctx context.Context, thread string, id int64) (*Checkpoint, error)
	// List returns the checkpoints of thread, newest first. limit <= 0 means all.
	List(ctx context.Context, thread string, limit int) ([]*Checkpoint, error)
	// DeleteThread removes every checkpoint of thread. Deleting a thread that
	// does not exist is not an error.
	DeleteThread(ctx context.Context, thread string) error
}

// Checkpoint sources, recorded in Checkpoint.Source.
const (
	SourceInput  = "input"  // the run's input, before the first step
	SourceLoop   = "loop"   // written after a super-step
	SourceUpdate = "update" // written by UpdateState
	SourceFork   = "fork"   // the first checkpoint of a run replayed from an earlier one
)

// Checkpoint is one saved point of a run: the state after a super-step and
// everything needed to continue from there.
type Checkpoint struct {
	Thread  string    // run key chosen by the caller
	ID      int64     // monotonic within the thread, starting at 1
	Parent  int64     // ID of the checkpoint this one follows; 0 for the first
	Step    int       // super-steps completed when this checkpoint was written
	Source  string    // SourceInput, SourceLoop, SourceUpdate or SourceFork
	Created time.Time // when the engine wrote it

	// State is the encoded state (see Codec). When Delta is true it is a
	// delta against the state of Parent, produced by a DeltaCodec; the engine
	// writes a full state at least every FullEvery checkpoints so that a load
	// reads a bounded number of rows.
	State []byte
	Delta bool
	// Value is the live state value, set only for checkpointers that keep
	// values in memory instead of bytes (see MemoryCheckpointer). Stores that
	// serialise must ignore it.
	Value any

	// Next is the frontier: the nodes to run in the next super-step, sorted.
	Next []string
	// Pending holds the updates of nodes that finished in a step where a
	// sibling failed, so that a resume does not run them again.
	Pending []PendingWrite
	// Counters holds per-node execution counts, so that counts survive a
	// resume. To keep a step's checkpoint small the engine writes them only
	// on some checkpoints (at least every FullEvery); when nil they are the
	// parent's counters plus one for each node in the parent's Next.
	Counters map[string]int
	// Interrupts are the pauses waiting for a Resume; Resumes the values given
	// to them, by interrupt ID, not yet consumed.
	Interrupts []PendingInterrupt
	Resumes    map[string][]byte
	// Extra is engine bookkeeping (gate counters, attempt history, warnings)
	// encoded as JSON; like State it may be an increment against Parent's.
	// Stores keep it as opaque bytes.
	Extra []byte
}

// PendingWrite is the update of a node that completed in a step that did not
// complete as a whole.
type PendingWrite struct {
	Node   string
	Update []byte // the node's update, encoded with the graph's Codec
	Value  any    // the live update, for value-keeping checkpointers only
}

// PendingInterrupt is a pause raised by a node (Interrupt) or by
// InterruptBefore/InterruptAfter, waiting for Resume.
type PendingInterrupt struct {
	ID      string // unique within the thread; Resume addresses it by this
	Node    string
	When    string // "before", "after" or "inside"
	Payload []byte // JSON of the value given to Interrupt
}

// Codec turns states (and node updates) into bytes for checkpoints and back.
// The default is JSONCodec. Implementations must be safe for concurrent use.
type Codec[S any] interface {
	Marshal(s S) ([]byte, error)
	Unmarshal(data []byte) (S, error)
}

// DeltaCodec is a Codec that can also encode a state as a change against an
// earlier one, so that a checkpoint's size follows what changed in a step and
// not the size of the whole state. The engine uses it when the graph's codec
// implements it.
type DeltaCodec[S any] interface {
	Codec[S]
	// MarshalDelta encodes cur relative to prev. ok is false when no delta
	// is possible; the engine then stores cur in full.
	MarshalDelta(prev, cur S) (delta []byte, ok bool, err error)
	// ApplyDelta rebuilds the state that MarshalDelta(prev, cur) encoded.
	ApplyDelta(prev S, delta []byte) (S, error)
}

// FullEvery bounds the run of delta-encoded checkpoints between two full
// states, and so the rows a load reads. Within it the engine writes a full
// state again once the deltas since the last one add up to its size, so
// that the cost of the full writes, spread over the steps, stays in
// proportion to what the steps changed.
const FullEvery = 256
