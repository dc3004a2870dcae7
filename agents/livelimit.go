package agents

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
)

// LiveLimitFunc reports whether one line an agent CLI printed while it
// runs says its provider's limit stopped it for good: the CLI will not
// exit on it (it retries on, or waits without a word), so the line is
// the only sign. See CommandExecutor.LiveLimit.
type LiveLimitFunc func(line string) bool

// The live limit lines of the presets whose real CLIs do not exit on a
// 429 (recorded in testdata/limits/):
//
//   - gemini: after its own retries of a 429 give up, "Attempt 5 failed:
//     … Max attempts reached" and "RetryableQuotaError: <the server's
//     message>"; it then retries the whole request on and on. Its own
//     retries before ("Attempt 1 failed with status 429. Retrying with
//     backoff…") are left to run: a short limit passes within them.
//   - opencode: with --print-logs --log-level WARN (the preset's), its
//     log line of a model request that failed on the limit ("level=ERROR
//     … message=\"stream error\" … error.error=\"AI_APICallError: <the
//     server's message>\"", or AI_RetryError after its retries; a bare
//     429's message is "Too Many Requests"); it prints nothing else and
//     retries for ever. A bare "429" is no sign (timestamps hold it).
var (
	geminiLiveLimit LiveLimitFunc = func(line string) bool {
		l := strings.ToLower(line)
		return strings.Contains(l, "retryablequotaerror") ||
			strings.Contains(l, "max attempts reached") && containsAny(l, "429", "quota", "rate limit", "resource_exhausted")
	}
	opencodeLiveLimit LiveLimitFunc = func(line string) bool {
		l := strings.ToLower(line)
		return strings.Contains(l, "level=error") && containsAny(l, "rate limit", "rate_limit", "too many requests", "quota", "resource_exhausted")
	}
)

// errLiveLimit is the cause with which an agent CLI is stopped when a
// line of its output is its provider's limit (see liveWatch).
var errLiveLimit = errors.New("agents: the agent CLI printed its provider's limit and does not exit on it")

// maxWatchedLine bounds a line liveWatch keeps; the rest of a longer line
// is not looked at.
const maxWatchedLine = 64 << 10

// liveWatch is an io.Writer that splits an agent CLI's output into lines
// and, at the first line match accepts, keeps it in line and calls stop.
// It is written from one goroutine (the runner's Tee); read line after
// the run ended.
type liveWatch struct {
	match LiveLimitFunc
	stop  func()
	cur   []byte
	line  string // the matching line, "" before one came
}

// Write never fails.
func (w *liveWatch) Write(p []byte) (int, error) {
	n := len(p)
	for w.line == "" && len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if room := maxWatchedLine - len(w.cur); room > 0 {
			w.cur = append(w.cur, part[:min(len(part), room)]...)
		}
		if i < 0 {
			break
		}
		if w.match(string(w.cur)) {
			w.line = string(w.cur)
			w.stop()
		}
		w.cur, p = w.cur[:0], p[i+1:]
	}
	return n, nil
}

// liveLimit is the error of agent CLI program stopped at line, its live
// limit; out is its output so far. An account with no credit left stops
// the run (as when the CLI exits on it); a limit's reset is read by Limit,
// and without one the limit has none (the dispatcher's default wait).
func (c CommandExecutor) liveLimit(program, line, out string) error {
	if b := billingLine(out); b != "" {
		return quotaError(program, b)
	}
	until, reason := time.Time{}, limitReason(line)
	if c.Limit != nil {
		if u, r, ok := c.Limit(out, time.Now()); ok {
			until, reason = u, r
		}
	}
	return &llm.LimitError{Until: until, Reason: fmt.Sprintf("agent CLI %s: %s (stopped: it does not exit on its provider's limit)", program, reason)}
}
