package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// scanState is what a Workspace remembers between scans of its working
// tree so that each scan costs one lstat per file plus the reading of the
// files that changed. It is guarded by Workspace.mu; the zero value is an
// empty cache (the next scan reads every file).
type scanState struct {
	stat    statCache
	ignores ignoreCache
	// trees maps a directory ("" for the root) to the entries and hash of
	// its tree at the last scan, so an unchanged directory is not encoded
	// or hashed again.
	trees map[string]cachedTree
	// tracked maps the files of the index to their blobs and trackedDirs
	// holds the directories above them: an ignored path is still recorded
	// when it is tracked, as git does. gitlinks holds the index's submodule entries, which are
	// recorded as they are (the workspace never checks submodules out).
	// All three are nil until loaded from the index by the first scan
	// after Prepare's checkout, a reopen or a Reset.
	tracked     map[string]plumbing.Hash
	trackedDirs map[string]bool
	gitlinks    map[string]plumbing.Hash
	// indexTree is the tree the index was last written for by Commit; zero
	// when unknown (the index was written by someone else).
	indexTree plumbing.Hash
	// commit and commitTree are the last commit whose tree was looked up.
	commit, commitTree plumbing.Hash
}

type cachedTree struct {
	entries []object.TreeEntry
	hash    plumbing.Hash
}

// scanned is one file recorded by a git scan, for writing the index.
type scanned struct {
	path string
	mode filemode.FileMode
	blob plumbing.Hash
	info fs.FileInfo
	racy bool
}

// gitScan walks the working tree as git add -A would see it and stores
// its blobs and trees in the workspace's repository.
type gitScan struct {
	w     *Workspace
	st    *scanState
	stamp int64
	files []scanned
	// pending holds the objects the store lacks, in the order made, until
	// write stores them together.
	pending []plumbing.EncodedObject
	// streams holds the blobs of files hashed as streams that the store
	// lacks; write stores them from the files, before pending.
	streams []*fileBlob
	queued  map[plumbing.Hash]bool
	written bool // write succeeded
	// newFiles and newBytes count the files the scan records that differ
	// from the last commit, and their sizes, against the workspace's caps.
	newFiles int
	newBytes int64
}

// scanTree records the working tree (tracked files, and untracked files
// not matched by .gitignore or .git/info/exclude) as a tree and returns the
// scan holding its hash and files. Only files whose stat changed since the
// last scan are read; the objects the store lacks are held in memory until
// the caller stores them with write. The caller holds w.mu.
func (w *Workspace) scanTree() (*gitScan, plumbing.Hash, error) {
	gitDir := filepath.Join(w.dir, git.GitDirName)
	stamp, err := scanStamp(gitDir)
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("workspace: scan %s: %w", w.dir, err)
	}
	s := &gitScan{w: w, st: &w.scan, stamp: stamp, queued: map[plumbing.Hash]bool{}}
	s.loadTracked()
	exclude := filepath.Join(gitDir, "info", "exclude")
	fi, err := os.Lstat(exclude)
	if err != nil {
		fi = nil
	}
	ps, err := s.st.ignores.patterns(exclude, ".git/info/exclude", fi, nil, stamp)
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("workspace: read %s: %w", exclude, err)
	}
	h, _, err := s.dir("", nil, ps, false)
	if err == nil && h.IsZero() {
		h, err = s.storeTree("", nil)
	}
	if err != nil {
		w.scan = scanState{} // it may name objects that will not be written
		if errors.Is(err, ErrRefused) {
			return nil, plumbing.ZeroHash, err // it names the path already
		}
		return nil, plumbing.ZeroHash, fmt.Errorf("workspace: scan %s: %w", w.dir, err)
	}
	return s, h, nil
}

