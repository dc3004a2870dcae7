package verifier

import (
	"fmt"
	"strings"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// DefaultFeedbackBytes is the size limit of Feedback(0).
const DefaultFeedbackBytes = 8 << 10

// maxNamesInSummary bounds the test names listed in one Summary line.
const maxNamesInSummary = 5

// Summary returns one line saying how the check ended, such as
// "tests: 2 failed (TestParse, TestEmpty)" or "lint: passed", followed by
// the Note, if any.
func (r CheckResult) Summary() string {
	s := r.summary()
	if r.Note != "" && !r.Passed {
		s += " (note: " + r.Note + ")"
	}
	return s
}

func (r CheckResult) summary() string {
	switch {
	case r.Passed:
		return r.Name + ": passed"
	case r.StartError != "":
		return r.Name + ": could not start: " + r.StartError
	case r.Canceled:
		return fmt.Sprintf("%s: canceled after %s", r.Name, r.Duration.Round(time.Millisecond))
	case r.TimedOut:
		s := fmt.Sprintf("%s: timed out after %s", r.Name, r.Duration.Round(time.Millisecond))
		if len(r.Failures) > 0 {
			s += " (" + failureNames(r.Failures) + ")"
		}
		return s
	case len(r.Failures) > 0:
		return fmt.Sprintf("%s: %d failed (%s)", r.Name, len(r.Failures), failureNames(r.Failures))
	case len(r.Diagnostics) > 0:
		return fmt.Sprintf("%s: %s (%s)", r.Name, plural(len(r.Diagnostics), "problem"), clip(r.Diagnostics[0].String(), 160))
	default:
		s := fmt.Sprintf("%s: exit status %d", r.Name, r.ExitCode)
		if last := lastLine(r.Output); last != "" {
			s += ": " + clip(last, 160)
		}
		return s
	}
}

func failureNames(fs []Failure) string {
	names := make([]string, 0, maxNamesInSummary)
	for _, f := range fs[:min(len(fs), maxNamesInSummary)] {
		names = append(names, f.Name())
	}
	s := strings.Join(names, ", ")
	if len(fs) > maxNamesInSummary {
		s += fmt.Sprintf(" and %d more", len(fs)-maxNamesInSummary)
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	return strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
}

// clip cuts s to at most n bytes at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len("…") {
		return ""
	}
	return string(proc.DropPartialRune([]byte(s[:n-len("…")]))) + "…"
}

// RenderFeedback renders what an agent needs to fix the failures, most useful
// first: the verdict and one line per failed check, the failing tests with
// their key lines, the diagnostics, then the head and tail of the output of
// failed checks that neither named a test nor gave a diagnostic. Advisory
// failures are included after blocking ones; informational ones are left
// out. The result is never longer than maxBytes (0 means
// DefaultFeedbackBytes); what does not fit is cut, later sections first.
func (v Verification) RenderFeedback(maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = DefaultFeedbackBytes
	}
	w := &budgetWriter{left: maxBytes}
	if v.Passed() {
		w.line("All checks passed.")
	} else {
		w.line(v.verdictLine())
	}
	for _, e := range v.Errors {
		w.line("- " + e)
	}
	if len(v.Warnings) > 0 {
		w.line("Warnings (advisory checks):")
		for _, e := range v.Warnings {
			w.line("- " + e)
		}
	}

	failed := v.failedChecks()
	var failures []Failure
	var diags []Diagnostic
	var outputs []CheckResult
	for _, r := range failed {
		failures = append(failures, r.Failures...)
		diags = append(diags, r.Diagnostics...)
		if len(r.Failures) == 0 && len(r.Diagnostics) == 0 && strings.TrimSpace(r.Output) != "" {
			outputs = append(outputs, r)
		}
	}
	// Keep room for later sections so many failures cannot crowd them out.
	reserve := 0
	if len(diags) > 0 || len(outputs) > 0 {
		reserve = w.left / 3
	}
	writeFailures(w, failures, reserve)
	writeDiagnostics(w, diags)
	for i, r := range outputs {
		share := w.left / (len(outputs) - i)
		header := fmt.Sprintf("\nOutput of %s (exit %d):", r.Name, r.ExitCode)
		if share <= len(header)+1 {
			break
		}
		w.line(header)
		w.line(headTail(strings.TrimRight(r.Output, "\n"), share-len(header)-2))
	}
	return strings.TrimRight(w.b.String(), "\n") + "\n"
}

