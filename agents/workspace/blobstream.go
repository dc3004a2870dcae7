package workspace

import (
	"compress/zlib"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/statgraph/statgraph/internal/secret"
)

// streamAbove is the size above which a file is hashed, scrubbed and
// stored as a stream instead of read whole, so that what statgraph holds of
// a file an agent wrote is a few MiB whatever the file's size (up to
// Options.MaxFileBytes). Smaller files are read whole: one read instead
// of two or three passes, and they are packed with the rest of a commit.
const streamAbove = 1 << 20

// fileBlob is a file hashed as a stream: its blob is written from the
// file, scrubbed again with the same secrets, when the scan stores it.
type fileBlob struct {
	abs, rel string
	raw      int64 // the file's size when hashed
	max      int64 // the most bytes it may hold
	size     int64 // the blob's size: raw, less what scrubbing removed
	set      secret.Set
	hash     plumbing.Hash
}

// hashStream is hash for a regular file of more than streamAbove bytes:
// one pass takes the SHA-256 of its scrubbed content, its size and, when
// nothing was scrubbed, its blob id (the header takes the size from lstat,
// which the pass checks); a file that held a secret takes a second pass
// for its blob id, now that its scrubbed size is known.
func (c *statCache) hashStream(abs, rel string, fi fs.FileInfo, stamp, max int64) (*fileEntry, error) {
	f := &fileBlob{abs: abs, rel: rel, raw: fi.Size(), max: max, set: secret.Current()}
	sum := sha256.New()
	blob := plumbing.NewHasher(plumbing.BlobObject, f.raw)
	n, scrubbed, err := f.copyTo(io.MultiWriter(sum, blob))
	if err != nil {
		return nil, err
	}
	f.size, f.hash = n, blob.Sum()
	if scrubbed {
		c.scrubbed = append(c.scrubbed, rel)
		blob = plumbing.NewHasher(plumbing.BlobObject, n)
		if m, _, err := f.copyTo(blob); err != nil {
			return nil, err
		} else if m != n {
			return nil, f.changed()
		}
		f.hash = blob.Sum()
	}
	key := keyOf(fi)
	e := &fileEntry{key: key, blob: f.hash, stream: f, racy: key.mtime >= stamp}
	sum.Sum(e.sum[:0])
	c.put(rel, e)
	return e, nil
}

// copyTo writes the file's content, scrubbed with f.set, to w, and returns
// how many bytes it wrote and whether anything was scrubbed. It fails,
// naming the file, when the file holds more than f.max bytes or not f.raw.
func (f *fileBlob) copyTo(w io.Writer) (int64, bool, error) {
	in, err := os.Open(f.abs)
	if err != nil {
		return 0, false, err
	}
	defer in.Close()
	out := &countingWriter{w: w}
	z := f.set.NewStream(out)
	raw, err := io.Copy(z, io.LimitReader(in, f.max+1))
	if err == nil {
		err = z.Close()
	}
	switch {
	case err != nil:
		return 0, false, err
	case raw > f.max:
		return 0, false, fmt.Errorf("%w: %q: the file grew past the cap of %s per file while it was read (limits.file_bytes in tasks.json); stop what writes it", ErrRefused, f.rel, sizeText(f.max))
	case raw != f.raw:
		return 0, false, f.changed()
	}
	return out.n, z.Scrubbed(), nil
}

func (f *fileBlob) changed() error {
	return fmt.Errorf("%q changed while it was committed (it held %d bytes when the commit began); stop what writes it and commit again", f.rel, f.raw)
}

// writeLoose writes f's blob into the object directory objects as a loose
// object, compressing it as it streams by, unless it is there. The
// object is written under a temporary name, checked to hash to f.hash (a
// file that changed since it was hashed is an error naming it, and leaves
// nothing), synced and renamed into place, as git writes one.
func (f *fileBlob) writeLoose(objects string) (err error) {
	hex := f.hash.String()
	dir := filepath.Join(objects, hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	zw := zlib.NewWriter(tmp)
	if _, err := fmt.Fprintf(zw, "%s %d\x00", plumbing.BlobObject, f.size); err != nil {
		return err
	}
	h := plumbing.NewHasher(plumbing.BlobObject, f.size)
	n, _, err := f.copyTo(io.MultiWriter(zw, h))
	if err != nil {
		return err
	}
	if n != f.size || h.Sum() != f.hash {
		return f.changed()
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o444); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), final)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
