package agents

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/statgraph/statgraph/internal/secret"
)

// MaxLogTail bounds Attempt.Log: the last bytes of the agent's output (an
// agent CLI's combined stdout and stderr, or an LLM executor's last
// reply), cut at a line start where one is near.
const MaxLogTail = 4 << 10

// LogExecutor is an Executor that also returns the tail of what the agent
// printed during the attempt; the orchestrator keeps it, bounded to
// MaxLogTail and scrubbed of secrets, in the attempt's record (Attempt.Log).
// CommandExecutor and LLMExecutor are LogExecutors; an Executor that is
// not gets an empty log.
type LogExecutor interface {
	Executor
	ExecuteLog(ctx context.Context, s TaskState) (summary, log string, err error)
}

// executeLogged runs one attempt of ex, with its log when ex keeps one.
func executeLogged(ctx context.Context, ex Executor, s TaskState) (summary, log string, err error) {
	if le, ok := ex.(LogExecutor); ok {
		summary, log, err = le.ExecuteLog(ctx, s)
		return summary, logTail(log), err
	}
	summary, err = ex.Execute(ctx, s)
	return summary, "", err
}

// logTail returns the last MaxLogTail bytes of s, scrubbed of secrets,
// starting at a line when a line start is within the kept part's first
// quarter, and never in the middle of a UTF-8 sequence.
func logTail(s string) string {
	s = strings.TrimRight(secret.Scrub(s), "\n")
	if len(s) <= MaxLogTail {
		return s
	}
	s = s[len(s)-MaxLogTail:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < MaxLogTail/4 {
		return s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}
