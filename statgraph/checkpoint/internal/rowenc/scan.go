package rowenc

import "unicode/utf8"

// scanNames decodes a next column as nextJSON writes it: an array of
// strings without escapes, no whitespace. ok is false for anything else
// (which encoding/json then decodes, or rejects).
func scanNames(b []byte) (names []string, ok bool) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	names = []string{}
	for i := 1; i < len(b)-1; {
		s, j, ok := scanPlain(b, i)
		if !ok {
			return nil, false
		}
		names = append(names, s)
		switch {
		case j == len(b)-1:
			return names, true
		case b[j] != ',':
			return nil, false
		}
		i = j + 1
	}
	return names, len(b) == 2
}

// scanCounters decodes a counters column as countersJSON writes it: an
// object of strings without escapes to integers, no whitespace; intern
// makes the keys. ok is false for anything else.
func scanCounters(b []byte, intern func([]byte) string) (counters map[string]int, ok bool) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, false
	}
	counters = map[string]int{}
	for i := 1; i < len(b)-1; {
		j, ok := plainEnd(b, i)
		if !ok || j >= len(b) || b[j] != ':' {
			return nil, false
		}
		name := intern(b[i+1 : j-1])
		j++
		neg := j < len(b) && b[j] == '-'
		if neg {
			j++
		}
		start := j
		n := 0
		for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
			if n > (1<<62)/10 {
				return nil, false // let encoding/json judge large numbers
			}
			n = n*10 + int(b[j]-'0')
		}
		if j == start || b[start] == '0' && j-start > 1 {
			return nil, false
		}
		if neg {
			n = -n
		}
		counters[name] = n
		switch {
		case j == len(b)-1:
			return counters, true
		case b[j] != ',':
			return nil, false
		}
		i = j + 1
	}
	return counters, len(b) == 2
}

// scanPlain reads the string at b[i] when it has no escapes or control
// characters and is valid UTF-8, returning it and the index after it.
func scanPlain(b []byte, i int) (string, int, bool) {
	j, ok := plainEnd(b, i)
	if !ok {
		return "", 0, false
	}
	return string(b[i+1 : j-1]), j, true
}

// plainEnd returns the index after the string at b[i] when it has no
// escapes or control characters and is valid UTF-8.
func plainEnd(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, ascii || utf8.Valid(b[i+1:j])
		case c == '\\' || c < 0x20:
			return 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return 0, false
}
