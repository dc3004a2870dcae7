package workspace

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/statgraph/statgraph/internal/proc"
)

// maxAgentCommits bounds the commits checkHistory reads: an agent CLI
// that made more (or merged a foreign history) is refused.
const maxAgentCommits = 10000

// checkHistory refuses the branch when a commit on it that Commit did not
// make (an agent CLI's own git commit) holds what Commit refuses: a name
// git would refuse (see nameProblem), a control character in a name, a
// .gitmodules git's fsck refuses, or a file over the cap per file. Only
// what each such commit changed against its first parent is read, and a
// commit found clean is not read again. Commit calls it before recording,
// and Finish before publishing, so nothing an agent committed itself
// reaches the user's repository unchecked. It needs the git program only
// when there are commits to check. The caller holds w.mu.
func (w *Workspace) checkHistory(ctx context.Context, tip plumbing.Hash) error {
	if tip == w.base || w.checked[tip] {
		return nil
	}
	args := []string{"rev-list", fmt.Sprintf("--max-count=%d", maxAgentCommits+1), tip.String(), "--not", w.base.String()}
	for c := range w.checked {
		args = append(args, c.String())
	}
	out, err := proc.RunGit(ctx, proc.Git{Dir: w.dir}, args...)
	if err != nil {
		return fmt.Errorf("workspace: list the commits made in %s: %w", w.dir, err)
	}
	commits := strings.Fields(string(out))
	if len(commits) > maxAgentCommits {
		return fmt.Errorf("%w: the branch holds more than %d commits the attempts did not make (an agent's own commits or a merged history); statgraph checks every commit it publishes: squash them or start the task over", ErrRefused, maxAgentCommits)
	}
	for _, s := range commits {
		c, err := w.repo.CommitObject(plumbing.NewHash(s))
		if err != nil {
			return fmt.Errorf("workspace: read commit %s in %s: %w", s, w.dir, err)
		}
		parent := plumbing.ZeroHash
		if c.NumParents() > 0 {
			p, err := w.repo.CommitObject(c.ParentHashes[0])
			if err != nil {
				return fmt.Errorf("workspace: read commit %s in %s: %w", c.ParentHashes[0], w.dir, err)
			}
			parent = p.TreeHash
		}
		if err := w.checkTree(c.TreeHash, parent, ""); err != nil {
			return fmt.Errorf("%w (in commit %s, %q, made in the workspace)", err, s[:12], firstLineOf(c.Message))
		}
	}
	if w.checked == nil {
		w.checked = map[plumbing.Hash]bool{}
	}
	for _, s := range commits {
		w.checked[plumbing.NewHash(s)] = true
	}
	w.checked[tip] = true
	return nil
}

// checkTree refuses what Commit refuses among the entries of tree t that
// differ from those of tree old at the same path (zero: the empty tree),
// prefix being t's path.
func (w *Workspace) checkTree(t, old plumbing.Hash, prefix string) error {
	tree, err := w.repo.TreeObject(t)
	if err != nil {
		return fmt.Errorf("workspace: read tree %s in %s: %w", t, w.dir, err)
	}
	before := map[string]object.TreeEntry{}
	if !old.IsZero() {
		o, err := w.repo.TreeObject(old)
		if err != nil {
			return fmt.Errorf("workspace: read tree %s in %s: %w", old, w.dir, err)
		}
		for _, e := range o.Entries {
			before[e.Name] = e
		}
	}
	for _, e := range tree.Entries {
		was, had := before[e.Name]
		if had && was.Hash == e.Hash && was.Mode == e.Mode {
			continue
		}
		p := prefix + e.Name
		if why := nameProblem(e.Name, e.Mode); why != "" {
			return refuse(p, why, "remove or rename it")
		}
		if hasControl(e.Name) {
			return refuse(p, "the name holds a control character, which makes it unsafe to show in a terminal", "rename it")
		}
		switch {
		case e.Mode == filemode.Dir:
			sub := plumbing.ZeroHash
			if had && was.Mode == filemode.Dir {
				sub = was.Hash
			}
			if err := w.checkTree(e.Hash, sub, p+"/"); err != nil {
				return err
			}
		case e.Mode.IsFile():
			if err := w.checkBlob(p, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkBlob refuses the blob of entry e (at path p) when it is over the
// cap per file, or a .gitmodules git's fsck refuses.
func (w *Workspace) checkBlob(p string, e object.TreeEntry) error {
	blob, err := w.repo.BlobObject(e.Hash)
	if err != nil {
		return fmt.Errorf("workspace: read %s in %s: %w", p, w.dir, err)
	}
	if blob.Size > w.limits.fileBytes {
		return refuse(p, fmt.Sprintf("the file is %s, over the cap of %s per file (limits.file_bytes in tasks.json)", sizeText(blob.Size), sizeText(w.limits.fileBytes)),
			"remove it from the commit")
	}
	if e.Mode != filemode.Regular && e.Mode != filemode.Executable || !isGitmodules(e.Name) {
		return nil
	}
	r, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("workspace: read %s in %s: %w", p, w.dir, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("workspace: read %s in %s: %w", p, w.dir, err)
	}
	if why := gitmodulesProblem(data); why != "" {
		return refuse(p, why, "remove the submodule or correct it")
	}
	return nil
}

// firstLineOf returns the first line of a commit message.
func firstLineOf(msg string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	return line
}
