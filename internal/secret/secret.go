package secret

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Marker replaces every secret form [Scrub] finds.
const Marker = "[REDACTED]"

// MinLen is the shortest value, in bytes, that [Scrub] removes. Shorter
// values are kept (Lookup returns them) but not scrubbed: they match too
// much ordinary text and are too short to be real credentials.
const MinLen = 8

var (
	mu     sync.Mutex            // guards values and serialises rebuilds of forms
	values = map[string]string{} // name -> value, for Lookup
	known  = map[string]bool{}   // every value whose forms are in the set
	// forms holds the current patterns; Scrub reads it without locking.
	forms atomic.Pointer[patterns]
)

// Register records value under name for [Lookup] and adds it to the set
// [Scrub] removes, unless it is shorter than [MinLen] or name ends in
// _URL. A later Register of the same name replaces the value Lookup
// returns; the earlier value stays scrubbed. Register is safe for
// concurrent use.
func Register(name, value string) {
	mu.Lock()
	defer mu.Unlock()
	values[name] = value
	if !strings.HasSuffix(strings.ToUpper(name), "_URL") {
		addLocked(value)
	}
}

// Add adds value to the set [Scrub] removes (not to Lookup's), unless it is
// shorter than [MinLen]. Adding a value twice is harmless. Add is safe for
// concurrent use.
func Add(value string) {
	mu.Lock()
	defer mu.Unlock()
	addLocked(value)
}

func addLocked(value string) {
	if len(value) < MinLen || known[value] {
		return
	}
	known[value] = true
	var list []string
	seen := map[string]bool{}
	if p := forms.Load(); p != nil {
		list = slices.Clone(p.list)
		for _, f := range list {
			seen[f] = true
		}
	}
	for _, f := range Forms(value) {
		if !seen[f] {
			seen[f] = true
			list = append(list, f)
		}
	}
	forms.Store(newPatterns(list))
}

// Lookup returns the value registered under name or, when none is, the
// value of the environment variable name (so code that was not started
// through [Isolate], such as tests, still finds its configuration). It is
// safe for concurrent use.
func Lookup(name string) (string, bool) {
	mu.Lock()
	v, ok := values[name]
	mu.Unlock()
	if ok {
		return v, true
	}
	return os.LookupEnv(name)
}

