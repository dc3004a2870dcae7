package verifier

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// This file is the layered Go build cache of a sandbox: the user's own
// GOCACHE read-only underneath, the task's private cache on top, served to
// the go command through its GOCACHEPROG protocol (cmd/go/internal/cacheprog).
// A task reuses everything the user already compiled (the standard library
// above all, which a fresh cache takes half a minute to build), and what it
// compiles goes to its private cache only, so it can poison neither the
// user's cache nor another task's.

// goCacheRequest is a request of the GOCACHEPROG protocol.
type goCacheRequest struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

// goCacheResponse is a response of the GOCACHEPROG protocol.
type goCacheResponse struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// ServeGoCache speaks the go command's GOCACHEPROG protocol on in and out
// until the go command sends "close" or closes in. A "get" looks in upper,
// then in each of lowers in turn; a "put" writes to upper only. All the
// directories use the go command's own on-disk layout (<aa>/<action id>-a
// entries, <oo>/<output id>-d outputs), so a lower can be any GOCACHE and
// upper is one too. lowers are never written; a missing one is treated as
// empty. It returns an error
// when the protocol breaks or upper cannot be written; a failed "put" is
// also reported to the go command, which then builds without caching that
// entry. It serves one go command; run one per GOCACHEPROG process.
func ServeGoCache(in io.Reader, out io.Writer, upper string, lowers ...string) error {
	dec := json.NewDecoder(bufio.NewReader(in))
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(r goCacheResponse) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(goCacheResponse{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	for {
		var req goCacheRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("gocacheprog: reading a request: %w", err)
		}
		res := goCacheResponse{ID: req.ID}
		switch req.Command {
		case "get":
			res.Miss = true
			for _, dir := range append([]string{upper}, lowers...) {
				if e, ok := cacheLookup(dir, req.ActionID); ok {
					res.OutputID, res.Size, res.Time, res.DiskPath, res.Miss = e.out, e.size, &e.time, e.path, false
					break
				}
			}
		case "put":
			var body []byte
			if req.BodySize > 0 {
				if err := dec.Decode(&body); err != nil {
					return fmt.Errorf("gocacheprog: reading the body of put %d: %w", req.ID, err)
				}
			}
			path, err := cachePut(upper, req, body)
			if err != nil {
				res.Err = err.Error()
			}
			res.DiskPath = path
		case "close":
			return send(res)
		default:
			res.Err = fmt.Sprintf("unknown command %q", req.Command)
		}
		if err := send(res); err != nil {
			return err
		}
	}
}

// cacheEntry is an action entry found in a cache directory.
type cacheEntry struct {
	out  []byte
	size int64
	time time.Time
	path string // the output file
}

// cacheFile names the file of id with suffix key ("a" or "d") in dir, as the
// go command does.
func cacheFile(dir string, id []byte, key string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+key)
}

// cacheLookup reads the action entry of id in dir: "v1 <id> <out> <size>
// <unixnano>\n" with size and time space-padded to 20 bytes. Anything
// missing, malformed or inconsistent is a miss.
func cacheLookup(dir string, id []byte) (cacheEntry, bool) {
	if dir == "" || len(id) == 0 {
		return cacheEntry{}, false
	}
	b, err := os.ReadFile(cacheFile(dir, id, "a"))
	if err != nil {
		return cacheEntry{}, false
	}
	f := strings.Fields(string(b))
	if len(f) != 5 || f[0] != "v1" || f[1] != hex.EncodeToString(id) {
		return cacheEntry{}, false
	}
	out, err1 := hex.DecodeString(f[2])
	size, err2 := strconv.ParseInt(f[3], 10, 64)
	nano, err3 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(out) == 0 || size < 0 {
		return cacheEntry{}, false
	}
	path := cacheFile(dir, out, "d")
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() != size {
		return cacheEntry{}, false
	}
	return cacheEntry{out: out, size: size, time: time.Unix(0, nano), path: path}, true
}

// cachePut stores body as the output of req.OutputID and the action entry
// of req.ActionID in dir, each written under a temporary name and renamed,
// and returns the output file's path.
func cachePut(dir string, req goCacheRequest, body []byte) (string, error) {
	if len(req.ActionID) == 0 || len(req.OutputID) == 0 {
		return "", fmt.Errorf("put %d has no action or output id", req.ID)
	}
	if int64(len(body)) != req.BodySize {
		return "", fmt.Errorf("put %d: body has %d bytes, want %d", req.ID, len(body), req.BodySize)
	}
	path := cacheFile(dir, req.OutputID, "d")
	if err := writeRenamed(path, body); err != nil {
		return "", err
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, len(body), time.Now().UnixNano())
	return path, writeRenamed(cacheFile(dir, req.ActionID, "a"), []byte(entry))
}

// writeRenamed writes data to path (fsutil.WriteCache: a reader sees no
// half file; no fsync, the cache is the task's and a lost entry a miss),
// making its directory first.
func writeRenamed(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsutil.WriteCache(path, data, 0o600)
}

// userGoCache returns the user's go build cache directory, or "" when
// there is none: $GOCACHE, else <user cache dir>/go-build, as the go
// command chooses it.
func userGoCache() string {
	dir := os.Getenv("GOCACHE")
	if dir == "off" {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "go-build")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}
