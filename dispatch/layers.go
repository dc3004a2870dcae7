package dispatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/statgraph/statgraph/tasks"
)

// layers.go keeps a done unit's Go build cache for the units that build on
// it. Every unit's workspace appears at the repository's path inside its
// sandbox (verifier.Sandbox.Root), so a package the unit's dependency
// compiled has the same build-cache key in the unit; with the dependency's
// cache as a read-only layer under its own (GoCacheLayers), a chain of
// tasks compiles each package once, as one checkout would, instead of once
// per task. A unit sees only the layers of the units it depends on, whose
// code its workspace holds anyway, so a task can plant nothing in the cache
// of a task that does not build on it. A layer is removed as soon as no
// unit still to run depends on it, and every layer when the run ends (and
// by Clean, as any cache of a unit no longer in the file).

// layerDir is where done unit id's Go build cache is kept once its
// workspace is removed.
func layerDir(plan Plan, id string) string {
	return filepath.Join(filepath.Dir(plan.CacheDir(id)), ".layers", id)
}

// keepLayer moves done unit id's Go build cache, if it has one, to its
// layer directory; removeUnitState then removes the rest of its caches.
func keepLayer(plan Plan, id string) error {
	src := filepath.Join(plan.CacheDir(id), "go-build")
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	dst := layerDir(plan, id)
	if _, err := removeAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("tasks: keep the build cache of task %s: %w", id, err)
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("tasks: keep the build cache of task %s: %w", id, err)
	}
	return nil
}

// maxGoCacheLayers is the most build-cache layers a unit's sandbox
// searches: those of its nearest maxGoCacheLayers dependencies (breadth
// first). Every layer is one more place a build-cache lookup can miss in
// and one more read-only mount, so a chain of 100 tasks must not mean 100;
// a package only a farther dependency compiled is compiled again.
const maxGoCacheLayers = 8

// goCacheLayers returns the kept build caches of the units unit id
// depends on, directly or not, nearest first, at most maxGoCacheLayers: a
// done unit's layer, or the cache it still has (its workspace kept).
func (d *Dispatcher) goCacheLayers(plan Plan, id string) []string {
	if d.File == nil {
		return nil
	}
	var layers []string
	for _, dep := range buildsOn(d.File.Units(), []string{id}) {
		if len(layers) == maxGoCacheLayers {
			break
		}
		for _, dir := range []string{layerDir(plan, dep), filepath.Join(plan.CacheDir(dep), "go-build")} {
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				layers = append(layers, dir)
				break
			}
		}
	}
	return layers
}

// buildsOn returns the units that the units from depend on, directly or
// not, breadth first (nearest first), without from themselves.
func buildsOn(units []tasks.Unit, from []string) []string {
	deps := make(map[string][]string, len(units))
	for _, u := range units {
		deps[u.ID] = u.Deps
	}
	seen := map[string]bool{}
	for _, id := range from {
		seen[id] = true
	}
	var out []string
	var queue []string
	for _, id := range from {
		queue = append(queue, deps[id]...)
	}
	for ; len(queue) > 0; queue = queue[1:] {
		dep := queue[0]
		if seen[dep] {
			continue
		}
		seen[dep] = true
		out = append(out, dep)
		queue = append(queue, deps[dep]...)
	}
	return out
}

// sweepLayers removes the kept build caches that no unit still to run
// depends on, directly or not; all of them when final (the run ends).
func (d *Dispatcher) sweepLayers(plan Plan, final bool) {
	dir := filepath.Dir(layerDir(plan, "x"))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	needed := map[string]bool{}
	if !final {
		units := d.File.Units()
		var pending []string
		for _, u := range units {
			if t, ok := d.File.Task(u.ID); ok && tasks.Runnable(t.Status) {
				pending = append(pending, u.ID)
			}
		}
		for _, id := range buildsOn(units, pending) {
			needed[id] = true
		}
	}
	for _, e := range entries {
		if !needed[e.Name()] {
			if _, err := removeAll(filepath.Join(dir, e.Name())); err != nil && d.Log != nil {
				fmt.Fprintf(d.Log, "note: %v\n", err)
			}
		}
	}
	if final {
		os.Remove(dir)
	}
}
