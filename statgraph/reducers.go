package statgraph

import "cmp"

// Append returns cur followed by update: the reducer of a list every node
// adds to. It never modifies cur's backing array, so parallel branches and
// saved checkpoints keep their own view.
func Append[T any](cur, update []T) []T {
	if len(update) == 0 {
		return cur
	}
	out := make([]T, 0, len(cur)+len(update))
	return append(append(out, cur...), update...)
}

// Last returns update unless it is the zero value, in which case cur is
// kept: the reducer of a field that the latest writer owns.
func Last[T comparable](cur, update T) T {
	var zero T
	if update == zero {
		return cur
	}
	return update
}

// Max returns the larger of cur and update.
func Max[T cmp.Ordered](cur, update T) T { return max(cur, update) }
