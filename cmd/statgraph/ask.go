package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/internal/printable"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// askOnTerminal asks the operator what to do with a task that ran out of
// retries, or whether to go on with a task's plan (approve_plan). The
// lines of in are read by one goroutine for the whole run, so that a
// question answered elsewhere (ctx done) stops waiting at once.
func askOnTerminal(p *progress, in io.Reader) func(context.Context, string, agents.Escalation) (gate.Reply, error) {
	lines := make(chan string)
	go func() {
		defer close(lines)
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return func(ctx context.Context, unit string, e agents.Escalation) (gate.Reply, error) {
		t := &terminalAsk{lines: lines, ctx: ctx}
		var r gate.Reply
		p.ask(func(w io.Writer) string {
			t.w = w
			if e.Kind == gate.KindApproval {
				r = t.approval(unit, e)
			} else {
				r = t.exhausted(unit, e)
			}
			return string(r.Answer)
		})
		return r, ctx.Err()
	}
}

// terminalAsk is one question asked on the terminal.
type terminalAsk struct {
	lines <-chan string
	ctx   context.Context
	w     io.Writer
}

// line returns the next line typed, trimmed; ok is false when the input
// ended or the question was answered elsewhere (ctx done).
func (t *terminalAsk) line() (string, bool) {
	select {
	case line, ok := <-t.lines:
		return strings.TrimSpace(line), ok
	case <-t.ctx.Done():
		fmt.Fprintln(t.w, "\nanswered elsewhere.")
		return "", false
	}
}

func (t *terminalAsk) exhausted(unit string, e agents.Escalation) gate.Reply {
	fmt.Fprintf(t.w, "\ntask %s (%s) failed %d attempts. Last errors:\n", printable.String(unit), printable.String(e.Title), e.Attempts)
	for _, l := range e.Errors {
		fmt.Fprintf(t.w, "  - %s\n", printable.String(l))
	}
	for {
		fmt.Fprint(t.w, "[r]etry (reset the attempts), [s]kip (mark done with a warning), [a]bort (mark failed)? ")
		line, ok := t.line()
		switch strings.ToLower(line) {
		case "r", "retry":
			return gate.Reply{Answer: gate.AnswerRetry}
		case "s", "skip":
			return gate.Reply{Answer: gate.AnswerSkip}
		case "a", "abort":
			return gate.Reply{Answer: gate.AnswerAbort}
		}
		if !ok {
			return gate.Reply{Answer: gate.AnswerAbort} // ignored when ctx is done
		}
	}
}

// approval shows the plan and asks approve, edit (the new plan typed as
// lines ending with one holding "."; JSON or text, see agents.ParsePlan)
// or reject (then the reason on one line). When the input ends the
// question waits for an answer from elsewhere (statgraph serve or mcp) or
// for the run to stop: a closed input never decides a plan.
func (t *terminalAsk) approval(unit string, e agents.Escalation) gate.Reply {
	fmt.Fprintf(t.w, "\ntask %s (%s) has a plan to approve:\n", printable.String(unit), printable.String(e.Title))
	for _, l := range strings.Split(e.Proposal, "\n") {
		fmt.Fprintf(t.w, "  %s\n", printable.String(l))
	}
	for {
		fmt.Fprint(t.w, "[a]pprove, [e]dit (type the new plan, then a line with only \".\"), [r]eject (then the reason)? ")
		line, ok := t.line()
		if !ok {
			<-t.ctx.Done()
			return gate.Reply{} // ignored: ctx is done
		}
		switch strings.ToLower(line) {
		case "a", "approve":
			return gate.Reply{Answer: gate.AnswerApprove}
		case "r", "reject":
			fmt.Fprint(t.w, "reason: ")
			reason, _ := t.line()
			return gate.Reply{Answer: gate.AnswerReject, Text: reason}
		case "e", "edit":
			var b strings.Builder
			for {
				l, ok := t.line()
				if !ok {
					<-t.ctx.Done()
					return gate.Reply{} // ignored: ctx is done
				}
				if l == "." {
					break
				}
				b.WriteString(l + "\n")
			}
			if _, err := agents.ParsePlan(b.String()); err != nil {
				fmt.Fprintf(t.w, "%s\n", printable.String(err.Error()))
				continue
			}
			return gate.Reply{Answer: gate.AnswerEdit, Text: b.String()}
		}
	}
}
