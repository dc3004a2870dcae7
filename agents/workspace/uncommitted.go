package workspace

import (
	"context"
	"strings"

	"github.com/statgraph/statgraph/internal/proc"
)

// Uncommitted lists the paths in the repository at dir whose content
// differs from its HEAD commit: modified, staged, deleted and untracked
// files (not ignored ones), as git status names them, relative to dir.
// Tasks start from HEAD, so none of these reach a workspace. It needs the
// git program (ErrNoGit without it), reads the repository and changes
// nothing (git may refresh its index stat cache, as any git status does).
// It is safe for concurrent use.
func Uncommitted(ctx context.Context, dir string) ([]string, error) {
	out, err := proc.RunGit(ctx, proc.Git{Dir: dir}, "status", "--porcelain=v1", "-z", "--untracked-files=normal")
	if err != nil {
		return nil, err
	}
	var paths []string
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		paths = append(paths, f[3:])
		if f[0] == 'R' || f[0] == 'C' {
			i++ // a rename's or copy's source path follows
		}
	}
	return paths, nil
}
