package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// push.go pushes into a bare repository on this machine (a file:// or
// plain-path remote) in this process, the way publish.go publishes into a
// source: the objects the remote lacks as one pack (writePackNamed), then
// the refs in one transaction under git's lock-file protocol, as git's
// receive-pack does with --atomic. No git process is started: a git push to
// a local remote starts about eight (push, receive-pack, pack-objects,
// index-pack, rev-list...). A remote with hooks a push runs is left to
// git (see LocalRemote).

// receiveHooks are the hooks of a remote that git runs on a push.
var receiveHooks = []string{"pre-receive", "update", "proc-receive", "reference-transaction", "post-receive", "post-update", "push-to-checkout"}

// RefUpdate is one ref change of PushLocal: the ref Name (a full name,
// "refs/heads/...") is set to the commit New, or deleted when New is "".
type RefUpdate struct {
	Name string
	New  string
	// Old, when Lease is set, is the value the ref must have on the
	// remote ("": the ref must not exist), compared under the ref's lock
	// (compare-and-swap, as git push --force-with-lease). Without Lease
	// the ref is replaced whatever it held when the push began (git push
	// --force: receive-pack checks the value it advertised), so a ref
	// that moved while this push wrote its objects, or stalled, is not
	// overwritten; the deletion of a ref that is not there does nothing
	// (as git's).
	Old   string
	Lease bool
}

// ErrRefMismatch is returned (wrapped) by PushLocal when a ref is not at
// the value an update expects: nothing was changed.
var ErrRefMismatch = errors.New("workspace: a ref on the remote is not at the expected value")

// refLockWait is how long PushLocal retries taking a ref's lock (or
// packed-refs' lock) that another writer holds, as git's
// core.filesRefLockTimeout and core.packedRefsTimeout do.
const refLockWait = time.Second

// LocalRemote returns the git directory of the bare repository remote
// names when it is a file:// URL or an absolute path of this machine, and
// ok false for any other remote (ssh, https, scp-like host:path, relative
// paths, a repository with a work tree, a SHA-256 repository, one with a
// hook that a push runs or a core.hooksPath), which git itself must push
// to.
func LocalRemote(remote string) (gitDir string, ok bool) {
	p := remote
	if strings.HasPrefix(remote, "file://") {
		u, err := url.Parse(remote)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return "", false
		}
		p = u.Path
	}
	if !filepath.IsAbs(p) {
		return "", false
	}
	p = filepath.Clean(p)
	for _, need := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(p, need)); err != nil {
			return "", false
		}
	}
	// go-git reads SHA-1 repositories only; hooks are run by git.
	cfg, err := os.ReadFile(filepath.Join(p, "config"))
	if err != nil {
		return "", false
	}
	c := strings.ToLower(strings.ReplaceAll(string(cfg), " ", ""))
	if strings.Contains(c, "objectformat=sha256") || strings.Contains(c, "hookspath") {
		return "", false
	}
	for _, h := range receiveHooks {
		if fi, err := os.Stat(filepath.Join(p, "hooks", h)); err == nil && fi.Mode()&0o111 != 0 {
			return "", false
		}
	}
	return p, true
}

// PushLocal pushes the updates from the repository at from (a work tree
// or a clone without a checkout) to the bare repository at gitDir (see
// LocalRemote): it writes the objects the new commits need that the
// remote lacks, then applies all the updates or none (every ref's lock is
// taken and every expectation checked before any ref changes; a kill or
// an I/O failure part-way can leave some of the set refs set and the
// deletions undone, never a deletion done before every set ref is set). A
// kill leaves the remote consistent (temporary files git fsck passes
// over) and the locks it held for the next PushLocal to remove (see
// pushlock.go; git's own push waits on them, naming them, until then):
// pushing the same updates again completes the push. It fails when a
// ref's lock stays held by another writer for refLockWait, and with
// ErrRefMismatch when a ref is not where an update expects. Safe for
// concurrent use, by goroutines and processes (git's own pushes included)
// on the same remote.
func PushLocal(ctx context.Context, from, gitDir string, updates ...RefUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	release := holdCommon(gitDir)
	err := pushHeld(ctx, from, gitDir, updates)
	release()
	if err != nil {
		return fmt.Errorf("workspace: push %s to %s: %w", refNames(updates), gitDir, err)
	}
	at("refs-updated", updates)
	_ = repackOwn(gitDir) // best effort: a later push merges
	return nil
}

