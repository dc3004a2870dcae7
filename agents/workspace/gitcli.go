package workspace

import "github.com/statgraph/statgraph/internal/proc"

// ErrNoGit: the git program is not on PATH. The workspace itself works
// through go-git; the git program is needed for what go-git does not do
// at all or not safely: checking a published branch, listing an agent's
// own commits, three-way merges, git status and the working tree's diff.
// Every git process runs through proc.RunGit, with its git profile.
var ErrNoGit = proc.ErrNoGit