// failedChecks returns the failed blocking checks, then the failed advisory ones.
func (v Verification) failedChecks() []CheckResult {
	blocking, advisory := gate.Enforce(v.Checks, CheckResult.Verdict)
	return append(blocking, advisory...)
}

// verdictLine says which blocking checks failed and which passed, naming
// only the checks the verification ran ("tests FAILED, lint passed" only
// when there is a lint check). A Verification without Checks (one read
// from a checkpoint) names none; its Errors list the failures.
func (v Verification) verdictLine() string {
	var parts []string
	for _, r := range v.Checks {
		if r.Mode.For(gate.Critical) == Blocking {
			parts = append(parts, r.Name+" "+verdict(r.Passed))
		}
	}
	if len(parts) == 0 {
		return "Verification failed."
	}
	return "Verification failed: " + strings.Join(parts, ", ") + "."
}

func verdict(ok bool) string {
	if ok {
		return "passed"
	}
	return "FAILED"
}

// writeFailures gives each failure an equal share of the budget left after
// reserve, so every failing test is named before any gets many lines.
func writeFailures(w *budgetWriter, fs []Failure, reserve int) {
	if len(fs) == 0 {
		return
	}
	w.line("\nFailing tests:")
	for i, f := range fs {
		share := (w.left - reserve) / (len(fs) - i)
		header := "--- " + f.Name()
		if f.Package != "" && f.Test != "" {
			header += " (" + f.Package + ")"
		}
		start := w.left
		if !w.line(clip(header, max(share, 80))) {
			return
		}
		for _, l := range f.Lines {
			used := start - w.left
			if used+len(l)+5 > share {
				if room := share - used - 5; room > 40 {
					w.line("    " + clip(l, room))
				}
				break
			}
			w.line("    " + l)
		}
	}
}

func writeDiagnostics(w *budgetWriter, ds []Diagnostic) {
	if len(ds) == 0 {
		return
	}
	w.line("\nDiagnostics:")
	for i, d := range ds {
		s := d.String()
		if d.Tool != "" {
			s += " [" + d.Tool + "]"
		}
		rest := fmt.Sprintf("… %d more diagnostics", len(ds)-i)
		if len(s)+1 > w.left-len(rest)-1 {
			w.line(rest)
			return
		}
		w.line(s)
	}
}

// headTail returns s if it fits in n bytes, otherwise its first and last
// parts with a marker saying how many bytes were left out.
func headTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	marker := proc.DropMarker(int64(len(s)))
	avail := n - len(marker)
	if avail <= 0 {
		return clip(s, n)
	}
	h, t := proc.TrimAtLines([]byte(s[:avail/2]), []byte(s[len(s)-(avail-avail/2):]))
	return string(h) + proc.DropMarker(int64(len(s)-len(h)-len(t))) + string(t)
}

// budgetWriter writes lines until its byte budget is spent.
type budgetWriter struct {
	b    strings.Builder
	left int
}

// line writes s and a newline, clipped to the budget; it reports whether
// all of s was written.
func (w *budgetWriter) line(s string) bool {
	if w.left <= 1 {
		return false
	}
	full := len(s)+1 <= w.left
	if !full {
		s = clip(s, w.left-1)
	}
	w.b.WriteString(s)
	w.b.WriteByte('\n')
	w.left -= len(s) + 1
	return full
}
