package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNoGit: the git program is not on PATH. The workspace itself, and
// publishing a branch into the user's repository, work in-process (go-git
// and this package's own pack and ref writing); the git program is needed
// for what they do not do: merging dependencies' branches (git merge-tree
// and commit-tree), checking that a published branch can be read
// (CheckPublished: git rev-list), listing the user's uncommitted changes
// (Uncommitted: git status) and diffing a live workspace's uncommitted work.
var ErrNoGit = errors.New("workspace: the git program is not on PATH; install git (apt-get install git) and try again")

// gitEnv is the environment git runs with: the parent's, minus anything that
// would point git at another repository, change what it reads from the
// user's configuration beyond their identity, or prompt on a terminal.
func gitEnv() []string {
	env := make([]string, 0, len(os.Environ())+3)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") && !isGitIdentityVar(name) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
}

func isGitIdentityVar(name string) bool {
	switch name {
	case "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
		"GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE":
		return true
	}
	return false
}

// runGit runs the git program in dir with args and returns its standard
// output. A non-zero exit is an error carrying git's standard error, so the
// caller can say what went wrong. Cancelling ctx kills git; git's own
// lock files and temporary names keep the repository consistent when that
// happens.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return runGitEnv(ctx, dir, gitEnv(), args...)
}

// runGitEnv is runGit with the environment env.
func runGitEnv(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	path, err := exec.LookPath("git")
	if err != nil {
		return nil, ErrNoGit
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return stdout.Bytes(), ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.Bytes(), &gitError{text: fmt.Sprintf("git %s in %s: %s", strings.Join(args, " "), dir, msg), err: err}
	}
	return stdout.Bytes(), nil
}

// gitError is a failed run of git: its text names the command and carries
// git's standard error; it unwraps to the *exec.ExitError, for callers to
// whom an exit code means something (merge-tree exits 1 on a conflict).
type gitError struct {
	text string
	err  error
}

func (e *gitError) Error() string { return e.text }
func (e *gitError) Unwrap() error { return e.err }

// gitExitCode returns the exit code of the git run that failed with err, or
// -1 when git did not run to an exit.
func gitExitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
