package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// repack.go keeps the number of packs statgraph adds to a source small.
// Each publish writes one pack (publish.go), and everything that opens the
// source pays for every pack it has: go-git loads every index before its
// first object read, Prepare links every pack file into the new workspace,
// and git itself searches them one by one. So the packs statgraph wrote
// (and only those: they are listed in <common>/statgraph-packs as they are
// written) are merged now and then, geometrically as git repack
// --geometric=2 does, which rewrites each object O(log n) times over n
// publishes and leaves O(log n) of them.
//
// A merge writes the new pack as publish does (temporary names, fsynced,
// pack renamed, index last), records it, and only then removes the packs it
// replaces, each pack file before its index (a pack with no index makes
// go-git refuse the repository; an index with no pack is skipped by both
// git and go-git). The user's own packs, and any pack not in the list, are
// never read or removed. A merge and the Prepares, publishes and checks of
// the same source exclude each other: in this process through sourceLocks
// (a merge waiting for the lock blocks new readers), and across statgraph
// processes (queue workers) through a flock on <common>/statgraph-packs.lock,
// shared by readers and exclusive for a merge, which gives up for this time
// when readers keep it busy for longer than repackWait. git itself does
// not take that lock; it copes with packs that go away, as with its own
// repacks.

// ownPacksFile lists, one base name ("pack-<sum>") a line, the packs
// statgraph wrote into the source, in the common git directory.
const ownPacksFile = "statgraph-packs"

// repackAt is the number of listed packs at which a publish merges them.
const repackAt = 16

// repackWait is how long a merge tries to take the exclusive flock while
// other processes read the source, before it leaves the merge to a later
// publish.
const repackWait = 2 * time.Second

// sourceLocks holds, per common git directory, the lock that publishes,
// Prepares and checks take shared and a merge of packs takes exclusively.
var sourceLocks sync.Map // string -> *sync.RWMutex

// sourceLock returns the lock of the source whose common git directory is
// common.
func sourceLock(common string) *sync.RWMutex {
	l, _ := sourceLocks.LoadOrStore(common, new(sync.RWMutex))
	return l.(*sync.RWMutex)
}

