package workspace

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// packcache.go keeps what every Prepare of a run would otherwise redo:
// the pack made of the source's loose objects (shareObjects) is built once
// per set of loose objects and then hard-linked into each new workspace.

// packedLoose is one pack built from a source's loose objects.
type packedLoose struct {
	key       [sha1.Size]byte // the loose objects it holds (sorted hashes)
	pack, idx []byte          // the files' contents, to write again when no copy is left to link
	name      string          // "pack-<sum>"
	at        string          // the objects/pack directory (once in place) that last received it
}

// packs caches, per source objects directory, the last pack built from its
// loose objects. mu guards the map and the entries.
var packs struct {
	mu sync.Mutex
	by map[string]*packedLoose
}

// looseKey identifies a set of loose objects: loose objects are immutable
// and named by their hash, so the same names mean the same contents.
func looseKey(hashes []plumbing.Hash) [sha1.Size]byte {
	sorted := slices.Clone(hashes)
	slices.SortFunc(sorted, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	h := sha1.New()
	for _, x := range sorted {
		h.Write(x[:])
	}
	var k [sha1.Size]byte
	copy(k[:], h.Sum(nil))
	return k
}

// sharePacked gives dstGit (to be renamed to finalGit) a pack of the loose objects hashes of src (whose
// objects directory is objects): a hard link to the pack an earlier
// Prepare built from the same objects when one is left, else the same
// bytes written again, else a pack built now (and remembered). Each file is
// written or linked under its final name, the index last, so a reader
// never finds an index without its pack.
func sharePacked(src *git.Repository, objects, dstGit, finalGit string, hashes []plumbing.Hash) error {
	key := looseKey(hashes)
	packs.mu.Lock()
	defer packs.mu.Unlock()
	p := packs.by[objects]
	if p == nil || p.key != key {
		pack, idx, name, err := buildPack(src, hashes)
		if err != nil {
			return err
		}
		p = &packedLoose{key: key, pack: pack, idx: idx, name: name}
		if packs.by == nil {
			packs.by = map[string]*packedLoose{}
		}
		packs.by[objects] = p
	}
	dir := filepath.Join(dstGit, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, p.name)
	if p.at != "" {
		from := filepath.Join(p.at, p.name)
		if os.Link(from+".pack", base+".pack") == nil {
			if os.Link(from+".idx", base+".idx") == nil {
				p.at = filepath.Join(finalGit, "objects", "pack")
				return nil
			}
			os.Remove(base + ".pack")
		}
	}
	if err := os.WriteFile(base+".pack", p.pack, 0o444); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := os.WriteFile(base+".idx", p.idx, 0o444); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	p.at = filepath.Join(finalGit, "objects", "pack")
	return nil
}
