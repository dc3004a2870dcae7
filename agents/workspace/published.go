package workspace

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Published is a task branch as Finish published it into the source
// repository, read after the workspace was removed (for history). It only
// reads the repository. Safe for concurrent use.
type Published struct {
	repo   *git.Repository
	branch string
	tip    plumbing.Hash
}

// OpenPublished opens branch in the repository at source. It fails when
// the repository cannot be opened or has no such branch.
func OpenPublished(source, branch string) (*Published, error) {
	repo, err := openSource(source)
	if err != nil {
		return nil, err
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return nil, fmt.Errorf("workspace: branch %s in %s: %w", branch, source, err)
	}
	return &Published{repo: repo, branch: branch, tip: ref.Hash()}, nil
}

// Tip returns the commit the branch was at when opened.
func (p *Published) Tip() string { return p.tip.String() }

// Branch returns the branch name.
func (p *Published) Branch() string { return p.branch }

// Tree returns the hash of the tree of the commit the branch was at when
// opened, or "" when that commit cannot be read.
func (p *Published) Tree() string {
	c, err := p.repo.CommitObject(p.tip)
	if err != nil {
		return ""
	}
	return c.TreeHash.String()
}

// DiffCommit is Workspace.DiffCommit on the published commits.
func (p *Published) DiffCommit(ctx context.Context, hash string) (string, error) {
	return diffCommit(ctx, p.repo, hash)
}

// Diff returns the unified diff from the first parent of first (the
// task's first attempt commit, whose parent is the commit the task
// started from) to the branch's tip: what Workspace.Diff showed before the
// workspace was removed, less uncommitted work.
func (p *Published) Diff(ctx context.Context, first string) (string, error) {
	c, err := p.repo.CommitObject(plumbing.NewHash(first))
	if err != nil {
		return "", fmt.Errorf("workspace: commit %s on %s: %w", first, p.branch, err)
	}
	var from *object.Tree
	if c.NumParents() > 0 {
		base, err := c.Parent(0)
		if err != nil {
			return "", fmt.Errorf("workspace: parent of %s: %w", first, err)
		}
		if from, err = base.Tree(); err != nil {
			return "", fmt.Errorf("workspace: parent of %s: %w", first, err)
		}
	}
	tip, err := p.repo.CommitObject(p.tip)
	if err != nil {
		return "", fmt.Errorf("workspace: tip of %s: %w", p.branch, err)
	}
	to, err := tip.Tree()
	if err != nil {
		return "", fmt.Errorf("workspace: tip of %s: %w", p.branch, err)
	}
	return diffTrees(ctx, p.repo.Storer, from, to, p.branch)
}
