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
