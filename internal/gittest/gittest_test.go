package gittest

import (
	"os"
	"path/filepath"
	"testing"
)

// The helpers make a repository, push its commit to a bare remote, clone
// that and read the same commit back, signed by the fixed identity, with
// the caller's GIT_DIR and global configuration (a hooks path that fails
// every commit) ignored.
func TestRepoBareCloneCommitRev(t *testing.T) {
	elsewhere := Repo(t, nil)
	home := t.TempDir()
	global := filepath.Join(home, ".gitconfig")
	hooks := filepath.Join(home, "hooks")
	WriteFiles(t, hooks, map[string]string{"pre-commit": "#!/bin/sh\nexit 1\n"})
	if err := os.Chmod(filepath.Join(hooks, "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	WriteFiles(t, home, map[string]string{".gitconfig": "[core]\n\thooksPath = " + hooks + "\n"})
	t.Setenv("GIT_DIR", filepath.Join(elsewhere, ".git"))
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", global)

	repo := Repo(t, map[string]string{"a.txt": "alpha\n", "dir/b.txt": "beta\n"})
	second := Commit(t, repo, "second", map[string]string{"a.txt": "changed\n"})
	if got := Rev(t, repo, "main"); got != second {
		t.Fatalf("Rev(main) = %s; want %s, the commit Commit made", got, second)
	}
	if got := Rev(t, elsewhere, "HEAD"); got == second {
		t.Fatalf("the commit landed in the repository GIT_DIR named")
	}
	if got, want := Git(t, repo, "log", "-1", "--format=%an <%ae> %s"), Name+" <"+Email+"> second"; got != want {
		t.Fatalf("last commit is %q; want %q", got, want)
	}

	remote := Bare(t)
	Git(t, repo, "push", "-q", remote, "main")
	clone := Clone(t, remote)
	if got := Rev(t, clone, "HEAD"); got != second {
		t.Fatalf("the clone's HEAD is %s; want %s", got, second)
	}
	b, err := os.ReadFile(filepath.Join(clone, "dir", "b.txt"))
	if err != nil || string(b) != "beta\n" {
		t.Fatalf("the clone's dir/b.txt: %q, %v; want %q", b, err, "beta\n")
	}
	if bare := Clone(t, repo, "--bare"); Git(t, bare, "rev-parse", "--is-bare-repository") != "true" {
		t.Fatalf("Clone with --bare made a work tree in %s", bare)
	}
}
