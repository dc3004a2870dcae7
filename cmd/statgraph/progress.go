package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/printable"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/tasks"
)

// progress shows what the dispatcher is doing on stderr: a live table on a
// terminal, one line per change otherwise. Its methods are safe for
// concurrent use.
type progress struct {
	w   io.Writer
	tty bool
	// size returns the terminal's width and height; only used when tty.
	size  func() (width, height int)
	mu    sync.Mutex // guards everything below and writes to w
	rows  map[string]*row
	keys  []string // units in the order they appeared
	drawn int      // lines of the live table currently on screen
	quit  chan struct{}
	done  chan struct{}
}

type row struct {
	id, title, phase, status string
	attempt, max, tokens     int
	started                  time.Time
	elapsed                  time.Duration
	parkedUntil              time.Time // while parked: when the run starts it again
}

// newProgress returns a progress writing to w: the live table when tty is
// true (redrawn to fit size()), plain lines otherwise. Everything it writes
// is scrubbed of secrets (task titles, notes, orchestrator lines).
func newProgress(w io.Writer, tty bool, size func() (int, int)) *progress {
	if size == nil {
		size = func() (int, int) { return 80, 24 }
	}
	return &progress{w: secret.NewWriter(w), tty: tty, size: size, rows: map[string]*row{}}
}

// liveTable reports whether f is a terminal that can show the live table:
// a character device, and TERM set to something other than "dumb".
func liveTable(f *os.File, getenv func(string) string) bool {
	t := getenv("TERM")
	return isTerminal(f) && t != "" && t != "dumb"
}

// termSize returns a function reporting f's terminal size, 80x24 when it
// cannot be read.
func termSize(f *os.File) func() (int, int) {
	return func() (int, int) {
		w, h, err := term.GetSize(int(f.Fd()))
		if err != nil || w <= 0 || h <= 0 {
			return 80, 24
		}
		return w, h
	}
}

// start begins redrawing the live table on a terminal.
func (p *progress) start() {
	if !p.tty {
		return
	}
	p.quit, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				p.mu.Lock()
				p.redraw()
				p.mu.Unlock()
			}
		}
	}()
}

// stop ends the live table, leaving its last state on screen.
func (p *progress) stop() {
	if p.quit == nil {
		return
	}
	close(p.quit)
	<-p.done
	p.mu.Lock()
	p.redraw()
	p.drawn = 0
	p.mu.Unlock()
}

// event records a dispatcher event.
func (p *progress) event(e dispatch.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Kind == dispatch.EventAllParked {
		if !p.tty {
			fmt.Fprintf(p.w, "%s every runnable task is parked; the first resumes at %s (in %s)\n",
				time.Now().Format("15:04:05"), e.Until.Local().Format("15:04:05"), time.Until(e.Until).Round(time.Second))
		}
		return
	}
	r := p.rows[e.Unit]
	if r == nil {
		r = &row{id: e.Unit, title: e.Title, started: time.Now()}
		p.rows[e.Unit] = r
		p.keys = append(p.keys, e.Unit)
	}
	before := r.phase + "/" + r.status + fmt.Sprint(r.attempt)
	switch e.Kind {
	case dispatch.EventStart:
		r.status, r.max, r.parkedUntil = "running", e.MaxAttempts, time.Time{}
	case dispatch.EventParked:
		r.parkedUntil = e.Until
	case dispatch.EventProgress:
		r.phase, r.attempt, r.tokens = e.Phase, e.Attempt, e.Tokens
		if e.Candidate > 0 { // best-of-N: the rows of a task's candidates share its line
			r.phase = fmt.Sprintf("candidate %d: %s", e.Candidate, e.Phase)
		}
		if e.MaxAttempts > 0 {
			r.max = e.MaxAttempts
		}
	case dispatch.EventFinish, dispatch.EventBlocked, dispatch.EventHeld:
		r.status, r.attempt = e.Status, max(r.attempt, e.Attempt)
		if e.Tokens > 0 {
			r.tokens = e.Tokens
		}
		if e.Reason != "" {
			r.phase = e.Reason
		}
	}
	if e.Elapsed > 0 {
		r.elapsed = e.Elapsed
	}
	if p.tty {
		return
	}
	if after := r.phase + "/" + r.status + fmt.Sprint(r.attempt); after != before {
		fmt.Fprintf(p.w, "%s task %s %s: %s\n", time.Now().Format("15:04:05"), printable.String(r.id), r.status, printable.String(r.describe()))
	}
}

func (r *row) describe() string {
	var parts []string
	if r.phase != "" {
		parts = append(parts, r.phase)
	}
	if r.attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt %d/%d", r.attempt, r.max))
	}
	if r.tokens > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", r.tokens))
	}
	parts = append(parts, r.elapsed.Round(100*time.Millisecond).String())
	return strings.Join(parts, ", ")
}

