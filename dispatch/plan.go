package dispatch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/tasks"
)

// Plan is one plan's identity and where its state lives: a tasks file and
// tag in a git repository. Everything a run keeps is keyed by it, so two
// tasks files (or two tags of one file) in one repository never share a
// checkpoint thread, a workspace or a branch. NewPlan makes it; the zero
// Plan is not usable.
type Plan struct {
	Repo string // absolute path of the repository
	File string // the tasks file relative to Repo, slash-separated (absolute if outside Repo)
	Tag  string // the tag; DefaultTag for an untagged file
	// Key is a short name unique for (File, Tag) within the repository,
	// e.g. "tasks-1c9e0b": the second part of the plan's branch names
	// (statgraph/<Key>/<id>) and of its threads.
	Key string
	// Dir is the plan's state directory, unique for (Repo, File, Tag):
	// workspace.StateRoot()/plans/<repo>-<Key>-<hash>. It holds runs.db,
	// work/, prompts/, cache/ and homes/, one directory per unit in each.
	Dir string
}

// NewPlan returns the plan of the tasks file file and tag tag ("" means
// DefaultTag) in the repository repo. It creates nothing; it fails only
// when a path cannot be made absolute or the state root is unknown.
func NewPlan(repo, file, tag string) (Plan, error) {
	repo, err := filepath.Abs(repo)
	if err != nil {
		return Plan{}, fmt.Errorf("dispatch: repository %s: %w", repo, err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return Plan{}, fmt.Errorf("dispatch: tasks file %s: %w", file, err)
	}
	rel, err := filepath.Rel(repo, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = abs
	}
	rel = filepath.ToSlash(rel)
	if tag == "" {
		tag = tasks.DefaultTag
	}
	root, err := workspace.StateRoot()
	if err != nil {
		return Plan{}, err
	}
	label := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	if tag != tasks.DefaultTag {
		label += "-" + tag
	}
	key := workspace.KeyedName(label, 6, rel, tag)
	return Plan{
		Repo: repo, File: rel, Tag: tag, Key: key,
		Dir: filepath.Join(root, "plans", workspace.KeyedName(filepath.Base(repo)+"-"+key, 8, repo, rel, tag)),
	}, nil
}

// Store is the path of the plan's run store (checkpoints and history).
func (p Plan) Store() string { return filepath.Join(p.Dir, "runs.db") }

// Journal is the path of the plan's results journal: the outcomes a run
// made durable but not yet saved in the tasks file (see tasks.ApplyJournal).
func (p Plan) Journal() string { return filepath.Join(p.Dir, "results.journal") }

// WorkDir is the directory holding the plan's workspaces, one per unit.
func (p Plan) WorkDir() string { return filepath.Join(p.Dir, "work") }

// PromptDir is the directory holding the prompt directories of the plan's
// units (see UnitPromptDir).
func (p Plan) PromptDir() string { return filepath.Join(p.Dir, "prompts") }

// UnitPromptDir is the directory holding the prompt files of a unit's
// command executor: bound into that unit's agent sandbox only.
func (p Plan) UnitPromptDir(unit string) string { return filepath.Join(p.PromptDir(), unit) }

// CacheDir is the directory of a unit's tool caches (its sandbox's
// CacheDir), removed with the unit's workspace.
func (p Plan) CacheDir(unit string) string { return filepath.Join(p.Dir, "cache", unit) }

// HomesDir is the directory holding the agent CLIs' private homes, one
// directory per unit (see HomeDir).
func (p Plan) HomesDir() string { return filepath.Join(p.Dir, "homes") }

// HomeDir is where a unit's agent CLI gets a private home per attempt
// (agents.CommandExecutor.HomeDir): outside CacheDir, which the unit's
// checks see, and removed when the attempt ends.
func (p Plan) HomeDir(unit string) string { return filepath.Join(p.HomesDir(), unit) }

// Thread returns the checkpoint thread of a unit of the plan,
// "<Key>/task-<unit>", unique even in a run store two plans share.
func (p Plan) Thread(unit string) string { return p.Key + "/task-" + unit }

// Branch returns the branch a unit of the plan is published on.
func (p Plan) Branch(unit string) string { return workspace.BranchName(p.Key, unit) }

// CandidateBranch returns the branch candidate k (1-based) of a
// best-of-N unit is published on: statgraph/<Key>/<unit>@<k>. Git cannot
// hold statgraph/<Key>/<unit>/<k> beside the unit's own branch (a ref
// cannot also be a directory of refs), and '@' is in no task id.
func (p Plan) CandidateBranch(unit string, k int) string {
	return p.Branch(unit) + "@" + strconv.Itoa(k)
}

// CandidateThread returns the checkpoint thread of candidate k of a
// best-of-N unit, "<Key>/task-<unit>@<k>"; the unit's own thread
// (Thread) records the choice and the winner's state.
func (p Plan) CandidateThread(unit string, k int) string {
	return p.Thread(unit) + "@" + strconv.Itoa(k)
}

// CandidateRoot is the directory holding the workspaces of candidate k
// of the plan's best-of-N units, one per unit, as WorkDir holds the units'.
func (p Plan) CandidateRoot(k int) string {
	return filepath.Join(p.Dir, "candidates", strconv.Itoa(k))
}

// Check reports, without writing anything, a path of the plan's state that
// is a symbolic link (an error wrapping workspace.ErrSymlink): the
// repository's .statgraph (which older versions kept their state in, so a
// repository committing one as a link could redirect it), the state root
// (unless STATGRAPH_HOME names it) and everything statgraph makes under it,
// run store included. Run it before anything is written.
func (p Plan) Check() error {
	if err := workspace.RefuseSymlink(filepath.Join(p.Repo, ".statgraph")); err != nil {
		return fmt.Errorf("%w; this repository may try to redirect statgraph's files: remove .statgraph from it (git rm .statgraph) and run again", err)
	}
	paths := []string{filepath.Dir(p.Dir), p.Dir, p.WorkDir(), p.PromptDir(), p.HomesDir(), filepath.Join(p.Dir, "cache"), filepath.Join(p.Dir, "candidates"), p.Store()}
	if os.Getenv("STATGRAPH_HOME") == "" { // a root the user named may be a link; the default one is statgraph's own
		paths = append([]string{filepath.Dir(filepath.Dir(p.Dir))}, paths...)
	}
	for _, path := range paths {
		if err := workspace.RefuseSymlink(path); err != nil {
			return err
		}
	}
	return nil
}

// Ensure makes the plan's state directories (Dir, WorkDir, PromptDir and
// their parents), refusing any that is a symbolic link as Check does.
func (p Plan) Ensure() error {
	if err := p.Check(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Dir(p.Dir)), 0o755); err != nil {
		return fmt.Errorf("dispatch: state directory: %w", err)
	}
	for _, d := range []string{filepath.Dir(p.Dir), p.Dir, p.WorkDir(), p.PromptDir()} {
		if err := workspace.MkdirNoLink(d); err != nil {
			return err
		}
	}
	return nil
}