// pushHeld is PushLocal with the remote's shared lock held.
func pushHeld(ctx context.Context, from, gitDir string, updates []RefUpdate) error {
	if err := repairOrphanPacks(filepath.Join(gitDir, "objects", "pack")); err != nil {
		return err
	}
	if err := breakStaleLocks(gitDir); err != nil {
		return err
	}
	updates = slices.Clone(updates)
	for i, u := range updates {
		if !u.Lease { // what the ref holds now is what it must hold under its lock
			cur, err := readRef(gitDir, u.Name)
			if err != nil {
				return err
			}
			updates[i].Old, updates[i].Lease = cur, true
		}
	}
	var src, dst *git.Repository
	var objs []plumbing.Hash
	for _, u := range updates {
		if u.New == "" {
			continue // a deletion needs no objects (nor from)
		}
		if src == nil {
			var err error
			if src, _, err = openRepo(from, false); err != nil {
				return fmt.Errorf("open %s: %w", from, err)
			}
			if dst, _, err = openRepo(gitDir, false); err != nil {
				return fmt.Errorf("open the remote: %w", err)
			}
		}
		more, err := missingObjects(ctx, src, from, dst, plumbing.NewHash(u.New))
		if err != nil {
			return err
		}
		objs = append(objs, more...)
	}
	if len(objs) > 0 {
		name, err := writePackNamed(filepath.Join(gitDir, "objects", "pack"), dedupe(objs), storeSource(src, from))
		if err != nil {
			return fmt.Errorf("write its objects: %w", err)
		}
		at("pack-written", updates)
		if err := recordPack(gitDir, name); err != nil {
			return err
		}
		at("pack-recorded", updates)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return updateRefs(ctx, gitDir, updates)
}

// refNames lists the names of updates for messages.
func refNames(updates []RefUpdate) string {
	names := make([]string, len(updates))
	for i, u := range updates {
		names[i] = u.Name
	}
	return strings.Join(names, ", ")
}

// dedupe drops repeated objects (two updates sharing history).
func dedupe(objs []plumbing.Hash) []plumbing.Hash {
	seen := make(map[plumbing.Hash]bool, len(objs))
	out := objs[:0]
	for _, h := range objs {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// takeLock creates the lock file path exclusively, retrying for
// refLockWait while another writer holds it.
func takeLock(ctx context.Context, path string) (*os.File, error) {
	deadline := time.Now().Add(refLockWait)
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil || !errors.Is(err, fs.ErrExist) {
			return f, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is held by another writer (or left by a killed git: remove it if no git process is using the repository): %w", path, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// readRef returns the value of ref name in gitDir as git reads it (the
// loose file, else packed-refs), "" when there is no such ref.
func readRef(gitDir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(name)))
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	_, packed, err := packedRefs(gitDir)
	return packed[name], err
}

// packedRefs returns packed-refs' content in gitDir ("" when there is
// none) and the value of each ref it lists.
func packedRefs(gitDir string) (string, map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	refs := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if h, r, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "^") {
			refs[r] = h
		}
	}
	return string(b), refs, nil
}

// updateRefs applies updates to the refs of gitDir as one transaction of
// git's files backend: each loose ref's lock (<ref>.lock) is taken in name
// order and its value checked; then new values are renamed into place;
// then deleted refs leave packed-refs (under packed-refs.lock) and their
// loose files go. Readers (git reads the loose file before packed-refs)
// never see a deleted ref come back. The locks are journaled (see
// pushlock.go): a kill leaves them for the next PushLocal to remove.
func updateRefs(ctx context.Context, gitDir string, updates []RefUpdate) error {
	ups := slices.Clone(updates)
	slices.SortFunc(ups, func(a, b RefUpdate) int { return strings.Compare(a.Name, b.Name) })
	for i, u := range ups {
		if !strings.HasPrefix(u.Name, "refs/") || strings.Contains(u.Name, "..") || (u.New != "" && !plumbing.IsHash(u.New)) {
			return fmt.Errorf("bad update %q -> %q", u.Name, u.New)
		}
		if i > 0 && ups[i-1].Name == u.Name {
			return fmt.Errorf("ref %s updated twice", u.Name)
		}
	}
	j := newJournal(gitDir)
	defer j.close() // after the locks' release below
	locks := make([]*os.File, len(ups))
	paths := make([]string, len(ups))
	defer func() {
		for i, f := range locks {
			if f != nil {
				f.Close()
				os.Remove(paths[i] + ".lock")
			}
		}
	}()
	for i, u := range ups {
		paths[i] = filepath.Join(gitDir, filepath.FromSlash(u.Name))
		if err := os.MkdirAll(filepath.Dir(paths[i]), 0o755); err != nil {
			return err
		}
		f, err := j.take(ctx, gitDir, paths[i]+".lock")
		if err != nil {
			return err
		}
		locks[i] = f
	}
	_, packed, err := packedRefs(gitDir)
	if err != nil {
		return err
	}
	var unpack []string
	for _, u := range ups {
		cur, err := readRef(gitDir, u.Name)
		if err != nil {
			return err
		}
		if u.Lease && cur != u.Old {
			return fmt.Errorf("%w: %s is at %q, not at %q", ErrRefMismatch, u.Name, cur, u.Old)
		}
		if u.New == "" && packed[u.Name] != "" {
			unpack = append(unpack, u.Name)
		}
	}
	at("locked", updates)
	// New values first, each written and fsynced under its lock, then
	// renamed into place; deletions last: a kill in between leaves refs
	// set and the deletions undone (a published branch with its work in
	// progress still there), never a deletion without its companion.
	for i, u := range ups {
		if u.New == "" {
			continue
		}
		f := locks[i]
		if _, err := f.WriteString(u.New + "\n"); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
	}
	at("written", updates)
	renamed := 0
	for i, u := range ups {
		if u.New == "" {
			continue
		}
		locks[i].Close()
		locks[i] = nil
		if err := os.Rename(paths[i]+".lock", paths[i]); err != nil {
			os.Remove(paths[i] + ".lock")
			return err
		}
		if err := fsutil.SyncDir(filepath.Dir(paths[i])); err != nil {
			return err
		}
		renamed++
		atN("renamed", renamed, updates)
	}
	if len(unpack) > 0 {
		if err := dropPacked(ctx, j, gitDir, unpack); err != nil {
			return err
		}
		at("packed-refs-rewritten", updates)
	}
	deleted := 0
	for i, u := range ups {
		if u.New != "" {
			continue
		}
		if err := os.Remove(paths[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		locks[i].Close()
		locks[i] = nil
		os.Remove(paths[i] + ".lock")
		deleted++
		atN("deleted", deleted, updates)
	}
	return nil
}

// dropPacked rewrites gitDir's packed-refs without the refs names (and
// their peeled lines), under packed-refs.lock (journaled in j).
func dropPacked(ctx context.Context, j *lockJournal, gitDir string, names []string) error {
	path := filepath.Join(gitDir, "packed-refs")
	f, err := j.take(ctx, gitDir, path+".lock")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(path + ".lock")
		}
	}()
	content, _, err := packedRefs(gitDir) // read again under the lock
	if err != nil {
		return err
	}
	var out bytes.Buffer
	skipping := false
	for _, line := range strings.SplitAfter(content, "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "^") {
			if !skipping {
				out.WriteString(line)
			}
			continue
		}
		_, r, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		skipping = !strings.HasPrefix(line, "#") && slices.Contains(names, r)
		if !skipping {
			out.WriteString(line)
		}
	}
	if _, err := f.Write(out.Bytes()); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(path+".lock", path); err != nil {
		return err
	}
	done = true
	return fsutil.SyncDir(gitDir)
}
