// Package gittest sets up git repositories for tests: a repository with a
// committed file, a bare remote, a clone, a commit, a ref read back. Every
// git it runs is the git program with the environment of Env: the caller's
// environment without its GIT_* variables, no system or global
// configuration, a fixed identity and the C locale, so that a test gives
// the same result on a developer's machine (with its own git
// configuration, or inside a git hook that sets GIT_DIR) as in CI.
//
// Each helper fails the test (tb.Fatal) when git fails, with git's output.
// The helpers are safe for concurrent use by parallel tests.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Identity is the author and committer of the commits the helpers make.
const (
	Name  = "statgraph test"
	Email = "test@statgraph.invalid"
)

// Env returns the environment the helpers run git in: the caller's
// environment without GIT_* variables and LC_ALL, plus no system or global
// configuration, the identity Name <Email> and the C locale.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_ALL=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME="+Name, "GIT_AUTHOR_EMAIL="+Email,
		"GIT_COMMITTER_NAME="+Name, "GIT_COMMITTER_EMAIL="+Email,
		"GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
	)
}

// Git runs git with args in dir (the test's working directory when dir is
// "") and returns its output, standard output and error together, with
// surrounding white space trimmed.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// WriteFiles writes files (a slash-separated path relative to dir ->
// content) under dir with mode 0644, making the directories they need.
func WriteFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// Init makes dir (created when missing) a repository on branch main whose
// one commit, "initial commit", holds files (see WriteFiles) and
// everything dir held already. It returns dir.
func Init(tb testing.TB, dir string, files map[string]string) string {
	tb.Helper()
	WriteFiles(tb, dir, files)
	Git(tb, dir, "init", "-q", "-b", "main")
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "commit", "-q", "--allow-empty", "-m", "initial commit")
	return dir
}

// Repo makes a repository in a new temporary directory, as Init does, and
// returns its path.
func Repo(tb testing.TB, files map[string]string) string {
	tb.Helper()
	return Init(tb, tb.TempDir(), files)
}

// Bare makes an empty bare repository whose HEAD names branch main,
// remote.git in a new temporary directory, and returns its path.
func Bare(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "remote.git")
	Git(tb, "", "init", "-q", "--bare", "-b", "main", dir)
	return dir
}

// Clone clones the repository src (a path or URL) into a new temporary
// directory with git clone's extra options args (e.g. "--bare") and
// returns the clone's path.
func Clone(tb testing.TB, src string, args ...string) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "clone")
	Git(tb, "", append(append([]string{"clone", "-q"}, args...), "--", src, dir)...)
	return dir
}

// Commit writes files into the work tree dir (see WriteFiles), commits
// every change there with message and returns the new commit's hash. A
// commit that changes nothing is made all the same.
func Commit(tb testing.TB, dir, message string, files map[string]string) string {
	tb.Helper()
	WriteFiles(tb, dir, files)
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "commit", "-q", "--allow-empty", "-m", message)
	return Rev(tb, dir, "HEAD")
}

// Rev returns the hash of the commit that rev (a ref, a branch, HEAD...)
// names in the repository dir.
func Rev(tb testing.TB, dir, rev string) string {
	tb.Helper()
	return Git(tb, dir, "rev-parse", "--verify", "-q", rev+"^{commit}")
}
