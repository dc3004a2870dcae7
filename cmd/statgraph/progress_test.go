package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/dispatch"
)

// TestRedrawFitsTheTerminal: the live table's lines are cut to the width
// less one column, rows beyond the height are summed up (running rows
// kept), and the next redraw moves up exactly the lines drawn before.
func TestRedrawFitsTheTerminal(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, true, func() (int, int) { return 60, 8 })
	long := strings.Repeat("a long title ", 10)
	for i := 1; i <= 10; i++ {
		p.event(dispatch.Event{Kind: dispatch.EventStart, Unit: fmt.Sprint(i), Title: long, MaxAttempts: 3})
		if i < 9 {
			p.event(dispatch.Event{Kind: dispatch.EventFinish, Unit: fmt.Sprint(i), Status: "failed", Reason: "failed after 3 attempts: " + long, Attempt: 3})
		}
	}
	p.event(dispatch.Event{Kind: dispatch.EventProgress, Unit: "10", Phase: "verify", Attempt: 2, MaxAttempts: 3, Tokens: 1234})

	p.mu.Lock()
	p.redraw()
	first := out.String()
	out.Reset()
	p.redraw()
	second := out.String()
	p.mu.Unlock()

	require.True(t, strings.HasPrefix(first, "\r\x1b[J"), "the first draw moves nowhere: %q", first)
	lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(first, "\r\x1b[J"), "\n"), "\n")
	assert.Len(t, lines, 7, "header, 5 rows and the more-tasks line fit 8 lines with one to spare:\n%s", first)
	for _, l := range lines {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 59, "line %q", l)
	}
	assert.True(t, strings.HasPrefix(lines[0], "TASK"), lines[0])
	assert.Contains(t, lines[0], "TOKENS", "a tokens column once a task spent tokens")
	assert.Regexp(t, `^9 +running`, lines[1], "running rows first")
	assert.Regexp(t, `^10 +running +verify +2/3`, lines[2])
	assert.Contains(t, lines[2], "1234")
	assert.Contains(t, lines[2], "a long", "the title keeps some room")
	assert.Equal(t, "… 5 more tasks", lines[6])
	assert.True(t, strings.HasPrefix(second, "\x1b[7A\r\x1b[J"), "the redraw moves up the 7 lines drawn: %q", second[:min(12, len(second))])
}

// TestPlainLines: without a terminal, one line per change, none for an
// event that changes nothing shown.
func TestPlainLines(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false, nil)
	p.event(dispatch.Event{Kind: dispatch.EventStart, Unit: "1", Title: "t", MaxAttempts: 3})
	p.event(dispatch.Event{Kind: dispatch.EventProgress, Unit: "1", Phase: "executing", Attempt: 1, MaxAttempts: 3, Elapsed: time.Second})
	p.event(dispatch.Event{Kind: dispatch.EventProgress, Unit: "1", Phase: "executing", Attempt: 1, MaxAttempts: 3, Elapsed: 2 * time.Second})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2, out.String())
	assert.Regexp(t, `^\d\d:\d\d:\d\d task 1 running: executing, attempt 1/3, 1s$`, lines[1])
	assert.NotContains(t, out.String(), "\x1b", "no escape sequences")
}

// TestParkedCountdown: a parked task gets a countdown line below the live
// table, gone once it runs again; in plain mode, all-parked is one line.
func TestParkedCountdown(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, true, func() (int, int) { return 100, 10 })
	until := time.Now().Add(90 * time.Second)
	p.event(dispatch.Event{Kind: dispatch.EventStart, Unit: "2", Title: "t", MaxAttempts: 3})
	p.event(dispatch.Event{Kind: dispatch.EventFinish, Unit: "2", Status: "parked", Reason: "parked until …"})
	p.event(dispatch.Event{Kind: dispatch.EventParked, Unit: "2", Status: "parked", Until: until})
	p.mu.Lock()
	line := p.countdown(until.Add(-63 * time.Second))
	p.redraw()
	p.mu.Unlock()
	assert.Equal(t, "parked: task 2 resumes in 1m3s ("+until.Local().Format("15:04:05")+")", line)
	assert.Contains(t, out.String(), "parked: task 2 resumes in")
	p.event(dispatch.Event{Kind: dispatch.EventStart, Unit: "2", Title: "t", MaxAttempts: 3})
	p.mu.Lock()
	assert.Empty(t, p.countdown(time.Now()), "no countdown once the task runs again")
	p.mu.Unlock()

	out.Reset()
	plain := newProgress(&out, false, nil)
	plain.event(dispatch.Event{Kind: dispatch.EventAllParked, Until: until})
	assert.Regexp(t, `^\d\d:\d\d:\d\d every runnable task is parked; the first resumes at \d\d:\d\d:\d\d \(in 1m\d+s\)\n$`, out.String())
}
