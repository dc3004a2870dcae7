package queue

import (
	"context"
	"fmt"

	"github.com/statgraph/statgraph/agents/workspace"
)

// pushRemote applies updates to the refs of remote from the repository at
// dir (a work tree or the mirror), all of them or none. A bare repository
// of this machine (a file:// URL or an absolute path) is pushed to in this
// process (workspace.PushLocal: no git process, the refs updated under
// git's lock files, so workers and git's own pushes to the same remote
// exclude each other per ref); any other remote (ssh, https) by git push
// --atomic, with --force-with-lease for an update that holds a lease and
// --force otherwise. Errors name the remote; a lease broken on a local
// remote wraps workspace.ErrRefMismatch.
func pushRemote(ctx context.Context, dir, remote string, updates ...workspace.RefUpdate) error {
	if gitDir, ok := workspace.LocalRemote(remote); ok {
		return workspace.PushLocal(ctx, dir, gitDir, updates...)
	}
	args := []string{"push", "--quiet", "--force"}
	if len(updates) > 1 {
		args = append(args, "--atomic")
	}
	specs := make([]string, 0, len(updates))
	for _, u := range updates {
		if u.Lease {
			args = append(args, "--force-with-lease="+u.Name+":"+u.Old)
		}
		specs = append(specs, u.New+":"+u.Name)
	}
	if _, err := git(ctx, dir, append(append(args, remote), specs...)...); err != nil {
		return fmt.Errorf("push to the remote %s: %w", remote, err)
	}
	return nil
}
