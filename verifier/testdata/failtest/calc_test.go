package calc

import "testing"

func TestAdd(t *testing.T) {
	t.Log("checking Add")
	if got := Add(1, 2); got != 3 {
		t.Errorf("Add(1, 2) = %d; want 3", got)
	}
}

func TestZero(t *testing.T) {
	if got := Add(0, 0); got != 0 {
		t.Errorf("Add(0, 0) = %d; want 0", got)
	}
}

func TestTable(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{{1, 1, 2}, {0, 0, 0}} {
		t.Run("sum", func(t *testing.T) {
			if got := Add(tc.a, tc.b); got != tc.want {
				t.Errorf("Add(%d, %d) = %d; want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestPanic(t *testing.T) {
	var m map[string]int
	m["boom"] = 1
}
