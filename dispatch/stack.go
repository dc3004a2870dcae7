package dispatch

// This file stacks work: a unit starts from the published branches of its
// dependencies (merged when there are several), a merge conflict becomes
// part of the unit's task, and a finished unit's workspace is removed once
// its branch is published.

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// conflictCheckName names the check a unit that starts from a conflicted
// merge gets: it fails while a conflict marker is left in the files.
const conflictCheckName = "conflicts"

// plan returns the plan of the run: its repository (Repo, or the tasks
// file's directory) and where its state lives (StateDir, or the plan's own
// directory under the state root).
func (d *Dispatcher) plan() (Plan, error) {
	repo := d.Repo
	if repo == "" {
		repo = filepath.Dir(d.File.Path)
	}
	plan, err := NewPlan(repo, d.File.Path, d.File.Tag)
	if err != nil {
		return Plan{}, err
	}
	if d.StateDir != "" {
		if plan.Dir, err = filepath.Abs(d.StateDir); err != nil {
			return Plan{}, err
		}
	}
	return plan, nil
}

// workspaceOptions says where unit id starts: from its dependencies'
// published branches (the first as base, the others merged into it), or
// from the repository's HEAD when none has a published branch (no
// dependencies, or dependencies done before statgraph ran them).
func (d *Dispatcher) workspaceOptions(plan Plan, s slot, t tasks.Task, deps []string) (workspace.Options, error) {
	id := s.id
	root, branch := plan.WorkDir(), ""
	if s.k > 0 {
		root, branch = plan.CandidateRoot(s.k), plan.CandidateBranch(id, s.k)
	}
	o := workspace.Options{Source: plan.Repo, TaskID: id, Plan: plan.Key, Root: root, Branch: branch, CopyFiles: t.CopyFiles,
		Setup:        setupFunc(t, d.sandbox(t, filepath.Join(root, id), plan)),
		MaxFileBytes: int64(t.Limits.FileBytes), MaxCommitFiles: t.Limits.WriteFiles, MaxCommitBytes: int64(t.Limits.WriteBytes)}
	if d.StartFrom != nil && s.k == 0 {
		// The workspace's files continue from there; its base (where a
		// reset goes, what the review's diff starts from) is the
		// dependencies', as for the workspace the run began in.
		o.Start = d.StartFrom(id)
	}
	var names []string
	for _, dep := range deps {
		names = append(names, plan.Branch(dep))
	}
	if len(names) == 0 {
		return o, nil
	}
	published, err := workspace.PublishedBranches(plan.Repo, names)
	if err != nil {
		return o, err
	}
	if len(published) > 0 {
		o.Base, o.Merge = published[0], published[1:]
	}
	return o, nil
}

// setupFunc returns the workspace setup running t's setup_cmd through the
// verifier's process runner, in the task's workdir and in sandbox sb (nil:
// none) with the host's network; nil without one.
func setupFunc(t tasks.Task, sb *verifier.Sandbox) func(context.Context, string) error {
	if t.SetupCmd.IsZero() {
		return nil
	}
	if sb != nil { // setup_cmd installs dependencies: it has the network, as Codex's setup phase does
		open := *sb
		open.Network = true
		sb = &open
	}
	return func(ctx context.Context, dir string) error {
		setup := command(t.SetupCmd)
		setup.Dir, setup.Timeout, setup.Sandbox = dir, 30*time.Minute, sb
		if t.Workdir != "" {
			setup.Dir = filepath.Join(dir, filepath.FromSlash(t.Workdir))
		}
		res, err := verifier.Run(ctx, setup)
		switch {
		case err != nil:
			return fmt.Errorf("setup_cmd %q: %w", t.SetupCmd.String(), err)
		case res.TimedOut:
			return fmt.Errorf("setup_cmd %q timed out after %s; make it faster or run it in the repository beforehand", t.SetupCmd.String(), res.Duration.Round(time.Second))
		case res.ExitCode != 0:
			return fmt.Errorf("setup_cmd %q exited with status %d; fix it and run statgraph resume. Its output:\n%s",
				t.SetupCmd.String(), res.ExitCode, strings.TrimSpace(res.Output))
		}
		return nil
	}
}

