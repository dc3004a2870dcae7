package gate

// This file keeps the attempt context: the log of the attempts each gate
// weighed, which the node a gate retries reads through State.Attempts.

import "slices"

// DefaultKeepTries is Config.KeepTries when zero.
const DefaultKeepTries = 10

// Attempt is one attempt a gate weighed, as its log in State keeps it.
type Attempt struct {
	Gate string `json:"gate"`
	// Try is the attempt's number in its retry context, 1 for the first.
	Try int `json:"try"`
	// Total is its number over the run, across retry contexts.
	Total    int      `json:"total"`
	Decision Decision `json:"decision"`
	// Output is what the attempt produced, as the gate's output function
	// (Gates.WithOutput) recorded it from the state the gate weighed; ""
	// without one. Record a key (a commit id, a file name) rather than a
	// large value: the log is saved with every checkpoint.
	Output   string    `json:"output,omitempty"`
	Verdicts []Verdict `json:"verdicts,omitempty"` // every verdict the gate weighed
	// Feedback is what the gate sent back with the retry (or the failure)
	// that followed this attempt; "" when it passed.
	Feedback string `json:"feedback,omitempty"`
}

// Failed returns the number of blocking verdicts of a that failed, a
// score for choosing the best of several attempts.
func (a Attempt) Failed() int {
	n := 0
	for _, v := range a.Verdicts {
		if !v.Passed && v.Mode.For(v.Severity) == Blocking {
			n++
		}
	}
	return n
}

// Attempts is the attempt context of a gate, for the node it retries
// (see State.Attempts).
type Attempts struct {
	// Try is the number of the attempt now running in the gate's retry
	// context: 1 on the first run and after a pass or a reset.
	Try int
	// Tries are the earlier attempts of this retry context, oldest first:
	// what each produced, its verdicts and the feedback that sent it back.
	// Only the kept ones (Config.KeepTries): with a small cap, Tries can
	// hold fewer than Try-1.
	Tries []Attempt
	// All are the kept attempts of every retry context of the run, oldest
	// first, for choosing the best of N.
	All []Attempt
	// Hint is the feedback of the retry that caused this run; "" on a first
	// attempt.
	Hint string
}

// Attempts returns gate's attempt context, for the node the gate retries
// (e.g. s.Gate.Attempts("review") in the coder). All is a new slice and
// Tries a part of it, but each Attempt's Verdicts are shared with st: read
// them, do not write into them. It only reads st: safe to call from
// parallel nodes.
func (st *State) Attempts(gate string) Attempts {
	var a Attempts
	for _, t := range st.Tries {
		if t.Gate == gate {
			a.All = append(a.All, t)
		}
	}
	n := st.Attempt(gate)
	a.Try = n + 1
	a.Tries = slices.Clip(a.All[max(0, len(a.All)-n):])
	if o, ok := st.Outcome(gate); ok && (o.Decision == Retry || o.Decision == Reset) {
		a.Hint = o.Feedback
	}
	return a
}

// logTry returns log with a appended, dropping the oldest attempt of a's
// gate when it already holds keep of them. It copies log once (log may be
// shared with earlier states, which must not change); a keep below 1
// leaves log as it is.
func logTry(log []Attempt, a Attempt, keep int) []Attempt {
	if keep < 1 {
		return log
	}
	n, oldest := 0, -1
	for i, t := range log {
		if t.Gate == a.Gate {
			if oldest < 0 {
				oldest = i
			}
			n++
		}
	}
	out := make([]Attempt, 0, len(log)+1)
	for i, t := range log {
		if i != oldest || n < keep {
			out = append(out, t)
		}
	}
	return append(out, a)
}

// keepTries resolves Config.KeepTries.
func keepTries(n int) int {
	if n == 0 {
		return DefaultKeepTries
	}
	return n
}
