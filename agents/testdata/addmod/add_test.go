package addmod

import "testing"

// TestAdd fails once per operand while Add is wrong, so its output is long
// enough for the feedback cap to matter.
func TestAdd(t *testing.T) {
	for i := range 200 {
		if got := Add(i, 2); got != i+2 {
			t.Errorf("Add(%d, 2) = %d; want %d", i, got, i+2)
		}
	}
}
