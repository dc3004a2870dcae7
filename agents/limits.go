package agents

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
)

// LimitFunc reads an agent CLI's output, after a run that exited non-zero,
// for its provider's usage or rate limit message and returns when the
// limit resets. now is the time the run ended; clock times in a message
// ("resets 3pm") are the next such time after now in now's location (the
// local zone) unless the message names a zone. until is zero when the
// output holds a limit message without a reset time (a 429 the CLI gave
// up retrying): the dispatcher then waits its default (--park-default).
// ok is false when the output holds no limit message.
type LimitFunc func(output string, now time.Time) (until time.Time, reason string, ok bool)

// The limit messages each preset recognises. A message counts when one
// line holds both a marker (case-insensitive) and a reset time in one of
// the forms listed; the line, trimmed, is the reason.
//
//   - claude: "usage limit reached", "limit reached" (e.g. "5-hour limit
//     reached ∙ resets 3pm", "Claude usage limit reached. Your limit will
//     reset at 3pm (America/New_York)."), "Claude AI usage limit
//     reached|1767225600" (a Unix time); resets as "resets <clock>",
//     "reset at <clock>", an optional "(<IANA zone>)" after it, or
//     "|<unix seconds>".
//   - codex: "usage limit", "rate limit" ("You've hit your usage limit. …
//     try again in 2 hours 5 minutes.", "Rate limit reached for gpt-5 …
//     Please try again in 1.5s."); resets as "try again in <duration>" or
//     "try again at <clock>".
//   - gemini: "quota exceeded", "resource_exhausted", "rate limit"
//     ("Quota exceeded for quota metric … Please retry in 29.5s."); resets
//     as "retry in <duration>", "try again in <duration>" or a
//     "retryDelay": "29s" field.
//   - qwen (a fork of gemini-cli on OpenAI-compatible servers): gemini's
//     and codex's forms, and "quota exceeded … try again tomorrow" (the
//     next local midnight).
//   - opencode: "rate limit", "usage limit", "quota", "429"; resets as
//     "try again in <duration>", "retry in <duration>", "resets <clock>"
//     or "try again at <clock>".
//
// Each preset also knows the line its real CLI prints when it gives up on
// a 429 that carries no reset time (recorded in testdata/limits/): a limit
// with no reset, so until is zero:
//
//   - claude: "API Error: Request rejected (429)", after about three
//     minutes of retries;
//   - codex: "exceeded retry limit, last status: 429";
//   - gemini and qwen: "status 429" with "RESOURCE_EXHAUSTED" (gemini-cli
//     retries on and does not exit: its preset's LiveLimit stops it);
//   - opencode: "429 Too Many Requests" (opencode retries on: its
//     preset's LiveLimit stops it, see livelimit.go).
//
// A duration is a sequence of numbers with units: Go's ("1.5s", "20ms",
// "6m0s") or words ("2 hours", "4 days 13 hours 12 minutes", "30
// seconds"). A clock is "3pm", "3:05 PM", "15:00" or "3 pm".
var (
	claudeLimit = orNoReset(limitParser([]string{"usage limit reached", "limit reached"}, resetsClock, epochPipe),
		[]string{"request rejected (429)"})
	codexLimit  = orNoReset(limitParser([]string{"usage limit", "rate limit"}, tryAgainIn, tryAgainAt), []string{"exceeded retry limit, last status: 429"})
	geminiLimit = orNoReset(limitParser([]string{"quota exceeded", "resource_exhausted", "rate limit"}, retryIn, tryAgainIn, retryDelay),
		[]string{"status 429", "resource_exhausted"})
	qwenLimit = orNoReset(limitParser([]string{"quota exceeded", "resource_exhausted", "rate limit", "usage limit", "quota"}, retryIn, tryAgainIn, retryDelay, tryAgainAt, tomorrow),
		[]string{"status 429", "resource_exhausted"})
	opencodeLimit = orNoReset(limitParser([]string{"rate limit", "usage limit", "quota", "429"}, tryAgainIn, retryIn, resetsClock, tryAgainAt),
		[]string{"429 too many requests"})
)

