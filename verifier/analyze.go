package verifier

import "bytes"

// outputAnalyzer parses a check's whole output as it streams by, as the
// Tee of its Command, so failures in the part the capture drops are still
// found. Memory is bounded by the parsers' limits and maxScanLineBytes. It is
// not safe for concurrent use; Run writes to it from one goroutine.
type outputAnalyzer struct {
	json     *goTestJSONParser
	text     *goTestTextParser
	diag     *diagParser
	partial  []byte // the current line so far, at most maxScanLineBytes
	overlong bool   // the current line exceeded maxScanLineBytes
}

func newOutputAnalyzer(tool string) *outputAnalyzer {
	return &outputAnalyzer{json: newGoTestJSONParser(), text: newGoTestTextParser(), diag: newDiagParser(tool)}
}

// Write never fails.
func (a *outputAnalyzer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			a.keep(p)
			break
		}
		a.keep(p[:i])
		a.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (a *outputAnalyzer) keep(p []byte) {
	if room := maxScanLineBytes - len(a.partial); len(p) > room {
		p = p[:room]
		a.overlong = true
	}
	a.partial = append(a.partial, p...)
}

func (a *outputAnalyzer) emit() {
	line := string(a.partial)
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	a.partial, a.overlong = a.partial[:0], false
	// finish prefers json over text over diagnostics, so once a format is
	// seen the parsers of the formats it overrides can rest.
	a.json.line(line)
	if a.json.events == 0 {
		a.text.line(line)
		if a.text.results == 0 {
			a.diag.line(line)
		}
	}
}

// finish parses any unterminated last line and returns what the output
// shows. The first format that matches decides: go test -json events, then
// plain go test results; diagnostics are reported only for output that
// holds neither, because test logs ("x_test.go:8: want 3") look like them.
func (a *outputAnalyzer) finish() ([]Failure, []Diagnostic) {
	if len(a.partial) > 0 || a.overlong {
		a.emit()
	}
	switch {
	case a.json.events > 0:
		return a.json.failures(), nil
	case a.text.results > 0:
		return a.text.failures(), nil
	default:
		return nil, a.diag.diags
	}
}
