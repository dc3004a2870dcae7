package dispatch

// This file keeps what land records: where each done unit stands in the
// merge queue of a target branch. tasks.json has no place for it (a
// landed task is still "done", and task-master knows no such field), so it
// lives in the plan's state directory, in land.json, written whole and
// atomically after every change.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/statgraph/statgraph/internal/fsutil"
	"github.com/statgraph/statgraph/internal/proc"
)

// Where a done unit stands in the merge queue of a target branch
// (LandRecord.State).
const (
	// LandLanded: the target holds the unit's branch, merged on a tip
	// whose checks passed.
	LandLanded = "landed"
	// LandWaiting: not landed yet; the next land tries it.
	LandWaiting = "waiting"
	// LandConflict: its branch conflicts with the target's tip and its
	// agent did not resolve the conflict within its attempts.
	LandConflict = "blocked-on-conflict"
	// LandChecks: its checks fail on the merge with the target's tip and
	// its agent did not make them pass within its attempts.
	LandChecks = "blocked-on-checks"
	// LandBlocked: it cannot be tried (no published branch, a dependency
	// not landed, an error); Reason says why.
	LandBlocked = "blocked"
)

// LandRecord is where one done unit stands in the merge queue of a target
// branch.
type LandRecord struct {
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Commit is the target's tip once the unit landed.
	Commit string `json:"commit,omitempty"`
	// OntoTip and BranchTip are the target's tip and the unit's branch
	// tip a land that failed was tried with: land tries the unit again
	// only when one of them has moved.
	OntoTip   string    `json:"onto_tip,omitempty"`
	BranchTip string    `json:"branch_tip,omitempty"`
	At        time.Time `json:"at"`
}

// landFile is the content of land.json: target branch -> unit -> record.
type landFile struct {
	Targets map[string]map[string]LandRecord `json:"targets"`
}

// LandFile is the path of the plan's merge-queue record (see Land).
func (p Plan) LandFile() string { return filepath.Join(p.Dir, "land.json") }

// LandDir is the directory of the workspaces land merges units in, one per
// unit.
func (p Plan) LandDir() string { return filepath.Join(p.Dir, "land") }

// LandThread is the checkpoint thread of the attempts land makes at unit,
// apart from the unit's own thread, whose history stays as the run left it.
func (p Plan) LandThread(unit string) string { return p.Key + "/land-" + unit }

// ReadLanding returns the records of the merge queue of target branch onto
// (unit id -> record); empty when land never ran onto it.
func ReadLanding(plan Plan, onto string) (map[string]LandRecord, error) {
	f, err := readLandFile(plan)
	if err != nil {
		return nil, err
	}
	return f.Targets[onto], nil
}

// LandTargets returns the branches land has records for.
func LandTargets(plan Plan) ([]string, error) {
	f, err := readLandFile(plan)
	if err != nil {
		return nil, err
	}
	var out []string
	for t := range f.Targets {
		out = append(out, t)
	}
	return out, nil
}

func readLandFile(plan Plan) (landFile, error) {
	var f landFile
	data, err := os.ReadFile(plan.LandFile())
	if errors.Is(err, fs.ErrNotExist) {
		return landFile{Targets: map[string]map[string]LandRecord{}}, nil
	}
	if err != nil {
		return f, fmt.Errorf("read the merge queue's record: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("%s is not valid JSON (%v); delete it and run statgraph land again, which finds the landed tasks from git", plan.LandFile(), err)
	}
	if f.Targets == nil {
		f.Targets = map[string]map[string]LandRecord{}
	}
	return f, nil
}

// recordLanding writes rec for unit id in target onto's queue, durably.
func recordLanding(plan Plan, onto, id string, rec LandRecord) error {
	f, err := readLandFile(plan)
	if err != nil {
		return err
	}
	if f.Targets[onto] == nil {
		f.Targets[onto] = map[string]LandRecord{}
	}
	rec.At = time.Now().UTC().Truncate(time.Second)
	f.Targets[onto][id] = rec
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteFile(plan.LandFile(), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("record the merge queue: %w", err)
	}
	return nil
}

// revParse returns the commit rev names in repo, or "" when it names none.
func revParse(ctx context.Context, repo, rev string) (string, error) {
	out, err := proc.RunGit(ctx, proc.Git{Dir: repo}, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "", nil
	}
	return strings.TrimSpace(string(out)), nil
}

// isAncestorIn reports whether commit a is b or one of its ancestors in
// repo.
func isAncestorIn(ctx context.Context, repo, a, b string) (bool, error) {
	_, err := proc.RunGit(ctx, proc.Git{Dir: repo}, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	if ge, ok := errors.AsType[*proc.GitError](err); ok && ge.ExitCode() == 1 {
		return false, nil
	}
	return false, fmt.Errorf("compare %s with %s in %s: %w", a, b, repo, err)
}
