package workspace

import (
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// loadTracked fills the tracked sets from the index unless they are
// known; an unreadable index counts as empty, as for a new repository.
func (s *gitScan) loadTracked() {
	if s.st.tracked != nil {
		return
	}
	var files []scanned
	if idx, err := s.w.repo.Storer.Index(); err == nil {
		for _, e := range idx.Entries {
			files = append(files, scanned{path: e.Name, mode: e.Mode, blob: e.Hash})
		}
	}
	s.st.setTracked(files)
}

// setTracked makes files the tracked files and submodules.
func (st *scanState) setTracked(files []scanned) {
	st.tracked = make(map[string]plumbing.Hash, len(files))
	st.trackedDirs = map[string]bool{}
	st.gitlinks = map[string]plumbing.Hash{}
	for _, f := range files {
		st.tracked[f.path] = f.blob
		if f.mode == filemode.Submodule {
			st.gitlinks[f.path] = f.blob
		}
		for d := path.Dir(f.path); d != "." && !st.trackedDirs[d]; d = path.Dir(d) {
			st.trackedDirs[d] = true
		}
	}
}

// syncIndex writes the index for tree from files, the files of the scan
// that recorded it, unless the index already holds that tree, and makes
// them the tracked files. Entries that were racy in the scan get size 0 so
// that git and go-git read those files again.
func (st *scanState) syncIndex(s storer.IndexStorer, tree plumbing.Hash, files []scanned) error {
	if tree == st.indexTree {
		return nil
	}
	slices.SortFunc(files, func(a, b scanned) int { return strings.Compare(a.path, b.path) })
	idx := &index.Index{Version: 2, Entries: make([]*index.Entry, len(files))}
	for i, f := range files {
		e := &index.Entry{Name: f.path, Mode: f.mode, Hash: f.blob}
		fillStat(e, f.info)
		if f.racy {
			e.Size = 0
		}
		idx.Entries[i] = e
	}
	if err := s.SetIndex(idx); err != nil {
		return err
	}
	st.setTracked(files)
	st.indexTree = tree
	return nil
}