// redraw repaints the live table in place. The title, the last column,
// gets the width the other columns leave (the phase column gives some up
// for it on a narrow terminal), and every line is cut to the terminal's
// width less one column, so no line wraps and p.drawn is the number of
// screen lines to move up next time; rows that do not fit the terminal's
// height are summed up in one line. p.mu is held.
func (p *progress) redraw() {
	width, height := p.size()
	keys := p.visible(height - 2)
	cells := [][]string{{"TASK", "STATUS", "PHASE", "TRY", "TIME", "TOKENS", "TITLE"}}
	tokens := false // a tokens column only once a task has spent some
	for _, k := range keys {
		r := p.rows[k]
		el := r.elapsed
		if r.status == "running" {
			el = time.Since(r.started)
		}
		att := "-"
		if r.attempt > 0 {
			att = fmt.Sprintf("%d/%d", r.attempt, r.max)
		}
		cells = append(cells, []string{printable.String(r.id), r.status, printable.String(r.phase), att, el.Round(100 * time.Millisecond).String(), fmt.Sprint(r.tokens), printable.String(r.title)})
		tokens = tokens || r.tokens > 0
	}
	if !tokens {
		for i, row := range cells {
			cells[i] = append(row[:5:5], row[6])
		}
	}
	const phase, gap = 2, 2
	title := len(cells[0]) - 1
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for c, v := range row {
			widths[c] = max(widths[c], utf8.RuneCountInString(v))
		}
	}
	widths[phase] = min(widths[phase], 20)
	fixed := 0
	for c, w := range widths[:title] {
		if c != phase {
			fixed += w + gap
		}
	}
	// Room for the phase and the title; the title keeps at least 16 runes
	// while the phase keeps at least 9.
	room := width - 1 - fixed - gap
	widths[phase] = max(min(widths[phase], room-16), 9)
	widths[title] = max(room-widths[phase], 1)
	var b strings.Builder
	for _, row := range cells {
		var line strings.Builder
		for c, v := range row {
			v = clip(v, widths[c])
			line.WriteString(v)
			if c < title {
				line.WriteString(strings.Repeat(" ", widths[c]-utf8.RuneCountInString(v)+gap))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteString("\n")
	}
	if hidden := len(p.keys) - len(keys); hidden > 0 {
		fmt.Fprintf(&b, "… %d more tasks\n", hidden)
	}
	if line := p.countdown(time.Now()); line != "" {
		b.WriteString(line + "\n")
	}
	var out strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&out, "\x1b[%dA", p.drawn)
	}
	out.WriteString("\r\x1b[J")
	out.WriteString(fitLines(b.String(), width))
	io.WriteString(p.w, out.String())
	p.drawn = strings.Count(b.String(), "\n")
}

