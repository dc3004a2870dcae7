package control

// This file sends a run's notifications (--notify URL, --notify-cmd CMD,
// tasks.json defaults.notify): a JSON summary when the run ends, and one
// for each event of the dispatcher worth waking someone for.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/verifier"
)

// Notify says where a run's notifications go. The zero value sends none.
type Notify struct {
	// URL is POSTed each notification as JSON (Content-Type
	// application/json); "" for none.
	URL string
	// Cmd, the operator's shell command, is run for each notification
	// with the JSON on its standard input, instead of a POST to URL.
	Cmd string
}

// notifyTimeout bounds one notification: the POST and its reply, or the
// command.
const notifyTimeout = 10 * time.Second

// Message is one notification, as JSON. Text says it in a line, so that a
// Slack (or compatible) incoming webhook shows it as it is.
type Message struct {
	// Event is what happened: "end" (the run ended), "question" (a task
	// asks retry, skip or abort, or for its plan's approval), "all-parked"
	// (every task left waits for a usage limit's reset, until Until).
	Event string `json:"event"`
	Text  string `json:"text"`
	// Plan is the tasks file's path.
	Plan string `json:"plan"`
	// Task, Title and Reason are the task's, for an event about one task.
	Task   string `json:"task,omitempty"`
	Title  string `json:"title,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Until is when the first parked task's limit resets ("all-parked").
	Until *time.Time `json:"until,omitempty"`
	// Counts, Duration, Spend and Error are the run's, at its end: the
	// tasks per state, how long it ran (seconds), what it spent, and why
	// it stopped early ("" when it ran to its end).
	Counts   map[string]int `json:"counts,omitempty"`
	Duration float64        `json:"duration_s,omitempty"`
	Spend    *Spend         `json:"spend,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// Spend is what a run spent: tokens, and their cost in US dollars (null
// when some of it is unknown: a model without a price).
type Spend struct {
	Tokens  int      `json:"tokens"`
	CostUSD *float64 `json:"cost_usd"`
}

// Notifier sends one run's notifications to where its Notify says. A
// notification that fails (refused, past 10 s, a reply other than 2xx, a
// command exiting non-zero) is written to the log once and never fails
// the run. A nil *Notifier sends nothing. It is safe for concurrent use.
type Notifier struct {
	to     Notify
	plan   string
	log    io.Writer
	client *http.Client
	wg     sync.WaitGroup // the notifications being sent
}

// NewNotifier returns the Notifier of a run of the tasks file file: to
// n, or else to the tasks file's defaults.notify URL (given as
// defaultURL); nil when neither names anything. Failures go to log (nil:
// discarded).
func NewNotifier(n Notify, defaultURL, file string, log io.Writer) *Notifier {
	if n.URL == "" && n.Cmd == "" {
		n.URL = defaultURL
	}
	if n.URL == "" && n.Cmd == "" {
		return nil
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	if log == nil {
		log = io.Discard
	}
	return &Notifier{to: n, plan: file, log: log, client: &http.Client{Timeout: notifyTimeout}}
}

// Report returns a dispatcher Report hook that passes every event on to
// next (nil: none) and sends a notification for the events worth one.
func (n *Notifier) Report(next func(dispatch.Event)) func(dispatch.Event) {
	if n == nil {
		return next
	}
	return func(e dispatch.Event) {
		if next != nil {
			next(e)
		}
		switch e.Kind {
		case dispatch.EventQuestion:
			n.send(Message{Event: "question", Task: e.Unit, Title: e.Title, Reason: e.Reason,
				Text: fmt.Sprintf("statgraph: task %s (%s) of %s asks: %s Answer in statgraph serve, mcp, or resume in a terminal.", e.Unit, e.Title, n.plan, e.Reason)})
		case dispatch.EventAllParked:
			until := e.Until
			n.send(Message{Event: "all-parked", Until: &until,
				Text: fmt.Sprintf("statgraph: every task left in %s waits for a usage limit's reset; the run goes on by itself at %s.", n.plan, until.Format(time.RFC3339))})
		}
	}
}

// End sends the run's summary (its units' states, how long it ran, the
// tokens they used, and err, why it stopped early) and waits until every
// notification of the run is sent or has failed.
func (n *Notifier) End(sum dispatch.Summary, err error, elapsed time.Duration) {
	if n == nil {
		return
	}
	m := Message{Event: "end", Counts: map[string]int{}, Duration: elapsed.Round(time.Millisecond).Seconds(), Spend: &Spend{}}
	var usage llm.Usage
	for _, u := range sum.Units {
		m.Counts[u.Status]++
		m.Spend.Tokens += u.Tokens
		usage = usage.Plus(u.Usage)
	}
	m.Spend.CostUSD = usage.KnownCost()
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(m.Counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", m.Counts[s], s))
	}
	m.Text = fmt.Sprintf("statgraph: the run of %s ended after %s: %s; %d tokens", n.plan, elapsed.Round(time.Second), strings.Join(parts, ", "), m.Spend.Tokens)
	if err != nil {
		m.Error = err.Error()
		m.Text += "; stopped early: " + m.Error
	}
	n.send(m)
	n.wg.Wait()
}

// send sends m in the background (End waits for it).
func (n *Notifier) send(m Message) {
	m.Plan = n.plan
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	n.wg.Go(func() {
		if err := n.deliver(data); err != nil {
			fmt.Fprintf(n.log, "statgraph: warning: the %s notification was not delivered: %v (the run goes on)\n", m.Event, err)
		}
	})
}

// deliver sends one notification, to the command or the URL.
func (n *Notifier) deliver(data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	if n.to.Cmd != "" {
		res, err := verifier.Run(ctx, verifier.Command{Shell: n.to.Cmd, Stdin: bytes.NewReader(data), Timeout: notifyTimeout, MaxOutput: 4 << 10})
		switch {
		case err != nil:
			return fmt.Errorf("--notify-cmd: %w", err)
		case res.TimedOut:
			return fmt.Errorf("--notify-cmd did not end within %s", notifyTimeout)
		case res.ExitCode != 0:
			return fmt.Errorf("--notify-cmd exited with status %d: %s", res.ExitCode, strings.TrimSpace(res.Output))
		}
		return nil
	}
	// A webhook's path is its secret (Slack's is): messages name the
	// host only.
	where := "the --notify URL"
	if u, err := url.Parse(n.to.URL); err == nil {
		where = u.Scheme + "://" + u.Host
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.to.URL, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("POST to %s: the URL is not valid", where)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("POST to %s: %w", where, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST to %s: %s", where, resp.Status)
	}
	return nil
}