// withConflicts puts the merge conflicts ws started with at the head of the
// task's details, so the planner and the executor see them first.
func withConflicts(task agents.Task, ws *workspace.Workspace, o workspace.Options) agents.Task {
	paths := ws.Conflicts()
	if len(paths) == 0 {
		return task
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Resolve these merge conflicts first, then do the task.\n\n"+
		"This task starts from the merge of its dependencies' results (%s). Git could not combine %d file(s); "+
		"each holds both sides between conflict markers (<<<<<<< first side, =======, >>>>>>> second side). "+
		"Edit each file so that it keeps what both sides need, and remove every marker: a check fails while one is left.\n",
		strings.Join(append([]string{o.Base}, o.Merge...), ", "), len(paths))
	const perFile, total = 4 << 10, 16 << 10
	for _, p := range paths {
		fmt.Fprintf(&b, "\n--- %s\n", p)
		data, err := ws.FS().ReadFile(p) // confined to the workspace
		hunks := conflictHunks([]byte(data))
		switch {
		case err != nil || len(hunks) == 0:
			b.WriteString("(no markers: changed on one side and deleted on the other; keep or delete the file)\n")
		case b.Len()+min(len(hunks), perFile) > total:
			b.WriteString("(see the file)\n")
		case len(hunks) > perFile:
			b.WriteString(hunks[:perFile] + "\n[... see the file for the rest]\n")
		default:
			b.WriteString(hunks)
		}
	}
	if task.Details != "" {
		b.WriteString("\nThe task itself:\n" + task.Details)
	}
	task.Details = b.String()
	return task
}

// conflictHunks returns the conflicted regions of a file, markers included.
func conflictHunks(data []byte) string {
	var b strings.Builder
	in := false
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte("<<<<<<< ")) || bytes.Equal(bytes.TrimRight(line, "\n"), []byte("<<<<<<<")) {
			in = true
		}
		if in {
			b.Write(line)
		}
		if bytes.HasPrefix(line, []byte(">>>>>>> ")) || bytes.Equal(bytes.TrimRight(line, "\n"), []byte(">>>>>>>")) {
			in = false
		}
	}
	return b.String()
}

// conflictChecks returns, for a workspace that started from a conflicted
// merge, the blocking check that fails while any of those files still
// holds a conflict marker. The paths are arguments of a fixed script, never
// part of it.
func conflictChecks(ws *workspace.Workspace) []verifier.Check {
	paths := ws.Conflicts()
	if len(paths) == 0 {
		return nil
	}
	script := `if grep -snE '^(<<<<<<<|>>>>>>>)( |$)' -- "$@"; then ` +
		`echo "conflict markers are left in the files above: resolve each conflict and remove the markers"; exit 1; fi`
	argv := append([]string{"sh", "-c", script, "sh"}, paths...)
	return []verifier.Check{{Name: conflictCheckName, Kind: verifier.KindOther,
		Command: verifier.Command{Argv: argv, Dir: ws.Dir(), Timeout: time.Minute}}}
}

// unresolvedConflict returns the reason a unit that ran out of attempts
// with its conflict check still failing is blocked, or "" when that is not
// why it failed.
func unresolvedConflict(ws *workspace.Workspace, o workspace.Options, s agents.TaskState) string {
	paths := ws.Conflicts()
	if len(paths) == 0 {
		return ""
	}
	for _, e := range s.Verification.Errors {
		if strings.HasPrefix(e, conflictCheckName+":") {
			return fmt.Sprintf("merge conflict in %s between %s not resolved after %d attempts; resolve it on branch %s and mark the task done, or change the dependencies",
				strings.Join(paths, ", "), strings.Join(append([]string{o.Base}, o.Merge...), " and "), s.RetryCount, ws.Branch())
		}
	}
	return ""
}
