package workspace

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// packwrite.go is statgraph's one pack writer: commits, publishing,
// pushing, merging statgraph's packs and sharing a source's loose objects
// all write their packs through encodePack. It streams: each object is
// read through its own reader (a large one from its file, see
// openRepo's LargeObjectThreshold) and compressed straight onto the
// output, hashed as it goes, so a pack of any size costs a fixed buffer,
// and the index is written after, from the offsets and CRCs gathered.

// objectSource returns the object with hash h, to be read once.
type objectSource func(h plumbing.Hash) (plumbing.EncodedObject, error)

// encodePack writes the objects hashes (each once, in that order, taken
// from get) as a pack without deltas onto w, and returns the pack's
// checksum and its index (version 2).
func encodePack(w io.Writer, hashes []plumbing.Hash, get objectSource) (sum plumbing.Hash, index []byte, err error) {
	h := sha1.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	hdr := [12]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2}
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(hashes)))
	if _, err := cw.Write(hdr[:]); err != nil {
		return sum, nil, err
	}
	idx := new(idxfile.Writer)
	if err := idx.OnHeader(uint32(len(hashes))); err != nil {
		return sum, nil, err
	}
	zw, err := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	if err != nil {
		return sum, nil, err
	}
	crc := crc32.NewIEEE()
	for _, oh := range hashes {
		o, err := get(oh)
		if err != nil {
			return sum, nil, err
		}
		pos := cw.n
		crc.Reset()
		entry := io.MultiWriter(cw, crc)
		if _, err := entry.Write(entryHeader(o.Type(), o.Size())); err != nil {
			return sum, nil, err
		}
		if err := compressObject(zw, entry, o); err != nil {
			return sum, nil, fmt.Errorf("object %s: %w", oh, err)
		}
		idx.Add(oh, uint64(pos), crc.Sum32())
	}
	copy(sum[:], h.Sum(nil))
	if _, err := w.Write(sum[:]); err != nil {
		return sum, nil, err
	}
	if err := idx.OnFooter(sum); err != nil {
		return sum, nil, err
	}
	index, err = encodeIndex(idx)
	return sum, index, err
}

// compressObject writes o's content, zlib-compressed by zw, onto w and
// checks that it is as long as o says.
func compressObject(zw *zlib.Writer, w io.Writer, o plumbing.EncodedObject) error {
	r, err := o.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	zw.Reset(w)
	n, err := io.Copy(zw, r)
	if err != nil {
		return err
	}
	if n != o.Size() {
		return fmt.Errorf("read %d bytes, its size is %d", n, o.Size())
	}
	return zw.Close()
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// encodeIndex returns the index (version 2) that idx, fed a whole pack,
// has gathered.
func encodeIndex(idx *idxfile.Writer) ([]byte, error) {
	mi, err := idx.Index()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := idxfile.NewEncoder(&buf).Encode(mi); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// entryHeader returns a pack entry's header: the type in bits 4-6 of the
// first byte, the size in its low 4 bits and then 7 bits a byte, each
// byte but the last with its top bit set.
func entryHeader(t plumbing.ObjectType, size int64) []byte {
	var out []byte
	b := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		out = append(out, b|0x80)
		b = byte(size & 0x7f)
		size >>= 7
	}
	return append(out, b)
}

// writePackNamed writes the objects hashes (taken from get) as one pack
// into dir (objects/pack of a repository) and returns its base name
// ("pack-<sum>"), as git's fetch does: the pack streamed to a temporary
// file (tmp_pack_*, which git fsck passes over) and fsynced, its index
// written to tmp_idx_* and fsynced, then the pack renamed to its final
// name and the index last, and dir fsynced. A kill leaves at most
// temporary files, or a pack without its index, which git ignores and
// repairOrphanPacks completes for go-git.
func writePackNamed(dir string, hashes []plumbing.Hash, get objectSource) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "tmp_pack_")
	if err != nil {
		return "", err
	}
	tmpPack := f.Name()
	bw := bufio.NewWriterSize(f, 64<<10)
	sum, idx, err := encodePack(bw, hashes, get)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = closeReadOnly(f)
	} else {
		f.Close()
	}
	if err != nil {
		os.Remove(tmpPack)
		return "", err
	}
	tmpIdx, err := writeTemp(dir, "tmp_idx_", idx)
	if err != nil {
		os.Remove(tmpPack)
		return "", err
	}
	name := "pack-" + sum.String()
	base := filepath.Join(dir, name)
	if err := os.Rename(tmpPack, base+".pack"); err != nil {
		os.Remove(tmpPack)
		os.Remove(tmpIdx)
		return "", err
	}
	if err := os.Rename(tmpIdx, base+".idx"); err != nil {
		os.Remove(tmpIdx)
		return "", err
	}
	return name, fsutil.SyncDir(dir)
}

// closeReadOnly makes f read-only, as git keeps its packs, fsyncs and
// closes it.
func closeReadOnly(f *os.File) error {
	if err := f.Chmod(0o444); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeTemp writes data to a new file in dir named prefix*, read-only,
// fsynced, and returns its path.
func writeTemp(dir, prefix string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, prefix)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := closeReadOnly(f); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// storeSource serves the objects of repo (at dir, which names it in
// errors).
func storeSource(repo *git.Repository, dir string) objectSource {
	return func(h plumbing.Hash) (plumbing.EncodedObject, error) {
		o, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, fmt.Errorf("workspace: %s: read object %s: %w", dir, h, err)
		}
		return o, nil
	}
}

// fromObjects returns the hashes of objs, each once, and an objectSource
// serving them: for objects already read.
func fromObjects(objs []plumbing.EncodedObject) ([]plumbing.Hash, objectSource) {
	by := make(map[plumbing.Hash]plumbing.EncodedObject, len(objs))
	hashes := make([]plumbing.Hash, 0, len(objs))
	for _, o := range objs {
		if _, dup := by[o.Hash()]; !dup {
			by[o.Hash()] = o
			hashes = append(hashes, o.Hash())
		}
	}
	return hashes, func(h plumbing.Hash) (plumbing.EncodedObject, error) {
		if o, ok := by[h]; ok {
			return o, nil
		}
		return nil, plumbing.ErrObjectNotFound
	}
}
