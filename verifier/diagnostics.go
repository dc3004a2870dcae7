package verifier

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/statgraph/statgraph/internal/proc"
)

// maxDiagnostics bounds how many diagnostics one output yields.
const maxDiagnostics = 500

// Diagnostic is one "file:line:col: message" finding of a compiler or linter.
type Diagnostic struct {
	File    string
	Line    int
	Col     int // 0 when the tool gave no column
	Message string
	// Tool names the program that reported it, such as "go vet"; it is
	// empty when unknown.
	Tool string
}

// String formats d as "file:line:col: message" (without ":col" when Col is 0).
func (d Diagnostic) String() string {
	if d.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Message)
	}
	return fmt.Sprintf("%s:%d: %s", d.File, d.Line, d.Message)
}

// ParseDiagnostics extracts file:line:col diagnostics from output, in order,
// without duplicates and at most 500, each with Tool set to tool. Other
// lines are ignored. It never panics.
func ParseDiagnostics(tool, output string) []Diagnostic {
	p := newDiagParser(tool)
	feedLines(output, p.line)
	return p.diags
}

type diagParser struct {
	tool  string
	seen  map[Diagnostic]bool
	diags []Diagnostic
}

func newDiagParser(tool string) *diagParser {
	return &diagParser{tool: tool, seen: map[Diagnostic]bool{}}
}

func (p *diagParser) line(line string) {
	if len(p.diags) >= maxDiagnostics {
		return
	}
	file, ln, col, msg, ok := splitDiagnostic(strings.TrimSpace(line))
	if !ok {
		return
	}
	if len(msg) > maxLineBytes {
		msg = string(proc.DropPartialRune([]byte(msg[:maxLineBytes]))) + "…"
	}
	d := Diagnostic{File: file, Line: ln, Col: col, Message: msg, Tool: p.tool}
	if p.seen[d] {
		return
	}
	p.seen[d] = true
	p.diags = append(p.diags, d)
}

// splitDiagnostic parses "path:line:col: message" and "path:line: message"
// as printed by go vet, go build, staticcheck, golangci-lint, gcc, clang and
// eslint's unix formatter; go vet's "vet: " prefix is allowed. The path
// must contain no spaces or colons and must contain a '.' or '/', which
// keeps out times such as "12:30:45: x".
func splitDiagnostic(s string) (file string, line, col int, msg string, ok bool) {
	s = strings.TrimPrefix(s, "vet: ")
	file, rest, found := strings.Cut(s, ":")
	if !found || file == "" || strings.ContainsAny(file, " \t") || !strings.ContainsAny(file, "./") {
		return "", 0, 0, "", false
	}
	line, rest, ok = leadingNumber(rest)
	if !ok || line <= 0 {
		return "", 0, 0, "", false
	}
	if c, r, isCol := leadingNumber(rest); isCol {
		col, rest = c, r
	}
	msg = strings.TrimSpace(rest)
	return file, line, col, msg, msg != ""
}

// leadingNumber parses the decimal number s starts with, which must be
// followed by ':'; it returns the rest after the colon.
func leadingNumber(s string) (int, string, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 || i >= len(s) || s[i] != ':' {
		return 0, "", false
	}
	n, err := strconv.Atoi(s[:i])
	return n, s[i+1:], err == nil
}
