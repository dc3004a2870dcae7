package secret

import (
	"bytes"
	"io"
)

// Set is the set of secrets being scrubbed at one moment, fixed: values
// registered later are not in it. Two passes over the same bytes through
// one Set give the same output, which a caller that must know the
// scrubbed size before it writes (a git blob's header) relies on. The zero
// Set scrubs nothing. A Set is safe for concurrent use.
type Set struct{ p *patterns }

// Current returns the secrets being scrubbed now.
func Current() Set { return Set{forms.Load()} }

// Stream scrubs what is written through it as [Scrub] would scrub it all
// at once, holding a bounded amount of it (a few MiB) whatever the total,
// and writes the result to its destination. A form that straddles two
// Writes is found: Stream holds back enough of each Write to see it whole.
// Close writes what is held; nothing reaches the destination complete
// before it. A Stream is not safe for concurrent use.
//
// Stream cuts the text into segments it scrubs one at a time, each cut at
// a line start where no form and no block of wrapped encoded lines
// straddles the cut, so its output equals Scrub's on the whole. Where no
// such cut exists within streamMax bytes (a run of encoded lines longer
// than that, or a long stretch without a line break) it cuts where no form
// straddles the cut, counting forms wrapped over lines too, so every form
// is still replaced; only the layout of such a run may differ from
// Scrub's (Scrub joins a wrapped run that holds a secret into one line).
type Stream struct {
	p        *patterns
	w        io.Writer
	buf      []byte // written, not yet scrubbed
	next     int    // len(buf) at which to try a cut again
	scrubbed bool
	err      error
}

// The sizes Stream works in: it tries to cut every streamChunk bytes,
// looking back at most streamChunk bytes for a cut at a line start, and
// cuts wherever it safely can once it holds streamMax bytes.
const (
	streamChunk = 1 << 20
	streamMax   = 8 << 20
)

// NewStream returns a Stream scrubbing with s's secrets into w.
func (s Set) NewStream(w io.Writer) *Stream {
	return &Stream{p: s.p, w: w, next: 2 * streamChunk}
}

// Write scrubs and writes what it can of b and holds the rest. It returns
// len(b) unless the destination failed, whose error it then returns (and
// returns again on every later call).
func (z *Stream) Write(b []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if z.p == nil {
		if _, err := z.w.Write(b); err != nil {
			z.err = err
			return 0, err
		}
		return len(b), nil
	}
	n := len(b)
	for len(b) > 0 {
		k := min(len(b), streamChunk)
		z.buf = append(z.buf, b[:k]...)
		b = b[k:]
		for len(z.buf) >= z.next {
			c := z.cut()
			if c == 0 {
				z.next = len(z.buf) + streamChunk
				break
			}
			if err := z.emit(c); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// Close scrubs and writes what Write held. It does not close the
// destination.
func (z *Stream) Close() error {
	if z.err != nil || len(z.buf) == 0 {
		return z.err
	}
	return z.emit(len(z.buf))
}

// Scrubbed reports whether anything written so far was replaced.
func (z *Stream) Scrubbed() bool { return z.scrubbed }

// emit scrubs and writes buf[:c] and keeps the rest.
func (z *Stream) emit(c int) error {
	seg := string(z.buf[:c])
	out := scrubWith(z.p, seg)
	if out != seg {
		z.scrubbed = true
	}
	if _, err := io.WriteString(z.w, out); err != nil {
		z.err = err
		return err
	}
	z.buf = z.buf[:copy(z.buf, z.buf[c:])]
	z.next = len(z.buf) + streamChunk
	return nil
}

// cut returns where buf can be cut, 0 when nowhere yet. It prefers the
// last line start at which the segments scrub as the whole would.
func (z *Stream) cut() int {
	hold := z.p.max - 1
	end := len(z.buf) - hold
	lo := max(0, end-streamChunk)
	for c := end; c > lo; {
		nl := bytes.LastIndexByte(z.buf[lo:c], '\n')
		if nl < 0 {
			break
		}
		nl += lo
		c = nl
		if z.lineStartSafe(nl+1, hold) {
			return nl + 1
		}
	}
	if len(z.buf) < streamMax {
		return 0
	}
	for c := end; c > lo; c-- {
		if !z.straddled(c, hold) {
			return c
		}
	}
	return end
}

// lineStartSafe reports whether cutting buf at the line start c splits
// neither a form nor a run of wrapped encoded lines (see wrappedRuns),
// which joins only lines made of encoding characters.
func (z *Stream) lineStartSafe(c, hold int) bool {
	before := z.buf[:c-1]
	before = before[bytes.LastIndexByte(before, '\n')+1:]
	after := z.buf[c:]
	nl := bytes.IndexByte(after, '\n')
	if encodedLine(before) && (nl < 0 || encodedLine(after[:nl])) {
		return false
	}
	return !crosses(z.p, z.buf[max(0, c-hold):min(len(z.buf), c+hold)], min(c, hold))
}

// straddled reports whether a form, as it is or with the line breaks
// around c removed, covers the bytes on both sides of c.
func (z *Stream) straddled(c, hold int) bool {
	if crosses(z.p, z.buf[max(0, c-hold):min(len(z.buf), c+hold)], min(c, hold)) {
		return true
	}
	var left, right []byte
	for i := c - 1; i >= 0 && len(left) < hold; i-- {
		if b := z.buf[i]; b != '\n' && b != '\r' {
			left = append(left, b)
		}
	}
	for i := c; i < len(z.buf) && len(right) < hold; i++ {
		if b := z.buf[i]; b != '\n' && b != '\r' {
			right = append(right, b)
		}
	}
	for i, j := 0, len(left)-1; i < j; i, j = i+1, j-1 {
		left[i], left[j] = left[j], left[i]
	}
	return crosses(z.p, append(left, right...), len(left))
}

// crosses reports whether a form in window starts before at and ends after
// it.
func crosses(p *patterns, window []byte, at int) bool {
	found := false
	each(p, window[:min(len(window), at+p.max-1)], func(start, end int) bool {
		found = start < at && end > at
		return !found && start < at
	})
	return found
}

// encodedLine reports whether line (its \r dropped) is a non-empty line of
// encoding characters only, a line wrappedRuns may join to the next.
func encodedLine(line []byte) bool {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 {
		return false
	}
	for _, c := range line {
		if !encodingChar(c) {
			return false
		}
	}
	return true
}
