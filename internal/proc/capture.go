package proc

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// CapBuffer keeps the first and last bytes written to it within a fixed
// budget: a head buffer that fills first and a ring holding the most recent
// bytes after it. Memory stays at max bytes however much is written. It is
// not safe for concurrent use: a runner (verifier.Run, RunGit) writes to
// it from one goroutine and reads it after that goroutine ends.
type CapBuffer struct {
	max   int
	head  []byte
	ring  []byte // allocated on the first byte that does not fit in head
	pos   int    // next write position in ring
	full  bool   // ring has wrapped at least once
	total int64
}

// NewCapBuffer returns a CapBuffer keeping at most max bytes (at least 2).
func NewCapBuffer(max int) *CapBuffer {
	if max < 2 {
		max = 2
	}
	return &CapBuffer{max: max}
}

// Write records p; it never fails.
func (b *CapBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.total += int64(n)
	headMax := b.max / 2
	if len(b.head) < headMax {
		k := min(headMax-len(b.head), len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if b.ring == nil {
		b.ring = make([]byte, b.max-headMax)
	}
	if len(p) >= len(b.ring) {
		copy(b.ring, p[len(p)-len(b.ring):])
		b.pos, b.full = 0, true
		return n, nil
	}
	k := copy(b.ring[b.pos:], p)
	if k < len(p) {
		copy(b.ring, p[k:])
		b.full = true
	}
	b.pos = (b.pos + len(p)) % len(b.ring)
	if b.pos == 0 {
		b.full = true
	}
	return n, nil
}

// tail returns the bytes held in the ring, oldest first.
func (b *CapBuffer) tail() []byte {
	if !b.full {
		return b.ring[:b.pos]
	}
	out := make([]byte, 0, len(b.ring))
	out = append(out, b.ring[b.pos:]...)
	return append(out, b.ring[:b.pos]...)
}

// Dropped returns how many written bytes String leaves out.
func (b *CapBuffer) Dropped() int64 {
	kept := int64(len(b.head) + len(b.tail()))
	if kept == b.total {
		return 0
	}
	h, t := TrimAtLines(b.head, b.tail())
	return b.total - int64(len(h)+len(t))
}

// String returns everything written when it fit, otherwise the head cut
// after its last full line, a marker saying how many bytes were dropped, and
// the tail starting at its first full line.
func (b *CapBuffer) String() string {
	t := b.tail()
	if int64(len(b.head)+len(t)) == b.total {
		return string(b.head) + string(t)
	}
	h, t := TrimAtLines(b.head, t)
	return string(h) + DropMarker(b.total-int64(len(h)+len(t))) + string(t)
}

// DropMarker is the line CapBuffer.String puts where n bytes were left out.
func DropMarker(n int64) string {
	return fmt.Sprintf("\n[... %d bytes of output dropped ...]\n", n)
}

// TrimAtLines cuts head after its last newline and tail after its first
// newline, so that neither shows a partial line; when that would lose more
// than half of a part, it is cut at a rune boundary instead.
func TrimAtLines(head, tail []byte) ([]byte, []byte) {
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	} else {
		head = DropPartialRune(head)
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	} else {
		for k := 0; k < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); k++ {
			tail = tail[1:]
		}
	}
	return head, tail
}

// DropPartialRune removes an incomplete UTF-8 sequence from the end of b.
func DropPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}
