package workspace

// This file starts a workspace from the merge of several branches (a task
// with several dependencies starts from the merge of their results).
//
// go-git v5 has no three-way merge, so the merge is git's own, run through
// proc.RunGit: `git merge-tree --write-tree` merges two commits into a tree
// (conflicting files keep git's conflict markers) and `git commit-tree`
// records it. Both only add objects to the new workspace's repository; they
// touch no index, working tree or ref, so the checkout that follows
// (go-git's, which fills the stat cache) sees the truth and nothing is
// cached stale. The merge is made in the temporary directory of a new
// workspace, before it is renamed into place, so the source repository gets
// no objects until Finish publishes the task's branch.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/statgraph/statgraph/internal/proc"
)

// mergePlan is what a workspace starts from: base alone, or the merge of
// tips (base first) named by names.
type mergePlan struct {
	base  plumbing.Hash
	names []string // branch names of tips, when there are several
	tips  []plumbing.Hash
	skip  bool // Options.SkipConflicts
	// start is Options.Start resolved: the commit a new workspace's
	// branch and files start from instead of the base (zero: the base).
	start plumbing.Hash
}

// planMerge resolves o.Merge in the source and drops every branch whose
// commit is contained in another's (merging it adds nothing).
func planMerge(src *git.Repository, source string, o Options, base plumbing.Hash) (mergePlan, error) {
	if len(o.Merge) == 0 {
		return mergePlan{base: base}, nil
	}
	if o.Base == "" {
		return mergePlan{}, errors.New("workspace: Options.Merge needs Options.Base, the first branch of the merge")
	}
	names := append([]string{o.Base}, o.Merge...)
	tips := []plumbing.Hash{base}
	for _, n := range o.Merge {
		h, err := resolveBase(src, source, n)
		if err != nil {
			return mergePlan{}, err
		}
		tips = append(tips, h)
	}
	p := mergePlan{skip: o.SkipConflicts}
	for i, h := range tips {
		contained := false
		for j, other := range tips {
			if i == j || contained {
				continue
			}
			if h == other {
				contained = j < i // keep the first of equal tips
				continue
			}
			in, err := isAncestor(src, h, other)
			if err != nil {
				return mergePlan{}, fmt.Errorf("workspace: compare %s and %s in %s: %w", names[i], names[j], source, err)
			}
			contained = in
		}
		if !contained {
			p.names, p.tips = append(p.names, names[i]), append(p.tips, h)
		}
	}
	p.base = p.tips[0]
	if len(p.tips) == 1 {
		p.names, p.tips = nil, nil
	}
	return p, nil
}

func isAncestor(r *git.Repository, a, b plumbing.Hash) (bool, error) {
	ca, err := r.CommitObject(a)
	if err != nil {
		return false, err
	}
	cb, err := r.CommitObject(b)
	if err != nil {
		return false, err
	}
	return ca.IsAncestor(cb)
}

// refs returns the branches of the merge as refs of the new workspace, so
// that git's conflict markers are labelled with their names.
func (p mergePlan) refs() map[plumbing.ReferenceName]plumbing.Hash {
	out := map[plumbing.ReferenceName]plumbing.Hash{}
	for i, n := range p.names {
		out[plumbing.NewBranchReferenceName(n)] = p.tips[i]
	}
	return out
}

// startedFrom reports whether a workspace whose base commit is base (with
// merge info m) was made from this plan.
func (p mergePlan) startedFrom(base plumbing.Hash, m mergeInfo) bool {
	if len(p.tips) == 0 {
		return base == p.base
	}
	return slices.Equal(m.tips, p.tips)
}

func (p mergePlan) describe() string {
	if len(p.tips) == 0 {
		return p.base.String()
	}
	return "the merge of " + strings.Join(p.names, ", ")
}

// mergeInfo is what the base commit of a merged workspace records.
type mergeInfo struct {
	tips      []plumbing.Hash // every tip the plan had, merged or skipped
	conflicts []string        // paths left with conflict markers
	skipped   []Skipped       // branches left out for conflicting (SkipConflicts)
}

// Skipped is a branch left out of a merge (Options.SkipConflicts) and the
// paths it conflicted on.
type Skipped struct {
	Branch string
	Paths  []string
}

// The base commit of a merged workspace has this subject prefix and
// sections of tab-indented, Go-quoted entries, which reopen reads back.
const (
	mergeSubject   = "statgraph: merge "
	tipsHeader     = "Tips:"
	conflictHeader = "Conflicts:"
	skippedHeader  = "Skipped:"
)

