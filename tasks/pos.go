package tasks

import (
	"bytes"
	"sort"
)

// Position is a place in a tasks file: Line and Col are 1-based, and Col
// counts bytes from the start of the line (as the Go compiler does), so a
// tab or a multi-byte character counts as its UTF-8 length. A UTF-8 byte
// order mark at the start of the file is not counted.
type Position struct {
	Line, Col int
}

// lineIndex converts byte offsets into positions.
type lineIndex struct {
	starts []int // byte offset where each line starts; starts[0] == 0
}

func newLineIndex(data []byte) *lineIndex {
	starts := make([]int, 1, 64)
	for off := 0; ; {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		starts = append(starts, off)
	}
	return &lineIndex{starts: starts}
}

// pos returns the position of byte offset off; offsets below zero (values
// added by statgraph, not read from the file) map to 1:1.
func (l *lineIndex) pos(off int) Position {
	if off < 0 {
		return Position{1, 1}
	}
	line := sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > off }) - 1
	return Position{Line: line + 1, Col: off - l.starts[line] + 1}
}