// orNoReset returns a LimitFunc that reads a limit with its reset as p
// does and, when p finds none, a limit with no reset (until zero) on the
// first line holding every marker of one of the sets (case-insensitive).
// Its reason is the line from the set's first marker up to a double quote
// (the end of a JSON string holding the message).
func orNoReset(p LimitFunc, sets ...[]string) LimitFunc {
	return func(out string, now time.Time) (time.Time, string, bool) {
		if until, reason, ok := p(out, now); ok {
			return until, reason, true
		}
		for l := range strings.Lines(out) {
			low := strings.ToLower(l)
			for _, set := range sets {
				if !containsAll(low, set...) {
					continue
				}
				msg := l
				if len(low) == len(l) { // ASCII case folding: the indexes agree
					msg = l[strings.Index(low, set[0]):]
					if j := strings.IndexByte(msg, '"'); j >= 0 {
						msg = msg[:j]
					}
				}
				return time.Time{}, limitReason(msg), true
			}
		}
		return time.Time{}, "", false
	}
}

// containsAll reports whether s holds every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// limitReason is line, trimmed and cut to 300 bytes, as the reason of a
// limit.
func limitReason(line string) string {
	reason := strings.TrimSpace(line)
	if len(reason) > 300 {
		reason = reason[:300] + "…"
	}
	return reason
}

// resetForm finds a reset time in one line of output.
type resetForm func(line string, now time.Time) (time.Time, bool)

// limitParser returns a LimitFunc that looks, line by line, for a marker
// and a reset in one of forms.
func limitParser(markers []string, forms ...resetForm) LimitFunc {
	return func(out string, now time.Time) (time.Time, string, bool) {
		for l := range strings.Lines(out) {
			low := strings.ToLower(l)
			if !containsAny(low, markers...) {
				continue
			}
			for _, f := range forms {
				if until, ok := f(l, now); ok {
					return until, limitReason(l), true
				}
			}
		}
		return time.Time{}, "", false
	}
}

const clockPattern = `(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?`

var (
	resetsClockRE = regexp.MustCompile(`(?i)\bresets?(?:\s+at)?\s+` + clockPattern + `(?:\s*\(([A-Za-z_]+(?:/[A-Za-z_+-]+)*)\))?`)
	tryAgainAtRE  = regexp.MustCompile(`(?i)\btry again at\s+` + clockPattern + `(?:\s*\(([A-Za-z_]+(?:/[A-Za-z_+-]+)*)\))?`)
	epochPipeRE   = regexp.MustCompile(`\|(\d{10})\b`)
	tryAgainInRE  = regexp.MustCompile(`(?i)\btry again in\s+(.*)`)
	retryInRE     = regexp.MustCompile(`(?i)\bretry in\s+(.*)`)
	retryDelayRE  = regexp.MustCompile(`"retryDelay"\s*:\s*"([0-9.]+s)"`)
	tomorrowRE    = regexp.MustCompile(`(?i)\btry again tomorrow\b`)
	durationPart  = regexp.MustCompile(`(?i)^\s*(?:and\s+|,\s*)?(\d+(?:\.\d+)?)\s*(milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)\b`)
	// goDuration matches Go's compact form ("6m0s", "1h2m3.5s") at once,
	// since its units are not separated by word boundaries.
	goDuration = regexp.MustCompile(`^\s*((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)`)
)

func resetsClock(l string, now time.Time) (time.Time, bool) { return clockMatch(resetsClockRE, l, now) }
func tryAgainAt(l string, now time.Time) (time.Time, bool)  { return clockMatch(tryAgainAtRE, l, now) }

func epochPipe(l string, _ time.Time) (time.Time, bool) {
	m := epochPipeRE.FindStringSubmatch(l)
	if m == nil {
		return time.Time{}, false
	}
	s, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(s, 0), true
}

func tryAgainIn(l string, now time.Time) (time.Time, bool) {
	return durationMatch(tryAgainInRE, l, now)
}
func retryIn(l string, now time.Time) (time.Time, bool) { return durationMatch(retryInRE, l, now) }

func retryDelay(l string, now time.Time) (time.Time, bool) {
	m := retryDelayRE.FindStringSubmatch(l)
	if m == nil {
		return time.Time{}, false
	}
	d, err := time.ParseDuration(m[1])
	if err != nil || d <= 0 {
		return time.Time{}, false
	}
	return now.Add(d), true
}