// packsLockFile opens the flock file of the source whose common git
// directory is common.
func packsLockFile(common string) (*os.File, error) {
	return os.OpenFile(filepath.Join(common, ownPacksFile+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
}

// holdSource takes the shared locks of source (see the top of this file)
// and returns their release. A source whose git directory cannot be found
// gets no lock (opening it fails anyway), and one whose git directory
// cannot take the flock file (read-only) only the in-process lock: no
// statgraph process can write packs into it either.
func holdSource(source string) func() {
	_, common, err := sourceGitDirs(source)
	if err != nil {
		return func() {}
	}
	return holdCommon(common)
}

// holdCommon is holdSource for the repository whose common git directory
// is common.
func holdCommon(common string) func() {
	l := sourceLock(common)
	l.RLock()
	f, err := packsLockFile(common)
	if err != nil {
		return l.RUnlock
	}
	if fsutil.Flock(f, false, false) != nil {
		f.Close()
		return l.RUnlock
	}
	return func() {
		f.Close() // drops the flock
		l.RUnlock()
	}
}

// recordPack adds pack base name to the list of statgraph's packs of the
// source whose common git directory is common. The line is one append; a
// merge that rewrites the list meanwhile may drop it, which leaves that
// pack alone, as if it were the user's.
func recordPack(common, name string) error {
	f, err := os.OpenFile(filepath.Join(common, ownPacksFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(name + "\n")
	return errors.Join(err, f.Close())
}

// ownPack is one of statgraph's packs found in objects/pack.
type ownPack struct {
	name string // "pack-<sum>"
	size int64  // bytes of its .pack
}

// readOwnPacks returns the listed packs that are still in dir (objects/pack)
// with both their files, and whether the list names any that are gone.
func readOwnPacks(common, dir string) (packs []ownPack, stale bool, err error) {
	b, err := os.ReadFile(filepath.Join(common, ownPacksFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(name, "pack-") || strings.ContainsAny(name, `/\`) || seen[name] {
			stale = stale || name != ""
			continue
		}
		seen[name] = true
		fi, err := os.Stat(filepath.Join(dir, name+".pack"))
		if err != nil {
			stale = true
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, name+".idx")); err != nil {
			stale = true
			continue
		}
		packs = append(packs, ownPack{name: name, size: fi.Size()})
	}
	return packs, stale, nil
}

// geometricCut returns how many of packs (sorted by size, smallest first)
// to merge: all those up to the last one no larger than twice the sum of
// the smaller ones, so that each pack left is over twice the size of all
// smaller ones together (at most log2 of the total of them).
func geometricCut(packs []ownPack) int {
	cut := 0
	var sum int64
	for i, p := range packs {
		if i < 2 || p.size <= 2*sum {
			cut = i + 1
		}
		sum += p.size
	}
	return cut
}

// repackOwn merges statgraph's packs in the source whose common git
// directory is common when there are repackAt or more of them (see the top
// of this file). It does nothing while another process holds the repack
// lock. It returns an error only when the source was left as it was, or
// with the new pack added and some old ones still there (harmless: git and
// go-git read an object from whichever pack has it).
func repackOwn(common string) error {
	dir := filepath.Join(common, "objects", "pack")
	packs, _, err := readOwnPacks(common, dir)
	if err != nil || len(packs) < repackAt {
		return err
	}
	l := sourceLock(common)
	l.Lock()
	defer l.Unlock()
	lock, err := packsLockFile(common)
	if err != nil {
		return err
	}
	defer lock.Close()
	for deadline := time.Now().Add(repackWait); ; {
		err := fsutil.Flock(lock, true, true)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil // other processes keep reading: a later publish merges
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Read again under the locks: another merge may have run meanwhile.
	packs, _, err = readOwnPacks(common, dir)
	if err != nil || len(packs) < repackAt {
		return err
	}
	slices.SortFunc(packs, func(a, b ownPack) int { return cmpInt64(a.size, b.size) })
	cut := geometricCut(packs)
	if cut < 2 {
		return nil
	}
	merge, keep := packs[:cut], packs[cut:]
	name, err := mergePacks(dir, merge)
	if err != nil {
		return err
	}
	list := make([]string, 0, len(keep)+1)
	for _, p := range keep {
		list = append(list, p.name)
	}
	list = append(list, name)
	if err := writeList(common, list); err != nil {
		return err
	}
	for _, p := range merge {
		if p.name == name {
			continue // the same objects in the same order: the new pack is this one
		}
		base := filepath.Join(dir, p.name)
		if err := os.Remove(base + ".pack"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.Remove(base + ".idx"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return fsutil.SyncDir(dir)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mergePacks writes every object of packs (in dir), each once, into one
// new pack in dir and returns its name. The objects are streamed from the
// packs (see writePackNamed), so a merge costs a fixed buffer whatever
// their size.
func mergePacks(dir string, packs []ownPack) (string, error) {
	fsys := osfs.New(dir, osfs.WithBoundOS())
	from := map[plumbing.Hash]*packfile.Packfile{}
	var hashes []plumbing.Hash
	for _, p := range packs {
		pf, err := openPack(fsys, dir, p.name)
		if err != nil {
			return "", fmt.Errorf("workspace: merge statgraph's packs: read %s: %w", filepath.Join(dir, p.name), err)
		}
		defer pf.Close()
		it, err := pf.Index.Entries()
		if err != nil {
			return "", err
		}
		for {
			e, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				it.Close()
				return "", fmt.Errorf("workspace: merge statgraph's packs: read %s.idx: %w", filepath.Join(dir, p.name), err)
			}
			if from[e.Hash] == nil {
				from[e.Hash] = pf
				hashes = append(hashes, e.Hash)
			}
		}
		it.Close()
	}
	return writePackNamed(dir, hashes, func(h plumbing.Hash) (plumbing.EncodedObject, error) {
		return from[h].Get(h)
	})
}

// openPack opens the pack name ("pack-<sum>") in dir (on fsys) with its
// index; objects over largeObject bytes are read from the file when used.
func openPack(fsys billy.Filesystem, dir, name string) (*packfile.Packfile, error) {
	ib, err := os.ReadFile(filepath.Join(dir, name+".idx"))
	if err != nil {
		return nil, err
	}
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bytes.NewReader(ib)).Decode(idx); err != nil {
		return nil, fmt.Errorf("%s.idx: %w", name, err)
	}
	f, err := fsys.Open(name + ".pack")
	if err != nil {
		return nil, err
	}
	return packfile.NewPackfileWithCache(idx, fsys, f, cache.NewObjectLRU(cache.MiByte), largeObject), nil
}

// writeList replaces the list of statgraph's packs with names
// (fsutil.WriteFile: durable, and a reader sees the old list or the new).
func writeList(common string, names []string) error {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + "\n")
	}
	return fsutil.WriteFile(filepath.Join(common, ownPacksFile), []byte(b.String()), 0o644)
}