// dir records the directory rel (path components parts) and returns its
// tree hash, or false when it holds nothing to record. ps are the ignore
// patterns in force above it; ignored says the directory itself is ignored
// (so only tracked files under it are recorded).
func (s *gitScan) dir(rel string, parts []string, ps []gitignore.Pattern, ignored bool) (plumbing.Hash, bool, error) {
	abs := filepath.Join(s.w.dir, filepath.FromSlash(rel))
	des, err := os.ReadDir(abs)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	infos := make([]fs.FileInfo, len(des))
	for i, de := range des {
		fi, err := de.Info()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return plumbing.ZeroHash, false, err
		}
		infos[i] = fi
		if de.Name() == ".gitignore" && fi != nil {
			own, err := s.st.ignores.patterns(filepath.Join(abs, ".gitignore"), path.Join(rel, ".gitignore"), fi, parts, s.stamp)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			if len(own) > 0 {
				ps = slices.Concat(ps, own)
			}
		}
	}
	m := gitignore.NewMatcher(ps)
	var entries []object.TreeEntry
	for i, de := range des {
		fi, name := infos[i], de.Name()
		if fi == nil || strings.EqualFold(name, git.GitDirName) {
			continue
		}
		p := path.Join(rel, name)
		sub := append(parts[:len(parts):len(parts)], name)
		ign := ignored || len(ps) > 0 && m.Match(sub, fi.IsDir())
		switch mode := fi.Mode(); {
		case mode.IsDir():
			if h, ok := s.st.gitlinks[p]; ok {
				entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Submodule, Hash: h})
				s.files = append(s.files, scanned{path: p, mode: filemode.Submodule, blob: h, info: fi})
				continue
			}
			if ign && !s.st.trackedDirs[p] {
				continue
			}
			if why := nameProblem(name, filemode.Dir); why != "" {
				return plumbing.ZeroHash, false, refuse(p+"/", why, "remove or rename it")
			}
			h, ok, err := s.dir(p, sub, ps, ign)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			if ok {
				entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
			}
		case mode.IsRegular() || mode&fs.ModeSymlink != 0:
			if _, tracked := s.st.tracked[p]; ign && !tracked {
				continue
			}
			fm := filemode.Regular
			switch {
			case mode&fs.ModeSymlink != 0:
				fm = filemode.Symlink
			case mode&0o100 != 0: // the owner's execute bit, as git and go-git read it
				fm = filemode.Executable
			}
			if err := s.checkName(p, name, fm, fi); err != nil {
				return plumbing.ZeroHash, false, err
			}
			e, err := s.file(filepath.Join(abs, name), p, fi)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			entries = append(entries, object.TreeEntry{Name: name, Mode: fm, Hash: e.blob})
			s.files = append(s.files, scanned{path: p, mode: fm, blob: e.blob, info: fi, racy: e.racy})
		}
	}
	if len(entries) == 0 {
		return plumbing.ZeroHash, false, nil
	}
	h, err := s.storeTree(rel, entries)
	return h, err == nil, err
}

// file returns the hashes of the file at abs, reading it only when its
// stat changed or its entry is racy, and makes sure its blob is stored.
//
// It counts the file against the caps per commit when its blob differs
// from the last commit's, and reads a .gitmodules afresh every time to
// check its submodules.
func (s *gitScan) file(abs, rel string, fi fs.FileInfo) (*fileEntry, error) {
	modules := fi.Mode().IsRegular() && isGitmodules(path.Base(rel))
	e := s.st.stat.lookup(rel, fi)
	if e == nil || !e.stored || modules {
		var data []byte
		var err error
		// checkName let through only files under the cap and files the
		// last commit holds as they are (the user's own large files).
		if e, data, err = s.st.stat.hash(abs, rel, fi, s.stamp, max(s.w.limits.fileBytes, fi.Size())); err != nil {
			return nil, err
		}
		if modules {
			if why := gitmodulesProblem(data); why != "" {
				return nil, refuse(rel, why, "remove the submodule or correct it")
			}
		}
		if !e.stored {
			if e.stream != nil {
				s.storeStream(e.stream)
			} else if err := s.store(plumbing.BlobObject, data, e.blob); err != nil {
				return nil, err
			}
			e.stored = true
		}
	}
	if e.committed.IsZero() {
		e.committed = s.st.tracked[rel]
	}
	if e.blob != e.committed {
		if err := s.count(rel, fi.Size()); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// checkName refuses the file p (base name name, mode fm, lstat fi) when
// git would refuse its name (see nameProblem), when its path holds a
// control character, or when it is over the cap per file, unless the last
// commit holds it as it is (a large file of the user's repository).
func (s *gitScan) checkName(p, name string, fm filemode.FileMode, fi fs.FileInfo) error {
	if why := nameProblem(name, fm); why != "" {
		return refuse(p, why, "remove or rename it")
	}
	if hasControl(p) {
		return refuse(p, "the name holds a control character, which makes it unsafe to show in a terminal", "rename it")
	}
	if e := s.st.stat.files[p]; e != nil && e.key == keyOf(fi) && !e.blob.IsZero() && e.blob == e.committed {
		return nil
	}
	return s.checkSize(p, fi)
}

// committed records that the last commit holds the scanned files as
// scanned, so the next scan counts only what changes after it.
func (s *gitScan) committed() {
	for _, f := range s.files {
		if e := s.st.stat.files[f.path]; e != nil {
			e.committed = e.blob
		}
	}
}

// storeTree sorts entries as git does (a directory compares as "name/"),
// stores the tree unless the store has it and returns its hash. A directory
// whose entries equal those of the last scan keeps its hash unencoded.
func (s *gitScan) storeTree(rel string, entries []object.TreeEntry) (plumbing.Hash, error) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	if c, ok := s.st.trees[rel]; ok && slices.Equal(c.entries, entries) {
		return c.hash, nil
	}
	o := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: entries}).Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	h := o.Hash()
	if err := s.storeObject(o); err != nil {
		return plumbing.ZeroHash, err
	}
	if s.st.trees == nil {
		s.st.trees = map[string]cachedTree{}
	}
	s.st.trees[rel] = cachedTree{entries: entries, hash: h}
	return h, nil
}

