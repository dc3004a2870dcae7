package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// largeObject is the size over which go-git gives an object that is
// read from its file when used (a loose object's file, or its place in a
// pack) instead of reading it whole into memory when it is looked up
// (filesystem.Options.LargeObjectThreshold). Every repository statgraph
// opens uses it, so a file of any size an agent commits costs statgraph
// a fixed buffer when it is published, pushed, checked out or diffed.
const largeObject = 1 << 20

// openRepo opens the repository at dir as git.PlainOpenWithOptions does
// with EnableDotGitCommonDir (a work tree with a .git directory or a
// "gitdir:" file, whose commondir is followed; or a bare repository),
// with storage that reads objects over largeObject lazily. keep keeps pack
// files open between object reads (go-git otherwise opens and closes a
// pack for every object it reads); the caller then calls the returned
// close when done with the repository (always safe to call).
func openRepo(dir string, keep bool) (*git.Repository, func(), error) {
	gitDir, wt, err := repoDirs(dir)
	if err != nil {
		return nil, nil, err
	}
	var dot billy.Filesystem = osfs.New(gitDir)
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		if _, err := os.Stat(c); err != nil {
			return nil, nil, fmt.Errorf("%w: commondir of %s: %w", git.ErrRepositoryIncomplete, gitDir, err)
		}
		dot = dotgit.NewRepositoryFilesystem(dot, osfs.New(c))
	}
	st := filesystem.NewStorageWithOptions(dot, cache.NewObjectLRUDefault(),
		filesystem.Options{KeepDescriptors: keep, LargeObjectThreshold: largeObject})
	var wfs billy.Filesystem
	if wt != "" {
		wfs = osfs.New(wt)
	}
	repo, err := git.Open(st, wfs)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return repo, func() { st.Close() }, nil
}

// repoDirs returns the git directory of the repository at dir and its
// work tree ("" for a bare repository).
func repoDirs(dir string) (gitDir, wt string, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	dotGit := filepath.Join(dir, git.GitDirName)
	fi, err := os.Stat(dotGit)
	switch {
	case err == nil && fi.IsDir():
		return dotGit, dir, nil
	case err == nil:
		b, err := os.ReadFile(dotGit)
		if err != nil {
			return "", "", err
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok {
			return "", "", fmt.Errorf(".git file of %s has no gitdir: prefix", dir)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return p, dir, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return "", "", git.ErrRepositoryNotExists
	}
	return dir, "", nil
}
