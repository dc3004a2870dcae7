package tasks

import (
	"strings"
	"time"
)

// Command is a command field of the file (test_cmd, lint_cmd, setup_cmd, a
// check's cmd): a string, run with sh -c (Shell), or an array of strings,
// run directly without a shell (Argv). The zero Command means none. The
// dispatcher hands it to the verifier's process runner, which defines how
// it runs (sandbox, environment, output cap).
type Command struct {
	// Shell is the command as a string, run as `sh -c Shell`; it comes
	// from the file the user wrote, never from model output.
	Shell string
	// Argv is the program and its arguments.
	Argv []string
	// Timeout is a check's "timeout" (10m when absent); 0 for the other
	// command fields, whose bound the dispatcher sets.
	Timeout time.Duration
}

// IsZero reports whether c names no command.
func (c Command) IsZero() bool { return c.Shell == "" && len(c.Argv) == 0 }

// String shows the command as a person would type it: Shell, else Argv
// joined by spaces.
func (c Command) String() string {
	if c.Shell != "" {
		return c.Shell
	}
	return strings.Join(c.Argv, " ")
}

// Check is one entry of a task's "checks": a command the verifier runs
// besides test_cmd and lint_cmd, with its own enforcement mode (see
// Task.Checks).
type Check struct {
	Name    string  // unique within the task
	Command Command // cmd; Command.Timeout is the check's timeout
	Kind    string  // one of CheckKinds, or "" (other)
	Mode    string  // one of CheckModes, or "" (blocking)
}

// CheckKinds lists the kinds a check may have ("kind"), and CheckModes
// its enforcement modes ("mode"), as the verifier names them.
var (
	CheckKinds = []string{"test", "lint", "other"}
	CheckModes = []string{"blocking", "advisory", "informational"}
)
