package workspace

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// MoveBranch sets branch of the repository at source to commit, which the
// source already has (another published branch's tip), whatever the branch
// held before, provided it still holds old ("" : the branch must not
// exist): a best-of-N task's branch becomes its chosen candidate's, and
// statgraph pick moves it to another candidate. Unlike Finish it need not
// fast-forward. It writes the ref under git's lock-file protocol (see
// PushLocal), so a kill leaves the branch at old or at commit. It fails
// with ErrBranchCheckedOut when the source or one of its worktrees has the
// branch checked out, and with ErrRefMismatch when the branch is not at
// old; nothing is changed then.
func MoveBranch(ctx context.Context, source, branch, old, commit string) error {
	gitDir, common, err := sourceGitDirs(source)
	if err != nil {
		return err
	}
	ref := plumbing.NewBranchReferenceName(branch)
	if err := refuseCheckedOut(source, gitDir, common, ref, "run again"); err != nil {
		return err
	}
	if err := PushLocal(ctx, source, common, RefUpdate{Name: ref.String(), New: commit, Old: old, Lease: true}); err != nil {
		return fmt.Errorf("workspace: move %s in %s to %s: %w", branch, source, commit, err)
	}
	return nil
}