// Environ returns the process environment with every registered value
// added as NAME=VALUE where the environment does not hold NAME (after
// [Isolate] it holds none of them), sorted by name after the environment's
// own entries. It is what code that passes named variables on to a child
// (an agent CLI given its own key) reads from. It is safe for concurrent use.
func Environ() []string {
	env := os.Environ()
	mu.Lock()
	names := make([]string, 0, len(values))
	for n := range values {
		if _, set := os.LookupEnv(n); !set {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		env = append(env, n+"="+values[n])
	}
	mu.Unlock()
	return env
}

// Active reports whether any value is being scrubbed. When it is false,
// Scrub returns its argument unchanged at the cost of one atomic load. It
// is safe for concurrent use.
func Active() bool { return forms.Load() != nil }

// Scrub returns s with every form of every registered secret replaced by
// [Marker] (forms that overlap, by one Marker), also where a tool wrapped
// an encoded form over several lines (the wrapped lines are then joined
// into one). With no secret registered, or s shorter than the shortest
// form, it returns s at once; otherwise it costs one pass over s for all
// forms of all secrets (see patterns) and one pass over its lines, and
// allocates only when something is replaced. It is safe for concurrent
// use.
func Scrub(s string) string { return scrubWith(forms.Load(), s) }

// scrubWith is Scrub with the patterns p (nil: none).
func scrubWith(p *patterns, s string) string {
	if p == nil || len(s) < p.min {
		return s
	}
	sp := spans(p, s)
	for _, r := range wrappedRuns(s) {
		sp = append(sp, joinedSpans(p, s[r[0]:r[1]], r[0])...)
	}
	return replaceSpans(s, sp)
}

// joinedSpans returns the spans of s (a run of wrapped lines starting at
// offset off of the text) that forms cover once the run's line breaks are
// removed, line breaks inside a form included, as offsets of the text.
func joinedSpans(p *patterns, run string, off int) [][2]int {
	joined := make([]byte, 0, len(run))
	for i := 0; i < len(run); {
		end := strings.IndexByte(run[i:], '\n')
		if end < 0 {
			end = len(run) - i
		}
		joined = append(joined, strings.TrimSuffix(run[i:i+end], "\r")...)
		i += end + 1
	}
	found := spans(p, joined)
	if len(found) == 0 {
		return nil // the usual case: no line index is needed
	}
	type line struct{ raw, joined int } // where a line starts in run and in joined
	lines := make([]line, 0, strings.Count(run, "\n")+1)
	for i, j := 0, 0; i < len(run); {
		lines = append(lines, line{i, j})
		end := strings.IndexByte(run[i:], '\n')
		if end < 0 {
			end = len(run) - i
		}
		j += len(strings.TrimSuffix(run[i:i+end], "\r"))
		i += end + 1
	}
	raw := func(j int) int { // the offset in run of joined[j]
		k, _ := slices.BinarySearchFunc(lines, j, func(l line, j int) int { return cmp.Compare(l.joined, j+1) })
		l := lines[k-1]
		return l.raw + j - l.joined
	}
	out := make([][2]int, 0, len(found))
	for _, m := range found {
		out = append(out, [2]int{off + raw(m[0]), off + raw(m[1]-1) + 1})
	}
	return out
}

// replaceSpans returns s with the union of the spans sp replaced by
// Marker, one Marker per stretch of overlapping spans.
func replaceSpans(s string, sp [][2]int) string {
	if len(sp) == 0 {
		return s
	}
	slices.SortFunc(sp, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, r := range sp {
		if r[1] <= at {
			continue
		}
		if r[0] < at {
			r[0] = at
		} else {
			b.WriteString(s[at:r[0]])
			b.WriteString(Marker)
		}
		at = r[1]
	}
	b.WriteString(s[at:])
	return b.String()
}

// ScrubBytes is [Scrub] for a byte slice. It returns b itself when nothing
// was replaced and a new slice otherwise; b is never modified. It is safe
// for concurrent use.
func ScrubBytes(b []byte) []byte {
	if !Contains(b) {
		return b
	}
	return []byte(Scrub(string(b)))
}

// Contains reports whether b holds any form of a registered secret, as
// Scrub would find it, without copying b. It is safe for concurrent use.
func Contains(b []byte) bool {
	p := forms.Load()
	if p == nil || len(b) < p.min {
		return false
	}
	if p.contains(b) {
		return true
	}
	for _, r := range wrappedRuns(b) {
		joined := bytes.ReplaceAll(bytes.ReplaceAll(b[r[0]:r[1]], []byte("\r"), nil), []byte("\n"), nil)
		if p.contains(joined) {
			return true
		}
	}
	return false
}

// wrappedRuns returns the spans of s that are runs of two or more
// consecutive lines made of base64 or hex characters only, one of them at
// least 16 long: how base64 (76 columns), openssl (64) and xxd -p (60)
// wrap what they encode, which would split a secret's form over lines.
// Scrub looks for the forms in each run with its line breaks removed.
func wrappedRuns[T ~string | ~[]byte](s T) [][2]int {
	var out [][2]int
	start, end, lines, longest := -1, 0, 0, 0
	flush := func() {
		if start >= 0 && lines >= 2 && longest >= 16 {
			out = append(out, [2]int{start, end})
		}
		start, lines, longest = -1, 0, 0
	}
	lineStart := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '\n' {
			continue
		}
		n := i
		if n > lineStart && s[n-1] == '\r' {
			n--
		}
		ok := n > lineStart
		for j := lineStart; ok && j < n; j++ {
			ok = encodingChar(s[j])
		}
		if ok {
			if start < 0 {
				start = lineStart
			}
			end, lines, longest = i, lines+1, max(longest, n-lineStart)
		} else {
			flush()
		}
		lineStart = i + 1
	}
	flush()
	return out
}

// encodingChar reports whether c occurs in base64 (either alphabet,
// padded) or hex text.
func encodingChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '+' || c == '/' || c == '=' || c == '-' || c == '_'
}

// Forms returns the strings [Scrub] looks for to remove value (see the
// package doc), without duplicates, whatever value's length (the MinLen
// rule is Register's and Add's). For base64 it returns, per alphabet and
// byte alignment, the run of characters that depends on value's bytes
// alone, which every padded or raw encoding of a blob holding value at
// that alignment contains.
func Forms(value string) []string {
	b := []byte(value)
	rev := slices.Clone(b)
	slices.Reverse(rev)
	h := hex.EncodeToString(b)
	out := []string{value, string(rev), h, strings.ToUpper(h), url.QueryEscape(value), url.PathEscape(value)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			// With k bytes before it, value's bits run from 8k to
			// 8(k+len); base64 character i covers bits [6i, 6i+6).
			first, end := (8*k+5)/6, 8*(k+len(b))/6
			s := enc.EncodeToString(append(make([]byte, k), b...))
			if end > first {
				out = append(out, s[first:end])
			}
		}
	}
	var uniq []string
	for _, f := range out {
		if f != "" && !slices.Contains(uniq, f) {
			uniq = append(uniq, f)
		}
	}
	return uniq
}

// ScrubError returns err itself when its text holds no secret, and
// otherwise an error whose text is scrubbed and which unwraps to err, so
// errors.Is and errors.As still reach what it wraps (only Error is
// scrubbed: code that prints a wrapped error on its own must scrub it too).
func ScrubError(err error) error {
	if err == nil || !Active() {
		return err
	}
	msg := err.Error()
	if s := Scrub(msg); s != msg {
		return &scrubbedError{msg: s, err: err}
	}
	return err
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// NewWriter returns a writer that scrubs each Write's bytes before passing
// them to w. A secret split across two Writes is not found, so write whole
// lines (fmt.Fprintf does). Write reports len(p) written when w accepted
// the scrubbed bytes. It is as safe for concurrent use as w is.
func NewWriter(w io.Writer) io.Writer { return scrubWriter{w} }

type scrubWriter struct{ w io.Writer }

func (s scrubWriter) Write(p []byte) (int, error) {
	if _, err := s.w.Write(ScrubBytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
