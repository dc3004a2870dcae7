package workspace

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/statgraph/statgraph/internal/secret"
)

// statKey is what lstat says about a file; a file whose key is unchanged
// since it was hashed still has the content that was hashed, unless the
// entry was racy (see fileEntry.racy).
type statKey struct {
	size  int64
	mtime int64 // nanoseconds since the epoch
	ctime int64 // nanoseconds since the epoch; 0 where the platform has none
	ino   uint64
	mode  fs.FileMode
}

// fileEntry is the cached hashing of one file or symbolic link.
type fileEntry struct {
	key  statKey
	blob plumbing.Hash // git blob id of the content (of the target for links)
	sum  [32]byte      // SHA-256 of the same bytes, for TreeHash
	// committed is the blob the last commit holds at this path, zero when
	// unknown (the scan then takes the index's) or when it holds none.
	committed plumbing.Hash
	// stored says the blob is known to be in the workspace's object store.
	stored bool
	// stream is set when the file was hashed as a stream (see
	// streamAbove): its blob is written from the file, not from memory.
	stream *fileBlob
	// racy says the file's content was last changed (mtime) in the same
	// tick of the file system's clock as the scan that hashed it began, or
	// later, so it may have changed again since without its stat changing:
	// git's "racy git" problem. A racy entry is never trusted; the next scan
	// re-reads it. (The mode is read from lstat on every scan, so only the
	// content can be stale.)
	racy bool
}

// statCache remembers, per slash-separated path relative to the working
// tree, the stat and hashes of every file the last scans read, so that a
// scan reads only the files whose stat changed. It is guarded by
// Workspace.mu; its zero value is empty and ready to use.
type statCache struct {
	files map[string]*fileEntry
	reads int // files read so far, for tests and benchmarks
	// scrubbed lists the files read since Commit last took the list whose
	// content held a secret: they are recorded with it replaced.
	scrubbed []string
}

// lookup returns the cached entry for rel when it can be trusted for a file
// whose lstat is fi, or nil when the file must be read.
func (c *statCache) lookup(rel string, fi fs.FileInfo) *fileEntry {
	e := c.files[rel]
	if e == nil || e.racy || e.key != keyOf(fi) {
		return nil
	}
	return e
}

// hash reads the file (or the link's target) at abs, whose lstat is fi,
// and records its hashes under rel, the scan having begun at stamp. Content
// holding a secret or an encoding of one (package internal/secret) is
// hashed, and so committed, with it replaced by secret.Marker; the file on
// disk is left as it is.
//
// A file of more than streamAbove bytes is never read whole: it is
// hashed and scrubbed as a stream, returned with no data and an entry
// whose stream field says how to write its blob (.gitmodules excepted,
// which Commit parses). A file of more than max bytes gets only its
// SHA-256, for TreeHash, and its entry has no blob and is not stored
// (Commit refuses such a file before it calls hash). A file that grew past
// max since its lstat is an error naming it.
func (c *statCache) hash(abs, rel string, fi fs.FileInfo, stamp, max int64) (*fileEntry, []byte, error) {
	c.reads++
	var data []byte
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(abs)
		if err != nil {
			return nil, nil, err
		}
		data = []byte(target)
	} else if fi.Size() > max {
		return c.streamed(abs, rel, fi, stamp)
	} else if fi.Size() > streamAbove && !isGitmodules(path.Base(rel)) {
		e, err := c.hashStream(abs, rel, fi, stamp, max)
		return e, nil, err
	} else {
		b, err := readAtMost(abs, rel, max)
		if err != nil {
			return nil, nil, err
		}
		data = b
	}
	if secret.Contains(data) {
		data = secret.ScrubBytes(data)
		c.scrubbed = append(c.scrubbed, rel)
	}
	key := keyOf(fi)
	e := &fileEntry{
		key:  key,
		blob: plumbing.ComputeHash(plumbing.BlobObject, data),
		sum:  sha256.Sum256(data),
		racy: key.mtime >= stamp,
	}
	c.put(rel, e)
	return e, data, nil
}

// put records e under rel, keeping what the old entry knew of the store
// and of the last commit.
func (c *statCache) put(rel string, e *fileEntry) {
	if old := c.files[rel]; old != nil {
		e.committed = old.committed
		if old.blob == e.blob {
			e.stored = old.stored
		}
	}
	if c.files == nil {
		c.files = map[string]*fileEntry{}
	}
	c.files[rel] = e
}

// streamed is hash for a file over the cap: only its SHA-256, read as a
// stream.
func (c *statCache) streamed(abs, rel string, fi fs.FileInfo, stamp int64) (*fileEntry, []byte, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, nil, err
	}
	key := keyOf(fi)
	e := &fileEntry{key: key, racy: key.mtime >= stamp}
	h.Sum(e.sum[:0])
	c.put(rel, e)
	return e, nil, nil
}

// readAtMost reads the file at abs (rel in the workspace), failing when
// it holds more than max bytes (it grew since its size was checked).
func readAtMost(abs, rel string, max int64) ([]byte, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %q: the file grew past the cap of %s per file while it was read (limits.file_bytes in tasks.json); stop what writes it", ErrRefused, rel, sizeText(max))
	}
	return b, nil
}

// forget drops every entry not in keep, so the cache does not grow with
// files deleted long ago.
func (c *statCache) forget(keep map[string]bool) {
	for p := range c.files {
		if !keep[p] {
			delete(c.files, p)
		}
	}
}
