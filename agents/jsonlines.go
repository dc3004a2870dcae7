package agents

import "bytes"

// Bounds of a jsonLines collector.
const (
	jsonLineMax  = 1 << 20  // longer lines are dropped (whole transcripts, file contents)
	jsonLinesMax = 16 << 20 // total kept; later lines are dropped once it is reached
)

// jsonLines is an io.Writer that keeps the complete lines of a stream that
// start with '{' or '[' (JSON Lines, or a JSON document on one line), and
// every line of a pretty-printed document: from a line that is only "{" or
// "[" to one that is only "}" or "]" (gemini-cli prints its result so), so
// an agent's token usage can be read from all of its output, not only the
// head and tail the runner keeps. Lines longer than jsonLineMax are
// dropped, and so is everything past jsonLinesMax in total. It is not safe
// for concurrent use; the runner's Tee writes from one goroutine.
type jsonLines struct {
	kept     bytes.Buffer
	cur      []byte
	skipping bool // the current line is too long or not JSON
	block    bool // inside a pretty-printed document
}

// Write never fails.
func (j *jsonLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !j.skipping {
			if len(j.cur) == 0 && !j.block {
				trimmed := bytes.TrimLeft(part, " \t\r")
				j.skipping = len(trimmed) > 0 && trimmed[0] != '{' && trimmed[0] != '['
			}
			if len(j.cur)+len(part) > jsonLineMax {
				j.skipping, j.cur = true, j.cur[:0]
			} else if !j.skipping {
				j.cur = append(j.cur, part...)
			}
		}
		if i < 0 {
			break
		}
		if !j.skipping && len(bytes.TrimSpace(j.cur)) > 0 && j.kept.Len()+len(j.cur) < jsonLinesMax {
			j.kept.Write(j.cur)
			j.kept.WriteByte('\n')
		}
		switch line := string(bytes.TrimRight(j.cur, " \t\r")); {
		case line == "{" || line == "[":
			j.block = true
		case line == "}" || line == "]":
			j.block = false
		}
		j.cur, j.skipping = j.cur[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// String returns the kept lines, and the last line if it is unfinished.
func (j *jsonLines) String() string {
	if !j.skipping && len(bytes.TrimSpace(j.cur)) > 0 {
		return j.kept.String() + string(j.cur) + "\n"
	}
	return j.kept.String()
}
