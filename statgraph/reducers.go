package statgraph

import (
	"runtime"
	"sync"
	"unsafe"
	"weak"
)

// Append returns cur followed by update: the reducer of a list every node
// adds to. It never changes an element that cur or any other list holds,
// and the list it returns has no spare capacity, so a node that appends to
// it with the built-in append gets a copy: parallel branches, callers and
// saved checkpoints (NewMemoryCheckpointer(false) keeps values) keep their own view.
//
// Merging a fan-out costs time linear in the total length: from
// appendInPlace elements on, Append allocates room to grow and remembers,
// per backing array, how much of it lists already hold. Appending to the
// longest list of an array fills its room; appending to any other (an
// older state a checkpoint kept, a list a caller passed twice) copies. It is
// safe for concurrent use.
func Append[T any](cur, update []T) []T {
	if len(update) == 0 {
		return cur
	}
	n := len(cur) + len(update)
	if len(cur) >= appendInPlace && unsafe.Sizeof(cur[0]) > 0 {
		if out, ok := claim(cur, n); ok {
			copy(out[len(cur):], update)
			return out
		}
	}
	c := n
	if n >= appendInPlace {
		c = 2 * n
	}
	out := make([]T, n, c)
	copy(out, cur)
	copy(out[len(cur):], update)
	if c > n && unsafe.Sizeof(out[0]) > 0 {
		remember(out)
	}
	return out[:n:n]
}

// appendInPlace is the length from which Append grows a list in its
// array's spare room instead of copying it: below it a copy is as cheap as
// the bookkeeping.
const appendInPlace = 64

// rooms records, per backing array that Append allocated with spare room,
// its capacity and the length of the longest list handed out so far (the
// part of the array that lists may hold), keyed by the array's address.
// An entry holds a weak pointer to its array, so it never keeps the array
// alive, a cleanup removes it once the array is collected, and an array
// allocated later at the same address is told apart (the old weak pointer
// is nil by then).
var rooms = struct {
	mu sync.Mutex
	m  map[uintptr]room
}{m: make(map[uintptr]room)}

type room struct {
	array     any // weak.Pointer[T] to the array's first element
	used, cap int
}

// remember records out (len(out) elements used out of cap(out)).
func remember[T any](out []T) {
	p := unsafe.SliceData(out)
	addr, wp := uintptr(unsafe.Pointer(p)), weak.Make(p)
	rooms.mu.Lock()
	rooms.m[addr] = room{wp, len(out), cap(out)}
	rooms.mu.Unlock()
	runtime.AddCleanup(p, func(wp weak.Pointer[T]) {
		rooms.mu.Lock()
		if r, ok := rooms.m[addr]; ok && r.array == any(wp) {
			delete(rooms.m, addr)
		}
		rooms.mu.Unlock()
	}, wp)
}

// claim returns cur extended to n elements in its array's spare room, if
// cur is the longest list of an array Append allocated and the room is
// big enough; the room it returns is then claimed, and no other list may
// claim it again.
func claim[T any](cur []T, n int) ([]T, bool) {
	p := unsafe.SliceData(cur)
	rooms.mu.Lock()
	r, ok := rooms.m[uintptr(unsafe.Pointer(p))]
	if ok {
		wp, _ := r.array.(weak.Pointer[T])
		ok = wp.Value() == p && r.used == len(cur) && n <= r.cap
	}
	if ok {
		r.used = n
		rooms.m[uintptr(unsafe.Pointer(p))] = r
	}
	rooms.mu.Unlock()
	if !ok {
		return nil, false
	}
	return unsafe.Slice(p, n), true
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
