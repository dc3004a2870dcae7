// Package printable makes text from a tasks file safe to print on one
// line of a terminal or a log: ids, titles and reasons come from the user's
// file (or a model) and may hold newlines or escape sequences that would
// forge log lines or drive the terminal. It is a leaf that imports nothing
// of the module, so the CLI and the tasks package use the same helper.
package printable

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character (C0, DEL and C1, which
// includes newline, carriage return, tab and ESC) and every byte that is not
// valid UTF-8 replaced by its Go escape (\n, \t, \x1b, \u0085, \xff), and s
// itself when there is none. Other text, non-ASCII letters included, is kept
// as written. String is a pure function, safe for concurrent use.
func String(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case needsEscape(r, size):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune, size int) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError && size == 1
}

// Text is String for text of several lines, such as a diff or a command's
// output: newlines and tabs are kept, every other control character and
// invalid byte is escaped as String escapes it, so printing the result
// cannot move the cursor, change colours, set the window title or write
// the clipboard (OSC 52). Text is a pure function, safe for concurrent use.
func Text(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && needsEscape(r, 2) }) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for line := range strings.SplitAfterSeq(s, "\n") {
		body, nl := strings.CutSuffix(line, "\n")
		for part := range strings.SplitAfterSeq(body, "\t") {
			cell, tab := strings.CutSuffix(part, "\t")
			b.WriteString(String(cell))
			if tab {
				b.WriteByte('\t')
			}
		}
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// GitPath returns the path p as git shows it in a diff or a status with
// core.quotePath set (git's default): p itself when it holds only
// printable ASCII other than '"' and '\', and otherwise p in double quotes
// with \a, \b, \t, \n, \v, \f, \r, \" and \\ for those bytes and a
// three-digit octal escape (\303) for every other control or non-ASCII
// byte. It is a pure function, safe for concurrent use.
func GitPath(p string) string {
	if !strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r >= 0x7f || r == '"' || r == '\\' }) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 8)
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c >= 0x7f {
				b.WriteByte('\\')
				b.WriteByte('0' + c>>6)
				b.WriteByte('0' + c>>3&7)
				b.WriteByte('0' + c&7)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
