package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/statgraph/statgraph/internal/printable"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/tasks"
)

// progress shows what the dispatcher is doing: a live table on a terminal,
// one line per change otherwise.
type progress struct {
	w     io.Writer
	tty   bool
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
}

// newProgress returns a progress writing to w; everything it writes is
// scrubbed of secrets (task titles, notes, orchestrator lines).
func newProgress(w io.Writer, tty bool) *progress {
	return &progress{w: secret.NewWriter(w), tty: tty, rows: map[string]*row{}}
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
func (p *progress) event(e tasks.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rows[e.Unit]
	if r == nil {
		r = &row{id: e.Unit, title: e.Title, started: time.Now()}
		p.rows[e.Unit] = r
		p.keys = append(p.keys, e.Unit)
	}
	before := r.phase + "/" + r.status + fmt.Sprint(r.attempt)
	switch e.Kind {
	case tasks.EventStart:
		r.status, r.max = "running", e.MaxAttempts
	case tasks.EventProgress:
		r.phase, r.attempt, r.tokens = e.Phase, e.Attempt, e.Tokens
		if e.MaxAttempts > 0 {
			r.max = e.MaxAttempts
		}
	case tasks.EventFinish, tasks.EventBlocked:
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

// redraw repaints the live table in place. p.mu is held.
func (p *progress) redraw() {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tTITLE\tSTATUS\tPHASE\tATTEMPT\tELAPSED\tTOKENS")
	for _, k := range p.keys {
		r := p.rows[k]
		el := r.elapsed
		if r.status == "running" {
			el = time.Since(r.started)
		}
		att := "-"
		if r.attempt > 0 {
			att = fmt.Sprintf("%d/%d", r.attempt, r.max)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", printable.String(r.id), clip(r.title, 40), r.status, clip(r.phase, 40), att, el.Round(100*time.Millisecond), r.tokens)
	}
	tw.Flush()
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA\x1b[J", p.drawn)
	}
	io.WriteString(p.w, b.String())
	p.drawn = strings.Count(b.String(), "\n")
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

// clip returns s for one table cell: control characters escaped (see
// printable.String), then cut to n runes with an ellipsis.
func clip(s string, n int) string {
	s = printable.String(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// printSummary prints the table of outcomes after a run, scrubbed of
// secrets.
func printSummary(w io.Writer, s tasks.Summary) {
	w = secret.NewWriter(w)
	if len(s.Units) == 0 {
		fmt.Fprintln(w, "no tasks")
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tATTEMPTS\tTOKENS\tBRANCH\tNOTE")
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", printable.String(u.ID), status, u.Attempts, u.Tokens, branch, clip(u.Reason, 70))
	}
	tw.Flush()
	var parts []string
	for _, st := range []string{tasks.StatusDone, tasks.StatusFailed, tasks.StatusBlocked, tasks.StatusInterrupted, tasks.StatusPending} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	fmt.Fprintf(w, "\n%s\n", strings.Join(parts, ", "))
}