func (m mergeInfo) message(names []string, branch string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s into %s\n", mergeSubject, strings.Join(names, ", "), branch)
	section := func(header string, items []string) {
		if len(items) == 0 {
			return
		}
		b.WriteString("\n" + header + "\n")
		for _, it := range items {
			b.WriteString("\t" + strconv.Quote(it) + "\n")
		}
	}
	tips := make([]string, len(m.tips))
	for i, t := range m.tips {
		tips[i] = t.String()
	}
	section(tipsHeader, tips)
	section(conflictHeader, m.conflicts)
	if len(m.skipped) > 0 {
		b.WriteString("\n" + skippedHeader + "\n")
		for _, sk := range m.skipped {
			b.WriteString("\t" + strconv.Quote(sk.Branch))
			for _, p := range sk.Paths {
				b.WriteString(" " + strconv.Quote(p))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// readMergeInfo reads the merge info of commit h; a commit statgraph did
// not make as a merge base has none.
func readMergeInfo(r *git.Repository, h plumbing.Hash) (mergeInfo, error) {
	c, err := r.CommitObject(h)
	if err != nil {
		return mergeInfo{}, err
	}
	return parseMergeInfo(c)
}

func parseMergeInfo(c *object.Commit) (mergeInfo, error) {
	var m mergeInfo
	if !strings.HasPrefix(c.Message, mergeSubject) {
		return m, nil
	}
	var list *[]string
	var tips, skipped []string
	sc := bufio.NewScanner(strings.NewReader(c.Message))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == tipsHeader:
			list = &tips
		case line == conflictHeader:
			list = &m.conflicts
		case line == skippedHeader:
			list = &skipped
		case strings.HasPrefix(line, "\t") && list == &skipped:
			skipped = append(skipped, line[1:]) // split below
		case strings.HasPrefix(line, "\t") && list != nil:
			s, err := strconv.Unquote(line[1:])
			if err != nil {
				return m, fmt.Errorf("unreadable entry %q in the merge message: %w", line, err)
			}
			*list = append(*list, s)
		default:
			list = nil
		}
	}
	for _, t := range tips {
		m.tips = append(m.tips, plumbing.NewHash(t))
	}
	for _, line := range skipped {
		fields, err := splitQuoted(line)
		if err != nil || len(fields) == 0 {
			return m, fmt.Errorf("unreadable skipped entry %q in the merge message", line)
		}
		m.skipped = append(m.skipped, Skipped{Branch: fields[0], Paths: fields[1:]})
	}
	return m, nil
}

// splitQuoted splits s, space-separated Go-quoted strings, into its parts.
func splitQuoted(s string) ([]string, error) {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, err
		}
		u, _ := strconv.Unquote(q)
		out = append(out, u)
		s = s[len(q):]
	}
	return out, nil
}

// mergeTips merges the plan's branches one after the other in the new
// repository at dir and returns the merge commit, whose parents are the
// branches merged. A branch that conflicts is merged with the conflict
// markers left in, or left out when the plan skips conflicts.
func (w *Workspace) mergeTips(ctx context.Context, dir string, p mergePlan) (plumbing.Hash, error) {
	m := mergeInfo{tips: p.tips}
	cur := p.names[0]
	parents := []string{p.tips[0].String()}
	var tree string
	for i := 1; i < len(p.names); i++ {
		out, err := proc.RunGit(ctx, proc.Git{Dir: dir}, "merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", cur, p.names[i])
		conflicted := err != nil
		if err != nil && !isExit(err, 1) {
			return plumbing.ZeroHash, fmt.Errorf("workspace: merge %s into %s for task %s: %w", p.names[i], strings.Join(p.names[:i], ", "), w.taskID, err)
		}
		fields := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
		if conflicted && p.skip {
			m.skipped = append(m.skipped, Skipped{Branch: p.names[i], Paths: slices.DeleteFunc(fields[1:], func(f string) bool { return f == "" })})
			continue
		}
		tree = fields[0]
		for _, f := range fields[1:] {
			if f != "" && !slices.Contains(m.conflicts, f) {
				m.conflicts = append(m.conflicts, f)
			}
		}
		parents = append(parents, p.tips[i].String())
		if i < len(p.names)-1 {
			if cur, err = w.commitTree(ctx, dir, tree, []string{cur, p.names[i]}, "statgraph: intermediate merge"); err != nil {
				return plumbing.ZeroHash, err
			}
		}
	}
	if tree == "" { // every other branch was skipped: the base's own tree
		tree = p.tips[0].String() + "^{tree}"
	}
	h, err := w.commitTree(ctx, dir, tree, parents, m.message(p.names, w.branch.Short()))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return plumbing.NewHash(h), nil
}

// commitTree records tree as a commit with parents, signed as the
// workspace's author.
func (w *Workspace) commitTree(ctx context.Context, dir, tree string, parents []string, msg string) (string, error) {
	args := []string{"-c", "user.name=" + w.name, "-c", "user.email=" + w.email, "commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	out, err := proc.RunGit(ctx, proc.Git{Dir: dir}, append(args, "-m", msg)...)
	if err != nil {
		return "", fmt.Errorf("workspace: record the merge for task %s: %w", w.taskID, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Conflicts returns the paths (slash-separated, relative to the working
// tree) that the merge this workspace started from left with conflict
// markers, in the order git reported them; nil when it started from one
// commit or merged cleanly. It reads what the base commit records, so it
// is the same after a restart. Safe for concurrent use.
func (w *Workspace) Conflicts() []string { return slices.Clone(w.merged.conflicts) }

// Skipped returns the branches left out of the merge because they
// conflicted (Options.SkipConflicts), with the paths. Safe for concurrent
// use.
func (w *Workspace) Skipped() []Skipped { return slices.Clone(w.merged.skipped) }

// PublishedBranches returns those of names that are branches of the
// repository at source, in the order given. It fails when source cannot be
// opened.
func PublishedBranches(source string, names []string) ([]string, error) {
	defer holdSource(source)()
	src, err := openSource(source)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if _, err := src.Reference(plumbing.NewBranchReferenceName(n), false); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// isExit reports whether err is a run of git that exited with code.
func isExit(err error, code int) bool {
	ge, ok := errors.AsType[*proc.GitError](err)
	return ok && ge.ExitCode() == code
}