// countdown returns the live table's line counting down to the parked
// tasks' resets ("parked: task 2 resumes in 1m3s (15:04:05)"), or "" when
// none is parked. p.mu is held.
func (p *progress) countdown(now time.Time) string {
	var parts []string
	for _, k := range p.keys {
		r := p.rows[k]
		if r.status != tasks.StatusParked || r.parkedUntil.IsZero() {
			continue
		}
		parts = append(parts, fmt.Sprintf("task %s resumes in %s (%s)", printable.String(r.id),
			max(r.parkedUntil.Sub(now), 0).Round(time.Second), r.parkedUntil.Local().Format("15:04:05")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "parked: " + strings.Join(parts, ", ")
}

// visible returns the keys of the rows that fit in n lines: all of them if
// they fit, else running rows first, then the others in order. p.mu is held.
func (p *progress) visible(n int) []string {
	if n < 1 {
		n = 1
	}
	if len(p.keys) <= n {
		return p.keys
	}
	n-- // the "… more tasks" line
	var out []string
	for _, running := range []bool{true, false} {
		for _, k := range p.keys {
			if len(out) < n && (p.rows[k].status == "running") == running {
				out = append(out, k)
			}
		}
	}
	return out
}

// notice prints a line for the operator, above the live table on a
// terminal, so that the table is redrawn below it rather than over it.
func (p *progress) notice(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA\r\x1b[J", p.drawn)
		p.drawn = 0
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

// ask runs f with the live table paused, for a question to the operator.
func (p *progress) ask(f func(io.Writer) string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drawn = 0
	return f(p.w)
}

// logWriter returns a writer for the orchestrator's own lines.
func (p *progress) logWriter() io.Writer { return lineWriter{p} }

type lineWriter struct{ p *progress }

func (l lineWriter) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	// One line per Write from the orchestrator: escape what is inside it
	// (a task id, an error message) and keep the line's own end.
	line, eol := strings.CutSuffix(string(b), "\n")
	if l.p.tty {
		// The table shows the tasks' progress; statgraph's own notices (an
		// edit of tasks.json it met) go above it, and the next redraw
		// draws the table again below them.
		if !strings.HasPrefix(line, "statgraph: ") {
			return len(b), nil
		}
		if l.p.drawn > 0 {
			fmt.Fprintf(l.p.w, "\x1b[%dA\x1b[J", l.p.drawn)
			l.p.drawn = 0
		}
	}
	out := printable.String(line)
	if eol {
		out += "\n"
	}
	if _, err := io.WriteString(l.p.w, out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// fitLines cuts every line of s to width-1 runes, so that none wraps on a
// terminal width columns wide; width <= 0 leaves s as it is.
func fitLines(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		l = clip(strings.TrimRight(l, " \n"), width-1)
		if nl {
			l += "\n"
		}
		lines[i] = l
	}
	return strings.Join(lines, "")
}

// clip returns s for one table cell: control characters escaped (see
// printable.String), then cut to n runes with an ellipsis.
func clip(s string, n int) string {
	s = printable.String(s)
	if r := []rune(s); len(r) > n {
		if n < 1 {
			return ""
		}
		return string(r[:n-1]) + "…"
	}
	return s
}

// unitJSON is one task's line of run --json.
type unitJSON struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Status    string `json:"status"`
	Reason    string `json:"reason"`
	Attempts  int    `json:"attempts"`
	Tokens    int    `json:"tokens"`
	ElapsedMS int64  `json:"elapsed_ms"`
	Branch    string `json:"branch"`
	// Usage is the task's spend; CostUSD its cost, null when unknown.
	Usage   llm.Usage `json:"usage"`
	CostUSD *float64  `json:"cost_usd"`
	// ParkedUntil is when a task the run left parked resumes.
	ParkedUntil *time.Time `json:"parked_until,omitempty"`
}

// printSummaryJSON prints one JSON object per task of the run, in file
// order.
func printSummaryJSON(w io.Writer, s dispatch.Summary) error {
	enc := json.NewEncoder(secret.NewWriter(w))
	for _, u := range s.Units {
		status := u.Status
		if status == "" {
			status = tasks.StatusPending
		}
		if err := enc.Encode(unitJSON{ID: u.ID, Title: u.Title, Status: status, Reason: u.Reason, Attempts: u.Attempts,
			Tokens: u.Tokens, Usage: u.Usage, CostUSD: u.Usage.KnownCost(), ElapsedMS: u.Elapsed.Milliseconds(), Branch: u.Branch, ParkedUntil: u.ParkedUntil}); err != nil {
			return err
		}
	}
	return nil
}

// printSummary prints the table of outcomes after a run, scrubbed of
// secrets, each line cut to width-1 columns when width > 0 (the width of
// the terminal it goes to).
func printSummary(w io.Writer, s dispatch.Summary, width int) {
	w = secret.NewWriter(w)
	if len(s.Units) == 0 {
		fmt.Fprintln(w, "no tasks")
		return
	}
	fmt.Fprintln(w)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tTOKENS\tCOST\tBRANCH\tNOTE")
	counts := map[string]int{}
	for _, u := range s.Units {
		counts[u.Status]++
		branch := u.Branch
		if branch == "" {
			branch = "-"
		}
		status := u.Status
		if status == "" {
			status = tasks.StatusPending
		}
		cost := "-"
		if u.Usage.Tokens() > 0 {
			cost = llm.FormatUSD(u.Usage.CostUSD, u.Usage.CostKnown())
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", printable.String(u.ID), status, u.Attempts, u.Tokens, cost, branch, clip(u.Reason, 70))
	}
	tw.Flush()
	io.WriteString(w, fitLines(b.String(), width))
	var parts []string
	for _, st := range []string{tasks.StatusDone, tasks.StatusFailed, tasks.StatusBlocked, tasks.StatusInterrupted, tasks.StatusParked, tasks.StatusPending} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	fmt.Fprintf(w, "\n%s\n", strings.Join(parts, ", "))
	if total := s.Usage(); total.Tokens() > 0 {
		fmt.Fprintf(w, "spent %d tokens (%d cached input), cost %s\n", total.Tokens(), total.Cached, costNote(total))
	}
	if s.Stopped != "" {
		fmt.Fprintf(w, "run stopped: %s\n", s.Stopped)
	}
}

// costNote is a total's cost, or "unknown" with how many tokens have no
// price.
func costNote(u llm.Usage) string {
	if u.CostKnown() {
		return llm.FormatUSD(u.CostUSD, true)
	}
	return fmt.Sprintf("unknown (%d tokens without a price; %s for the rest)", u.Unpriced, llm.FormatUSD(u.CostUSD, true))
}
