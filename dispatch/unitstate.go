package dispatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/statgraph/statgraph/agents"
)

// removeUnitState removes what unit id keeps besides its workspace, its
// tool caches (up to a GiB of module and build cache) and its prompt
// files, and returns the bytes freed. It runs when the workspace is
// removed: after publishing (unless KeepWorkspaces) and by Clean.
func removeUnitState(plan Plan, id string) (int64, error) {
	if !filepath.IsLocal(id) || filepath.Base(id) != id {
		return 0, fmt.Errorf("dispatch: unit id %q is not a file name", id)
	}
	var freed int64
	var errs []error
	for _, dir := range []string{plan.CacheDir(id), plan.UnitPromptDir(id)} {
		n, err := removeAll(dir)
		freed += n
		errs = append(errs, err)
	}
	return freed, errors.Join(errs...)
}

// removeLeftovers removes the caches and prompts of the units not in
// units (removed from the tasks file since they ran), prompt files of the
// older flat layout, and the agents' private homes a killed run left
// (agents.RemoveStaleHomes), and returns the bytes freed. The caller holds
// the tasks file's lock.
func removeLeftovers(plan Plan, units map[string]bool) (int64, error) {
	var freed int64
	errs := []error{agents.RemoveStaleHomes(plan.HomesDir())}
	for _, parent := range []string{filepath.Dir(plan.CacheDir("x")), plan.PromptDir()} {
		entries, err := os.ReadDir(parent)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("dispatch: %w", err))
			continue
		}
		for _, e := range entries {
			if e.IsDir() && units[e.Name()] {
				continue
			}
			n, err := removeAll(filepath.Join(parent, e.Name()))
			freed += n
			errs = append(errs, err)
		}
	}
	return freed, errors.Join(errs...)
}

// removeAll removes path and everything under it, also directories made
// read-only (the go command's module cache), and returns the bytes freed;
// a path that does not exist frees 0 bytes and is no error.
func removeAll(path string) (int64, error) {
	var size int64
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone, or unreadable: RemoveAll says
		}
		if d.IsDir() {
			os.Chmod(p, 0o700)
		} else if fi, err := d.Info(); err == nil {
			size += fi.Size()
		}
		return nil
	})
	if err := os.RemoveAll(path); err != nil {
		return 0, fmt.Errorf("dispatch: remove %s: %w", path, err)
	}
	return size, nil
}
