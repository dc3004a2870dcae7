package workspace

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

// initGitDir writes the smallest repository git and go-git accept at
// gitDir: HEAD on branch, a config with the source as remote "origin", the
// directories objects and refs, and the task branch and the base ref in
// packed-refs. Every file and directory made costs a new inode, which is
// most of the time of preparing a small workspace, so none is made that a
// later step creates on demand (objects/pack, refs/heads, refs/tags).
// extra holds more refs to write (the branches a merge names).
func initGitDir(gitDir, source string, branch plumbing.ReferenceName, base plumbing.Hash, extra map[plumbing.ReferenceName]plumbing.Hash) error {
	for _, d := range []string{gitDir, filepath.Join(gitDir, "objects"), filepath.Join(gitDir, "refs")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("workspace: init %s: %w", gitDir, err)
		}
	}
	cfg := config.NewConfig()
	cfg.Remotes["origin"] = &config.RemoteConfig{Name: "origin", URLs: []string{source}}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("workspace: config of %s: %w", gitDir, err)
	}
	conf, err := cfg.Marshal()
	if err != nil {
		return fmt.Errorf("workspace: config of %s: %w", gitDir, err)
	}
	refs := map[string]plumbing.Hash{branch.String(): base, baseRef.String(): base}
	for r, h := range extra {
		if r != branch {
			refs[r.String()] = h
		}
	}
	names := slices.Sorted(maps.Keys(refs))
	packed := "# pack-refs with: peeled fully-peeled sorted \n"
	for _, r := range names {
		packed += refs[r].String() + " " + r + "\n"
	}
	files := []struct{ name, content string }{
		{"HEAD", "ref: " + branch.String() + "\n"},
		{"config", string(conf)},
		{"packed-refs", packed},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(gitDir, f.name), []byte(f.content), 0o644); err != nil {
			return fmt.Errorf("workspace: init %s: %w", gitDir, err)
		}
	}
	return nil
}
