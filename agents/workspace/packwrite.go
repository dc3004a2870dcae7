package workspace

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// encodePack is for packs written into a repository no go-git Repository
// has open yet: go-git loads the list of packs once, so a pack written
// behind an open repository's back stays invisible to it (Commit and Finish
// use go-git's own pack writer for that reason, whose index encoder issues
// one write per field).
//
// encodePack returns objs, without deltas, as a pack and its index, and
// their base name ("pack-<sum>").
func encodePack(objs []plumbing.EncodedObject) (pack, index []byte, name string, err error) {
	var buf bytes.Buffer
	hdr := [12]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2}
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(objs)))
	buf.Write(hdr[:])
	idx := new(idxfile.Writer)
	if err := idx.OnHeader(uint32(len(objs))); err != nil {
		return nil, nil, "", err
	}
	zw, err := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	if err != nil {
		return nil, nil, "", err
	}
	for _, o := range objs {
		pos := buf.Len()
		writeEntryHeader(&buf, o.Type(), o.Size())
		r, err := o.Reader()
		if err != nil {
			return nil, nil, "", err
		}
		zw.Reset(&buf)
		_, err = io.Copy(zw, r)
		r.Close()
		if err != nil {
			return nil, nil, "", err
		}
		if err := zw.Close(); err != nil {
			return nil, nil, "", err
		}
		idx.Add(o.Hash(), uint64(pos), crc32.ChecksumIEEE(buf.Bytes()[pos:]))
	}
	sum := plumbing.Hash(sha1.Sum(buf.Bytes()))
	buf.Write(sum[:])
	if err := idx.OnFooter(sum); err != nil {
		return nil, nil, "", err
	}
	index, err = encodeIndex(idx)
	if err != nil {
		return nil, nil, "", err
	}
	return buf.Bytes(), index, "pack-" + sum.String(), nil
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
