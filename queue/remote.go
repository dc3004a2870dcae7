package queue

// This file is a worker's clone of the shared git remote: a clone without
// a checkout (workspaces clone from a repository with a .git) under the
// worker's state root that units' workspaces are
// cloned from and published into (as in a local run), and that pushes the
// published branches to the remote.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/internal/proc"
)

// mirror is a clone of one remote, with no files checked out. Its methods are safe for
// concurrent use: git commands that change refs run one at a time.
type mirror struct {
	remote, dir string
	// head is the ref the mirror's HEAD names (the remote's default
	// branch when cloned); it never changes, so it is read once.
	head string
	mu   sync.Mutex
	// fetches counts fetches, for housekeeping (see fetch).
	fetches int
}

// maintainEvery is how many fetches into a mirror run git's automatic
// housekeeping once.
const maintainEvery = 50

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
	// Housekeeping runs every maintainEvery fetches, not after each (it is
	// a git process of its own).
	if _, err := git(ctx, m.dir, append([]string{"-c", "maintenance.auto=false", "fetch", "--quiet", "--no-tags", "--update-head-ok", m.remote}, specs...)...); err != nil {
		return fmt.Errorf("fetch from the remote %s: %w", m.remote, err)
	}
	if m.fetches++; m.fetches%maintainEvery == 0 {
		git(ctx, m.dir, "maintenance", "run", "--auto", "--quiet") // best effort, as git's own
	}
	return nil
}

// at reports whether the mirror's default branch is at commit (read from
// its files, no git process).
func (m *mirror) at(ctx context.Context, commit string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	got, err := refCommit(ctx, m.dir, m.head)
	return err == nil && got == commit
}

// push sets branch on the remote to commit (which the mirror has),
// replacing what is there (a worker that died after pushing, before
// recording its result, left an earlier version of the same unit).
func (m *mirror) push(ctx context.Context, commit, branch string) error {
	return m.pushRefs(ctx, branch, workspace.RefUpdate{Name: "refs/heads/" + branch, New: commit})
}

// publish sets branch on the remote to commit and deletes the unit's
// work-in-progress branch wip there, atomically: the remote takes both or
// neither, so wip is never gone before the published branch is safely
// there. A wip already gone (an earlier attempt published and was cut off
// before recording it) is no error, as with git push.
func (m *mirror) publish(ctx context.Context, commit, branch, wip string) error {
	return m.pushRefs(ctx, branch,
		workspace.RefUpdate{Name: "refs/heads/" + branch, New: commit},
		workspace.RefUpdate{Name: "refs/heads/" + wip})
}

// pushRefs applies updates to the remote from the mirror (see
// pushRemote), one push of the mirror at a time; what names the branch in
// its error.
func (m *mirror) pushRefs(ctx context.Context, what string, updates ...workspace.RefUpdate) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := pushRemote(ctx, m.dir, m.remote, updates...); err != nil {
		return fmt.Errorf("push %s: %w", what, err)
	}
	return nil
}

// deleteBranch deletes branch on the remote; a branch already gone is not
// an error.
func (m *mirror) deleteBranch(ctx context.Context, branch string) error {
	got, err := m.remoteCommit(ctx, branch)
	if err != nil || got == "" {
		return err
	}
	return m.pushRefs(ctx, branch, workspace.RefUpdate{Name: "refs/heads/" + branch, Old: got, Lease: true})
}

// commit returns the commit branch points to in the mirror (see
// refCommit).
func (m *mirror) commit(ctx context.Context, branch string) (string, error) {
	return refCommit(ctx, m.dir, "refs/heads/"+branch)
}

// refCommit returns the commit ref ("HEAD" or "refs/heads/...") names in
// the repository whose work tree (or clone without a checkout) is dir:
// read from its files in this process (HEAD, then the loose ref file it
// names, as go-git and git write them, renamed into place under git's lock
// protocol), or by git when a ref is packed or not a plain hash. Reading
// the files saves a git process per call, which a worker pays for every
// step of every unit. A packed ref's line is read from packed-refs (a
// packed ref is never an annotated tag's name here: these are branches).
func refCommit(ctx context.Context, dir, ref string) (string, error) {
	gitDir := filepath.Join(dir, ".git")
	name := ref
	if ref == "HEAD" {
		if b, err := os.ReadFile(filepath.Join(gitDir, "HEAD")); err == nil {
			h := strings.TrimSpace(string(b))
			if isHash(h) {
				return h, nil
			}
			name = strings.TrimPrefix(h, "ref: ")
		}
	}
	if strings.HasPrefix(name, "refs/") {
		if b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(name))); err == nil {
			if h := strings.TrimSpace(string(b)); isHash(h) {
				return h, nil
			}
		} else if errors.Is(err, fs.ErrNotExist) {
			// No loose file: the ref is packed (a new workspace's branch
			// is, until its first commit), or missing.
			if b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs")); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					if h, r, ok := strings.Cut(strings.TrimSpace(line), " "); ok && r == name && isHash(h) {
						return h, nil
					}
				}
			}
		}
	}
	out, err := git(ctx, dir, "rev-parse", "--verify", ref+"^{commit}")
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

// git runs git with args in dir ("" for the current directory) through
// proc.RunGit, with its git profile, and returns its output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := proc.RunGit(ctx, proc.Git{Dir: dir}, args...)
	return string(out), err
}