func tomorrow(l string, now time.Time) (time.Time, bool) {
	if !tomorrowRE.MatchString(l) {
		return time.Time{}, false
	}
	y, mo, d := now.Date()
	return time.Date(y, mo, d+1, 0, 0, 0, 0, now.Location()), true
}

func durationMatch(re *regexp.Regexp, l string, now time.Time) (time.Time, bool) {
	m := re.FindStringSubmatch(l)
	if m == nil {
		return time.Time{}, false
	}
	d, ok := parseDurationWords(m[1])
	if !ok {
		return time.Time{}, false
	}
	return now.Add(d), true
}

// parseDurationWords reads the duration at the start of s: Go's compact
// form, or numbers with unit words, joined by spaces, commas or "and".
func parseDurationWords(s string) (time.Duration, bool) {
	if m := goDuration.FindStringSubmatch(s); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil && d > 0 {
			rest := s[len(m[0]):]
			if rest == "" || !isLetter(rest[0]) {
				return d, true
			}
		}
	}
	var total time.Duration
	found := false
	for {
		m := durationPart.FindStringSubmatch(s)
		if m == nil {
			break
		}
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			break
		}
		total += time.Duration(n * float64(unitOf(strings.ToLower(m[2]))))
		found = true
		s = s[len(m[0]):]
	}
	return total, found && total > 0
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// unitOf returns the duration of one unit named u (lower case), as
// durationPart matches them.
func unitOf(u string) time.Duration {
	switch {
	case u == "ms" || strings.HasPrefix(u, "milli"):
		return time.Millisecond
	case u == "s" || strings.HasPrefix(u, "sec"):
		return time.Second
	case u == "m" || strings.HasPrefix(u, "min"):
		return time.Minute
	case u == "h" || strings.HasPrefix(u, "h"):
		return time.Hour
	}
	return 24 * time.Hour // d, day, days
}

// clockMatch reads a clock time matched by re (hour, minutes, am/pm, zone)
// and returns its next occurrence after now, in the zone named or now's.
// A bare hour with neither minutes nor am/pm is not a clock time.
func clockMatch(re *regexp.Regexp, l string, now time.Time) (time.Time, bool) {
	m := re.FindStringSubmatch(l)
	if m == nil || m[2] == "" && m[3] == "" {
		return time.Time{}, false
	}
	h, _ := strconv.Atoi(m[1])
	mins := 0
	if m[2] != "" {
		mins, _ = strconv.Atoi(m[2])
	}
	if ampm := strings.ToLower(strings.ReplaceAll(m[3], ".", "")); ampm != "" {
		if h < 1 || h > 12 {
			return time.Time{}, false
		}
		h %= 12
		if ampm == "pm" {
			h += 12
		}
	}
	if h > 23 || mins > 59 {
		return time.Time{}, false
	}
	loc := now.Location()
	if m[4] != "" {
		if z, err := time.LoadLocation(m[4]); err == nil {
			loc = z
		}
	}
	n := now.In(loc)
	t := time.Date(n.Year(), n.Month(), n.Day(), h, mins, 0, 0, loc)
	if !t.After(now) {
		t = t.AddDate(0, 0, 1)
	}
	return t, true
}

// billingMarkers are what agent CLIs print when the account has no credit
// or quota left, which no wait restores (see llm.IsBilling, which also
// reads error codes).
var billingMarkers = []string{"credit balance is too low", "insufficient_quota", "exceeded your current quota", "billing_hard_limit_reached"}

// billingLine returns the first output line saying the account has no
// credit or quota left, or "".
func billingLine(out string) string {
	for l := range strings.Lines(out) {
		if containsAny(strings.ToLower(l), billingMarkers...) {
			return lastLine(l)
		}
	}
	return ""
}

// quotaError is the error of agent CLI program whose output line says the
// account has no credit or quota left: the run stops.
func quotaError(program, line string) error {
	return &InfraError{Reason: fmt.Sprintf("agent CLI %s: the account has no credit or quota left (%s); no reset will come: add credit or raise the limit in the provider's billing settings, then run statgraph resume", program, line), Err: llm.ErrQuota}
}
