package workspace

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// writePack writes objs, without deltas, as one pack and its index under
// gitDir/objects/pack, built in memory and written with one write per file.
// It is for a repository no go-git Repository has open yet: go-git loads
// the list of packs once, so a pack written behind an open repository's
// back stays invisible to it (Commit and Finish use go-git's own pack
// writer for that reason, whose index encoder issues one write per field).
func writePack(gitDir string, objs []plumbing.EncodedObject) error {
	var pack bytes.Buffer
	hdr := [12]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2}
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(objs)))
	pack.Write(hdr[:])
	idx := new(idxfile.Writer)
	if err := idx.OnHeader(uint32(len(objs))); err != nil {
		return err
	}
	zw, err := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	if err != nil {
		return err
	}
	for _, o := range objs {
		pos := pack.Len()
		writeEntryHeader(&pack, o.Type(), o.Size())
		r, err := o.Reader()
		if err != nil {
			return err
		}
		zw.Reset(&pack)
		_, err = io.Copy(zw, r)
		r.Close()
		if err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		idx.Add(o.Hash(), uint64(pos), crc32.ChecksumIEEE(pack.Bytes()[pos:]))
	}
	sum := plumbing.Hash(sha1.Sum(pack.Bytes()))
	pack.Write(sum[:])
	if err := idx.OnFooter(sum); err != nil {
		return err
	}
	mi, err := idx.Index()
	if err != nil {
		return err
	}
	var ib bytes.Buffer
	if _, err := idxfile.NewEncoder(&ib).Encode(mi); err != nil {
		return err
	}
	dir := filepath.Join(gitDir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The pack first: git and go-git look for packs through their index.
	base := filepath.Join(dir, "pack-"+sum.String())
	if err := os.WriteFile(base+".pack", pack.Bytes(), 0o444); err != nil {
		return err
	}
	return os.WriteFile(base+".idx", ib.Bytes(), 0o444)
}

// writeEntryHeader writes a pack entry's header: the type in bits 4-6 of
// the first byte, the size in its low 4 bits and then 7 bits a byte, each
// byte but the last with its top bit set.
func writeEntryHeader(w *bytes.Buffer, t plumbing.ObjectType, size int64) {
	b := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		w.WriteByte(b | 0x80)
		b = byte(size & 0x7f)
		size >>= 7
	}
	w.WriteByte(b)
}
