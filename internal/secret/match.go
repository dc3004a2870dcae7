package secret

import (
	"slices"
)

// patterns is an immutable set of strings to replace, indexed so that one
// pass over a text finds every occurrence of all of them: the cost of a
// search grows with the text, not with the number of secrets.
//
// Each pattern is filed under its first w bytes (w is 8, or the length of
// the shortest pattern when that is less), packed into a uint64. At each
// offset the search packs the next w bytes, tests one bit of a filter
// indexed by a hash of them, and only on a hit looks the patterns with
// that head up and compares them. With a few thousand patterns the filter
// is sparse enough that ordinary text almost never hits it.
//
// Designs turned down: one substring search per pattern (the old code)
// costs a pass per form, about a dozen per secret; Aho–Corasick with a
// full transition table needs 256 entries per state, hundreds of MB for a
// thousand secrets, and its sparse form is slower per byte than this
// filter on text that holds no secret, which is nearly all text.
type patterns struct {
	list []string // every pattern, longest first
	min  int      // length of the shortest pattern
	max  int      // length of the longest pattern
	w    int      // bytes of a head: min(8, min)
	// filter has the bit filterBit(head) set for the head of every pattern.
	filter []uint64
	// heads maps a head to the patterns that start with it, longest first.
	heads map[uint64][]string
}

// filterLog is log2 of the filter's size in bits (128 KiB).
const filterLog = 20

// newPatterns indexes list (no duplicates, none empty).
func newPatterns(list []string) *patterns {
	list = slices.Clone(list)
	// Longest first, so the first pattern found at an offset is the longest.
	slices.SortStableFunc(list, func(a, b string) int { return len(b) - len(a) })
	p := &patterns{list: list, min: len(list[len(list)-1]), max: len(list[0]), filter: make([]uint64, 1<<filterLog/64), heads: map[uint64][]string{}}
	p.w = min(8, p.min)
	for _, f := range list {
		h := head(f, 0, p.w)
		p.heads[h] = append(p.heads[h], f)
		b := filterBit(h)
		p.filter[b/64] |= 1 << (b % 64)
	}
	return p
}

// head packs the w bytes of s at i (i+w <= len(s)) into a uint64.
func head[T ~string | ~[]byte](s T, i, w int) uint64 {
	if w == 8 {
		_ = s[i+7]
		return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
	}
	var h uint64
	for j := range w {
		h |= uint64(s[i+j]) << (8 * j)
	}
	return h
}

// filterBit hashes a head to a bit of the filter (Fibonacci hashing).
func filterBit(h uint64) uint64 { return (h * 0x9E3779B97F4A7C15) >> (64 - filterLog) }

// spans returns the spans of s that occurrences of the patterns cover, in
// order, overlapping occurrences merged into one span.
func spans[T ~string | ~[]byte](p *patterns, s T) [][2]int {
	var out [][2]int
	each(p, s, func(start, end int) bool {
		if n := len(out); n > 0 && start < out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], end)
		} else {
			out = append(out, [2]int{start, end})
		}
		return true
	})
	return out
}

// each calls yield with the start and end of the longest pattern found at
// each offset of s that has one, in order of offset, until yield returns
// false.
func each[T ~string | ~[]byte](p *patterns, s T, yield func(start, end int) bool) {
	for i, last := 0, len(s)-p.min; i <= last; i++ {
		h := head(s, i, p.w)
		if b := filterBit(h); p.filter[b/64]&(1<<(b%64)) == 0 {
			continue
		}
		for _, f := range p.heads[h] {
			if len(s)-i >= len(f) && string(s[i:i+len(f)]) == f {
				if !yield(i, i+len(f)) {
					return
				}
				break
			}
		}
	}
}

// replace returns s with every span the patterns cover replaced by Marker.
func (p *patterns) replace(s string) string { return replaceSpans(s, spans(p, s)) }

// contains reports whether s holds a pattern.
func (p *patterns) contains(s []byte) bool {
	found := false
	each(p, s, func(int, int) bool {
		found = true
		return false
	})
	return found
}
