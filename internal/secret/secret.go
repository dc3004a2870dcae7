package secret

import (
	"bytes"
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

// patterns is an immutable set of strings to replace, longest first.
type patterns struct {
	list []string
	min  int // length of the shortest pattern
}

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
	if p := forms.Load(); p != nil {
		list = slices.Clone(p.list)
	}
	for _, f := range Forms(value) {
		if !slices.Contains(list, f) {
			list = append(list, f)
		}
	}
	// Longest first, so a form is replaced whole before a shorter form
	// that overlaps it.
	slices.SortStableFunc(list, func(a, b string) int { return len(b) - len(a) })
	forms.Store(&patterns{list: list, min: len(list[len(list)-1])})
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

// Active reports whether any value is being scrubbed. When it is false,
// Scrub returns its argument unchanged at the cost of one atomic load. It
// is safe for concurrent use.
func Active() bool { return forms.Load() != nil }

// Scrub returns s with every form of every registered secret replaced by
// [Marker]. With no secret registered, or s shorter than the shortest form,
// it returns s at once; otherwise it costs one substring search of s per
// form (about a dozen per secret) and allocates only when something is
// replaced. It is safe for concurrent use.
func Scrub(s string) string {
	p := forms.Load()
	if p == nil || len(s) < p.min {
		return s
	}
	for _, f := range p.list {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, Marker)
		}
	}
	return s
}

// ScrubBytes is [Scrub] for a byte slice. It returns b itself when nothing
// was replaced and a new slice otherwise; b is never modified. It is safe
// for concurrent use.
func ScrubBytes(b []byte) []byte {
	p := forms.Load()
	if p == nil || len(b) < p.min {
		return b
	}
	for _, f := range p.list {
		if bytes.Contains(b, []byte(f)) {
			b = bytes.ReplaceAll(b, []byte(f), []byte(Marker))
		}
	}
	return b
}

// Contains reports whether b holds any form of a registered secret, at the
// cost of ScrubBytes without the copy. It is safe for concurrent use.
func Contains(b []byte) bool {
	p := forms.Load()
	if p == nil || len(b) < p.min {
		return false
	}
	for _, f := range p.list {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
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
