package tasks

import "bytes"

// render.go writes a tree back as JSON. Layout follows claude-task-master's
// JSON.stringify(data, null, 2): one member or element per line, indented by
// the unit the original file used (two spaces when it cannot be told), empty
// arrays and objects as [] and {}. Scalars are written with their original
// text, so untouched values keep their exact spelling.

// render appends the JSON text of n to buf.
func render(buf *bytes.Buffer, n *node, indent string, depth int) {
	switch n.kind {
	case kindObject:
		if len(n.members) == 0 {
			buf.WriteString("{}")
			return
		}
		buf.WriteString("{\n")
		for i, m := range n.members {
			writeIndent(buf, indent, depth+1)
			buf.Write(m.keyRaw)
			buf.WriteString(": ")
			render(buf, m.val, indent, depth+1)
			if i < len(n.members)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		writeIndent(buf, indent, depth)
		buf.WriteByte('}')
	case kindArray:
		if len(n.elems) == 0 {
			buf.WriteString("[]")
			return
		}
		buf.WriteString("[\n")
		for i, e := range n.elems {
			writeIndent(buf, indent, depth+1)
			render(buf, e, indent, depth+1)
			if i < len(n.elems)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		writeIndent(buf, indent, depth)
		buf.WriteByte(']')
	default:
		buf.Write(n.raw)
	}
}

func writeIndent(buf *bytes.Buffer, indent string, depth int) {
	for range depth {
		buf.WriteString(indent)
	}
}

// detectIndent returns the whitespace that starts the first indented line of
// data, or two spaces when no line is indented.
func detectIndent(data []byte) string {
	for i := bytes.IndexByte(data, '\n'); i >= 0 && i < len(data); {
		j := i + 1
		for j < len(data) && (data[j] == ' ' || data[j] == '\t') {
			j++
		}
		if j > i+1 && j < len(data) && data[j] != '\n' && data[j] != '\r' {
			return string(data[i+1 : j])
		}
		next := bytes.IndexByte(data[j:], '\n')
		if next < 0 {
			break
		}
		i = j + next
	}
	return "  "
}
