package queue

// This file is a worker's clone of the shared git remote: a clone without
// a checkout (workspaces clone from a repository with a .git) under the
// worker's state root that units' workspaces are
// cloned from and published into (as in a local run), and that pushes the
// published branches to the remote.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/statgraph/statgraph/agents/workspace"
)

// mirror is a clone of one remote, with no files checked out. Its methods are safe for
// concurrent use: git commands that change refs run one at a time.
type mirror struct {
	remote, dir string
	// head is the ref the mirror's HEAD names (the remote's default
	// branch when cloned); it never changes, so it is read once.
	head string
	mu   sync.Mutex
}

// mirrors hands out one mirror per remote.
type mirrors struct {
	root string
	mu   sync.Mutex
	m    map[string]*mirror
}

func (ms *mirrors) get(ctx context.Context, remote string) (*mirror, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if m, ok := ms.m[remote]; ok {
		return m, nil
	}
	dir := filepath.Join(ms.root, "remotes", workspace.KeyedName(strings.TrimSuffix(filepath.Base(remote), ".git"), 8, remote))
	if _, err := os.Stat(filepath.Join(dir, ".git", "HEAD")); err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, err
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), ".clone-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if _, err := git(ctx, "", "clone", "--no-checkout", "--quiet", remote, tmp); err != nil {
			return nil, fmt.Errorf("clone the remote %s: %w; check the URL and that this machine can reach it", remote, err)
		}
		os.RemoveAll(dir) // a half-made clone a killed worker left
		if err := os.Rename(tmp, dir); err != nil {
			return nil, err
		}
	}
	if ms.m == nil {
		ms.m = map[string]*mirror{}
	}
	head, err := git(ctx, dir, "symbolic-ref", "HEAD")
	if err != nil {
		return nil, err
	}
	m := &mirror{remote: remote, dir: dir, head: strings.TrimSpace(head)}
	ms.m[remote] = m
	return m, nil
}

// fetch brings the remote's default branch and the given branches (those
// the remote has) into the mirror. Only these: a branch a unit of this
// worker has published but not pushed yet is never overwritten.
func (m *mirror) fetch(ctx context.Context, branches []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	specs := []string{"+HEAD:" + m.head}
	if len(branches) > 0 {
		args := []string{"ls-remote", "--heads", m.remote}
		for _, b := range branches {
			args = append(args, "refs/heads/"+b)
		}
		out, err := git(ctx, m.dir, args...)
		if err != nil {
			return fmt.Errorf("list branches on the remote %s: %w", m.remote, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				specs = append(specs, "+"+f[1]+":"+f[1])
			}
		}
	}
	if _, err := git(ctx, m.dir, append([]string{"fetch", "--quiet", "--no-tags", "--update-head-ok", m.remote}, specs...)...); err != nil {
		return fmt.Errorf("fetch from the remote %s: %w", m.remote, err)
	}
	return nil
}

// push sets branch on the remote to commit (which the mirror has),
// replacing what is there (a worker that died after pushing, before
// recording its result, left an earlier version of the same unit).
func (m *mirror) push(ctx context.Context, commit, branch string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := git(ctx, m.dir, "push", "--quiet", "--force", m.remote, commit+":refs/heads/"+branch); err != nil {
		return fmt.Errorf("push %s to the remote %s: %w", branch, m.remote, err)
	}
	return nil
}

// commit returns the commit branch points to in the mirror: read from its
// loose ref file (as publishing writes it, renamed into place under git's
// lock protocol), or by git when the ref is packed or not a plain hash.
func (m *mirror) commit(ctx context.Context, branch string) (string, error) {
	if b, err := os.ReadFile(filepath.Join(m.dir, ".git", "refs", "heads", filepath.FromSlash(branch))); err == nil {
		if h := strings.TrimSpace(string(b)); isHash(h) {
			return h, nil
		}
	}
	out, err := git(ctx, m.dir, "rev-parse", "--verify", "refs/heads/"+branch+"^{commit}")
	return strings.TrimSpace(out), err
}

// isHash reports whether s is a full SHA-1 or SHA-256 object name.
func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// has reports whether the mirror holds commit.
func (m *mirror) has(ctx context.Context, commit string) bool {
	_, err := git(ctx, m.dir, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

// remoteCommit returns the commit branch points to on the remote, "" when
// the remote has no such branch.
func (m *mirror) remoteCommit(ctx context.Context, branch string) (string, error) {
	out, err := git(ctx, m.dir, "ls-remote", "--heads", m.remote, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	if f := strings.Fields(out); len(f) == 2 {
		return f[0], nil
	}
	return "", nil
}

// git runs git with args in dir ("" for the current directory), never
// asking for credentials on a terminal, and returns its output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
