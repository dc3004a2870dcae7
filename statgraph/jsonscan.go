package statgraph

import (
	"encoding/json"
	"math"
	"unicode/utf8"
)

// The JSON scanners of the fast decoder (jsondecode.go). Each reads one
// token or value at an index, stays within its input whatever it holds,
// and reports ok false when the text is not of the shape it reads.

// literal reports whether data[i:] starts with word, and the index after.
func literal(data []byte, i int, word string) (int, bool) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return 0, false
	}
	return i + len(word), true
}

// scanString reads the JSON string at data[i]: a string without escapes,
// control characters or invalid UTF-8 is sliced from block (see
// decodeScalar) or copied; one with escapes is decoded by encoding/json.
// ok is false for anything else.
func scanString(data []byte, i int, block string, at int) (s string, end int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	ascii := true
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(data[i+1:j]) {
				return "", 0, false // encoding/json replaces invalid bytes
			}
			if block != "" {
				return block[i+1-at : j-at], j + 1, true
			}
			return string(data[i+1 : j]), j + 1, true
		case c == '\\':
			return unescapeString(data, i)
		case c < 0x20:
			return "", 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", 0, false
}

// unescapeString decodes the JSON string with escapes at data[i] with
// encoding/json (apart from scanString, whose result then need not live on
// the heap).
func unescapeString(data []byte, i int) (s string, end int, ok bool) {
	end, ok = skipJSON(data, i)
	if !ok || json.Unmarshal(data[i:end], &s) != nil {
		return "", 0, false
	}
	return s, end, true
}

// scanInteger reads the JSON number at data[i] when it is an integer (no
// fraction or exponent, as encoding/json requires for integer kinds) whose
// magnitude fits in a uint64.
func scanInteger(data []byte, i int) (neg bool, u uint64, end int, ok bool) {
	end, ok = scanNumber(data, i)
	if !ok {
		return false, 0, 0, false
	}
	j := i
	if data[j] == '-' {
		neg, j = true, j+1
	}
	for ; j < end; j++ {
		c := data[j]
		if c < '0' || c > '9' {
			return false, 0, 0, false // a fraction or an exponent
		}
		if u > (math.MaxUint64-9)/10 {
			return false, 0, 0, false // too large: encoding/json decides
		}
		u = u*10 + uint64(c-'0')
	}
	return neg, u, end, true
}

// scanNumber returns the end of the JSON number at data[i]; ok is false
// when there is none.
func scanNumber(data []byte, i int) (int, bool) {
	digits := func(j int) int {
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		return j
	}
	j := i
	if j < len(data) && data[j] == '-' {
		j++
	}
	switch {
	case j < len(data) && data[j] == '0':
		j++
	case j < len(data) && data[j] >= '1' && data[j] <= '9':
		j = digits(j)
	default:
		return 0, false
	}
	if j < len(data) && data[j] == '.' {
		k := digits(j + 1)
		if k == j+1 {
			return 0, false
		}
		j = k
	}
	if j < len(data) && (data[j] == 'e' || data[j] == 'E') {
		j++
		if j < len(data) && (data[j] == '+' || data[j] == '-') {
			j++
		}
		k := digits(j)
		if k == j {
			return 0, false
		}
		j = k
	}
	return j, true
}

// scanArray returns the end of the array at data[i] and how many elements
// it has; ok is false when it is not well formed as far as scanArray
// looks (element values are checked when they are decoded).
func scanArray(data []byte, i int) (end, n int, ok bool) {
	j := skipSpace(data, i+1)
	if j < len(data) && data[j] == ']' {
		return j + 1, 0, true
	}
	for {
		if j, ok = skipJSON(data, j); !ok {
			return 0, 0, false
		}
		n++
		if j = skipSpace(data, j); j >= len(data) {
			return 0, 0, false
		}
		switch data[j] {
		case ',':
			j = skipSpace(data, j+1)
		case ']':
			return j + 1, n, true
		default:
			return 0, 0, false
		}
	}
}

// skipJSON returns the index after the JSON value starting at data[i],
// staying within data whatever it holds; it checks only that strings and
// brackets close, so what it skips must still be validated by whoever
// decodes it.
func skipJSON(data []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if i >= len(data) {
				return 0, false
			}
			if depth == 0 {
				return i + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, true // the end of a literal before a closing bracket
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, true
			}
		}
	}
	return i, depth == 0
}

// checkString reports whether the JSON string at data[i] is one scanString
// reads without encoding/json, and returns its end.
func checkString(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	ascii := true
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, ascii || utf8.Valid(data[i+1:j])
		case c == '\\' || c < 0x20:
			return 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return 0, false
}
