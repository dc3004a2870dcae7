package llm

import (
	"fmt"
	"strings"
)

const executorSystemPrompt = `You are a coding agent working in a checkout of a repository. Use the tools to inspect and change files; every path is relative to the repository root, and you cannot leave it or touch .git. You cannot run commands: the task's tests and lint run after you finish.

Make the smallest change that completes the task and makes its tests pass. Read a file before replacing text in it. A tool result starting with "error:" means the call failed: read it and adjust. When the work is done, call finish with a short summary of what you changed.`

// BuildExecutorPrompt returns the task prompt of an executor attempt: the
// task, the plan (if any), "Attempt k of N" and, when req.Feedback is not
// empty, the verifier's feedback on the previous attempt. It is the user
// message of [Client.Execute] and the prompt file of command executors, so
// it names no tools. An Attempt below 1 counts as 1, and a MaxAttempts below
// Attempt as Attempt.
func BuildExecutorPrompt(req ExecRequest) string {
	var b strings.Builder
	writeTask(&b, req.Task)
	writeLessons(&b, req.Task)
	if p := req.Plan; p.Summary != "" || len(p.Steps) > 0 {
		b.WriteString("\n## Plan\n")
		if p.Summary != "" {
			b.WriteString(p.Summary + "\n")
		}
		if len(p.Steps) > 0 {
			b.WriteString("\nSteps:\n")
			for i, s := range p.Steps {
				fmt.Fprintf(&b, "%d. %s\n", i+1, s)
			}
		}
		if len(p.Files) > 0 {
			fmt.Fprintf(&b, "\nFiles: %s\n", strings.Join(p.Files, ", "))
		}
		if p.TestStrategy != "" {
			fmt.Fprintf(&b, "\nTest strategy: %s\n", p.TestStrategy)
		}
	}
	k := max(req.Attempt, 1)
	n := max(req.MaxAttempts, k)
	fmt.Fprintf(&b, "\n## Attempt %d of %d\n", k, n)
	if fb := strings.TrimSpace(req.Feedback); fb != "" {
		b.WriteString("The previous attempt did not pass verification. Fix these problems first:\n\n")
		b.WriteString(fb + "\n")
	} else if k == 1 {
		b.WriteString("This is the first attempt.\n")
	}
	return b.String()
}
