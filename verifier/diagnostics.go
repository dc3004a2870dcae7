package verifier

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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

// diagLine matches "path:line:col: message" and "path:line: message" as
// printed by go vet, go build, staticcheck, golangci-lint, gcc, clang and
// eslint's unix formatter. go vet's "vet: " prefix is allowed. The path
// must contain no spaces and a '.' or '/', which keeps out times such as
// "12:30:45: x".
var diagLine = regexp.MustCompile(`^(?:vet: )?([^\s:]*[./][^\s:]*):(\d+):(?:(\d+):)?\s*(\S.*)$`)

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
	m := diagLine.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return
	}
	ln, err := strconv.Atoi(m[2])
	if err != nil || ln <= 0 {
		return
	}
	col := 0
	if m[3] != "" {
		if col, err = strconv.Atoi(m[3]); err != nil {
			return
		}
	}
	msg := m[4]
	if len(msg) > maxLineBytes {
		msg = string(dropPartialRune([]byte(msg[:maxLineBytes]))) + "…"
	}
	d := Diagnostic{File: m[1], Line: ln, Col: col, Message: msg, Tool: p.tool}
	if p.seen[d] {
		return
	}
	p.seen[d] = true
	p.diags = append(p.diags, d)
}
