package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Every git process statgraph starts goes through RunGit, with one
// profile (GitEnviron): nothing of the caller's GIT_* environment, so a
// GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_GLOBAL or GIT_CONFIG_PARAMETERS that
// statgraph was started with cannot point git at another repository or
// configuration; no prompt on a terminal or through an askpass program
// (git fails instead, saying it needed credentials); the C locale, so
// messages callers parse are git's own; a session and process group of
// its own, killed whole when the context ends; and a cap on what is kept
// of its output.

// ErrNoGit: the git program is not on PATH.
var ErrNoGit = errors.New("the git program is not on PATH; install git (apt-get install git) and try again")

// ErrGitOutput is wrapped by the *GitOutputError RunGit returns when git
// wrote more than Git.MaxOutput bytes to its standard output.
var ErrGitOutput = errors.New("git wrote more output than statgraph keeps")

// DefaultMaxGitOutput is what RunGit keeps of git's standard output when
// Git.MaxOutput is zero: far above anything statgraph asks git for (ref
// lists, object names, a diff), so reaching it means something is wrong.
const DefaultMaxGitOutput = 64 << 20

// maxGitStderr is what RunGit keeps of git's standard error for its error.
const maxGitStderr = 64 << 10

// gitWaitDelay bounds how long RunGit waits for git's output pipes after
// git's process group was killed.
const gitWaitDelay = 5 * time.Second

// Git is how RunGit runs git. The zero value runs it in the current
// directory with the profile alone.
type Git struct {
	// Dir is the directory git runs in; "" is the current directory.
	Dir string
	// Env is added to the profile (GitEnviron): the GIT_* settings the
	// caller means (GIT_INDEX_FILE, GIT_OPTIONAL_LOCKS...). nil adds
	// nothing.
	Env []string
	// MaxOutput is how many bytes of git's standard output are kept;
	// zero means DefaultMaxGitOutput.
	MaxOutput int
}

// GitError is a run of git that did not exit 0: its text names the
// command and the directory and carries git's standard error. It unwraps
// to the *exec.ExitError (or the error that kept git from running to an
// exit).
type GitError struct {
	Args   []string
	Dir    string
	Stderr string
	Err    error
}

// Error returns "git ARGS in DIR: STDERR".
func (e *GitError) Error() string {
	msg := e.Stderr
	if msg == "" {
		msg = e.Err.Error()
	}
	where := ""
	if e.Dir != "" {
		where = " in " + e.Dir
	}
	return fmt.Sprintf("git %s%s: %s", redactArgs(e.Args), where, msg)
}

// redactArgs joins args with spaces, with the password of any URL among
// them (a remote's https://user:token@host/...) replaced by "xxxxx".
func redactArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if u, err := url.Parse(a); err == nil && u.User != nil {
			out[i] = u.Redacted()
		}
	}
	return strings.Join(out, " ")
}

// Unwrap returns the error of the process.
func (e *GitError) Unwrap() error { return e.Err }

// ExitCode returns git's exit code, or -1 when git did not run to an exit.
func (e *GitError) ExitCode() int {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// GitOutputError is a run of git whose standard output went over the cap:
// RunGit returned the first Limit bytes of Total. It wraps ErrGitOutput.
type GitOutputError struct {
	Args  []string
	Limit int
	Total int64
}

// Error says what was cut.
func (e *GitOutputError) Error() string {
	return fmt.Sprintf("git %s wrote %d bytes; statgraph keeps %d", redactArgs(e.Args), e.Total, e.Limit)
}

// Unwrap returns ErrGitOutput.
func (e *GitOutputError) Unwrap() error { return ErrGitOutput }

// GitEnviron returns the environment of the git profile with extra added:
// this process's environment without any GIT_* variable and without
// SSH_ASKPASS, plus GIT_TERMINAL_PROMPT=0, an empty GIT_ASKPASS (which
// git reads as "no askpass program", core.askPass included),
// GIT_CONFIG_NOSYSTEM=1 and LC_ALL=C. HOME is kept, so the user's
// ~/.gitconfig (identity, credential helpers, core.sshCommand) applies.
func GitEnviron(extra ...string) []string {
	parent := os.Environ()
	env := make([]string, 0, len(parent)+4+len(extra))
	for _, kv := range parent {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") || name == "SSH_ASKPASS" || name == "LC_ALL" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	return append(env, extra...)
}

// RunGit runs the git program with args as g says, under the git profile
// (GitEnviron), with standard input empty, and returns its standard
// output. It fails with ErrNoGit when git is not on PATH, with a
// *GitError when git exits non-zero, with ctx's error when ctx ends
// (git's whole process group is killed then; git's own lock files and
// temporary names keep a repository consistent), and with a
// *GitOutputError, beside the output kept, when git wrote more than the
// cap. Safe for concurrent use.
func RunGit(ctx context.Context, g Git, args ...string) ([]byte, error) {
	path, err := exec.LookPath("git")
	if err != nil {
		return nil, ErrNoGit
	}
	limit := g.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxGitOutput
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = g.Dir
	cmd.Env = GitEnviron(g.Env...)
	group := &Group{WaitDelay: gitWaitDelay, Session: true}
	group.Setup(cmd)
	stdout, stderr := &capped{limit: limit}, NewCapBuffer(maxGitStderr)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	group.End()
	if err != nil {
		if ctx.Err() != nil {
			return stdout.buf.Bytes(), ctx.Err()
		}
		return stdout.buf.Bytes(), &GitError{Args: args, Dir: g.Dir, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	if stdout.total > int64(limit) {
		return stdout.buf.Bytes(), &GitOutputError{Args: args, Limit: limit, Total: stdout.total}
	}
	return stdout.buf.Bytes(), nil
}

// capped keeps the first limit bytes written to it and counts the rest,
// so that git never blocks on a full pipe.
type capped struct {
	buf   bytes.Buffer
	limit int
	total int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.limit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