// store queues the object of type t with content data and hash h unless
// the store already has it.
func (s *gitScan) store(t plumbing.ObjectType, data []byte, h plumbing.Hash) error {
	if s.queued[h] || s.w.repo.Storer.HasEncodedObject(h) == nil {
		return nil
	}
	o := &plumbing.MemoryObject{}
	o.SetType(t)
	if _, err := o.Write(data); err != nil {
		return err
	}
	s.queue(o)
	return nil
}

// storeStream queues the blob of f unless the store already has it.
func (s *gitScan) storeStream(f *fileBlob) {
	if !s.queued[f.hash] && s.w.repo.Storer.HasEncodedObject(f.hash) != nil {
		s.queued[f.hash] = true
		s.streams = append(s.streams, f)
	}
}

// storeObject queues o unless the store already has it.
func (s *gitScan) storeObject(o plumbing.EncodedObject) error {
	if !s.queued[o.Hash()] && s.w.repo.Storer.HasEncodedObject(o.Hash()) != nil {
		s.queue(o)
	}
	return nil
}

func (s *gitScan) queue(o plumbing.EncodedObject) {
	s.queued[o.Hash()] = true
	s.pending = append(s.pending, o)
}

// write stores the queued objects and extra: the blobs of files hashed
// as streams as loose objects written from the files, then one object as
// a loose object, more as one new pack (two new files instead of one or
// two per object, which is most of the cost of a commit). On failure the workspace's caches are
// dropped, since they name objects that were not written.
func (s *gitScan) write(extra ...plumbing.EncodedObject) error {
	for _, o := range extra {
		s.storeObject(o)
	}
	objects := filepath.Join(s.w.dir, git.GitDirName, "objects")
	var err error
	for _, f := range s.streams {
		if err = f.writeLoose(objects); err != nil {
			break
		}
	}
	if err == nil {
		err = writeObjects(s.w.repo, objects, s.pending)
	}
	if err != nil {
		s.w.scan = scanState{}
		return fmt.Errorf("workspace: write objects in %s: %w", s.w.dir, err)
	}
	s.pending, s.streams, s.queued, s.written = nil, nil, map[plumbing.Hash]bool{}, true
	return nil
}

// abandon drops the workspace's caches unless write succeeded: they name
// queued objects that are not in the store.
func (s *gitScan) abandon() {
	if !s.written {
		s.w.scan = scanState{}
	}
}

// writeObjects stores objs in repo (whose objects directory is objects):
// one as a loose object, more as one pack (writePackNamed), which the
// repository's storage then reads (go-git loads its list of packs once).
func writeObjects(repo *git.Repository, objects string, objs []plumbing.EncodedObject) error {
	if len(objs) < 2 {
		for _, o := range objs {
			if _, err := repo.Storer.SetEncodedObject(o); err != nil {
				return err
			}
		}
		return nil
	}
	hashes, get := fromObjects(objs)
	if _, err := writePackNamed(filepath.Join(objects, "pack"), hashes, get); err != nil {
		return err
	}
	r, ok := repo.Storer.(interface{ Reindex() })
	if !ok {
		return fmt.Errorf("the repository's storage (%T) cannot read a new pack", repo.Storer)
	}
	r.Reindex()
	return nil
}
