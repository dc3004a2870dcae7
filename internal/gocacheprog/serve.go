// Package gocacheprog is the layered Go build cache of statgraph's
// sandbox, served to the go command through its GOCACHEPROG protocol
// (cmd/go/internal/cacheprog): the task's private cache on top, the caches
// of the tasks it builds on and the user's own GOCACHE read-only
// underneath. A task reuses everything the user already compiled (the
// standard library above all, which a fresh cache takes half a minute to
// build), and what it compiles goes to its private cache only, so it can
// poison neither the user's cache nor another task's.
//
// The go command starts one cache program per go command, so the
// program's start-up is paid on every go vet and go test: statgraph's own
// binary takes a third of a second to start on a loaded machine (its
// package initialisation), this package's program a few milliseconds.
// This file is therefore the whole program: it imports only the standard
// library and [Source] hands it, with a main, to the go command to build
// (see verifier.BuildGoCacheProg).
package gocacheprog

import (
	"bufio"
	"bytes"
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
)

// request is a request of the GOCACHEPROG protocol.
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

// response is a response of the GOCACHEPROG protocol.
type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// Serve speaks the go command's GOCACHEPROG protocol on in and out until
// the go command sends "close" or closes in. A "get" looks in upper, then
// in each of lowers in turn; a "put" writes to upper only. All the
// directories use the go command's own on-disk layout (<aa>/<action id>-a
// entries, <oo>/<output id>-d outputs), so a lower can be any GOCACHE and
// upper is one too. lowers are never written; a missing one is treated as
// empty. They are taken not to change while Serve runs: each lower's
// action entries are listed once, one <aa> directory at a time when a get
// first needs it, so a miss in a lower costs no system call (an entry
// added to a lower meanwhile is a miss). Responses are written together
// when no request is waiting to be read.
//
// It returns an error when the protocol breaks or upper cannot be written;
// a failed "put" is also reported to the go command, which then builds
// without caching that entry. It serves one go command; run one per
// GOCACHEPROG process.
func Serve(in io.Reader, out io.Writer, upper string, lowers ...string) error {
	br := bufio.NewReaderSize(in, 64<<10)
	dec := json.NewDecoder(br)
	w := bufio.NewWriterSize(out, 64<<10)
	enc := json.NewEncoder(w)
	// waiting reports whether (part of) a request is already read ahead,
	// so that the response can wait in w for the next one: the go command
	// writes each request whole, so its rest is on its way.
	waiting := func() bool {
		rest, _ := io.ReadAll(dec.Buffered())
		ahead, _ := br.Peek(br.Buffered())
		return len(bytes.TrimSpace(rest)) > 0 || len(bytes.TrimSpace(ahead)) > 0
	}
	send := func(r response, flush bool) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		if !flush {
			return nil
		}
		return w.Flush()
	}
	if err := send(response{KnownCommands: []string{"get", "put", "close"}}, true); err != nil {
		return err
	}
	layers := make([]*layer, len(lowers))
	for i, dir := range lowers {
		layers[i] = &layer{dir: dir}
	}
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return w.Flush()
			}
			return fmt.Errorf("gocacheprog: reading a request: %w", err)
		}
		res := response{ID: req.ID}
		switch req.Command {
		case "get":
			res.Miss = true
			e, ok := lookup(upper, req.ActionID)
			for i := 0; !ok && i < len(layers); i++ {
				if layers[i].has(req.ActionID) {
					e, ok = lookup(layers[i].dir, req.ActionID)
				}
			}
			if ok {
				res.OutputID, res.Size, res.Time, res.DiskPath, res.Miss = e.out, e.size, &e.time, e.path, false
			}
		case "put":
			var body []byte
			if req.BodySize > 0 {
				if err := dec.Decode(&body); err != nil {
					return fmt.Errorf("gocacheprog: reading the body of put %d: %w", req.ID, err)
				}
			}
			path, err := put(upper, req, body)
			if err != nil {
				res.Err = err.Error()
			}
			res.DiskPath = path
		case "close":
			return send(res, true)
		default:
			res.Err = fmt.Sprintf("unknown command %q", req.Command)
		}
		if err := send(res, !waiting()); err != nil {
			return err
		}
	}
}

// layer is a read-only cache directory and the action ids it holds, listed
// one <aa> directory at a time. Only Serve's loop uses it.
type layer struct {
	dir    string
	listed [256]bool
	ids    map[[32]byte]bool
}

// has reports whether the layer may hold an action entry for id: false
// only when its <aa> directory was listed without it.
func (l *layer) has(id []byte) bool {
	if l.dir == "" || len(id) != 32 {
		return l.dir != ""
	}
	if !l.listed[id[0]] {
		l.listed[id[0]] = true
		if l.ids == nil {
			l.ids = map[[32]byte]bool{}
		}
		names, _ := readNames(filepath.Join(l.dir, hex.EncodeToString(id[:1])))
		for _, name := range names {
			var key [32]byte
			if h, ok := strings.CutSuffix(name, "-a"); ok && len(h) == 64 {
				if _, err := hex.Decode(key[:], []byte(h)); err == nil {
					l.ids[key] = true
				}
			}
		}
	}
	return l.ids[[32]byte(id)]
}

// readNames lists the names in dir ("" and an error when it is missing).
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// entry is an action entry found in a cache directory.
type entry struct {
	out  []byte
	size int64
	time time.Time
	path string // the output file
}

// file names the file of id with suffix key ("a" or "d") in dir, as the
// go command does.
func file(dir string, id []byte, key string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+key)
}

// lookup reads the action entry of id in dir: "v1 <id> <out> <size>
// <unixnano>\n" with size and time space-padded to 20 bytes. Anything
// missing, malformed or inconsistent is a miss.
func lookup(dir string, id []byte) (entry, bool) {
	if dir == "" || len(id) == 0 {
		return entry{}, false
	}
	b, err := os.ReadFile(file(dir, id, "a"))
	if err != nil {
		return entry{}, false
	}
	f := strings.Fields(string(b))
	if len(f) != 5 || f[0] != "v1" || f[1] != hex.EncodeToString(id) {
		return entry{}, false
	}
	out, err1 := hex.DecodeString(f[2])
	size, err2 := strconv.ParseInt(f[3], 10, 64)
	nano, err3 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(out) == 0 || size < 0 {
		return entry{}, false
	}
	path := file(dir, out, "d")
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() != size {
		return entry{}, false
	}
	return entry{out: out, size: size, time: time.Unix(0, nano), path: path}, true
}

// put stores body as the output of req.OutputID and the action entry of
// req.ActionID in dir, each written under a temporary name and renamed,
// and returns the output file's path.
func put(dir string, req request, body []byte) (string, error) {
	if len(req.ActionID) == 0 || len(req.OutputID) == 0 {
		return "", fmt.Errorf("put %d has no action or output id", req.ID)
	}
	if int64(len(body)) != req.BodySize {
		return "", fmt.Errorf("put %d: body has %d bytes, want %d", req.ID, len(body), req.BodySize)
	}
	path := file(dir, req.OutputID, "d")
	if err := writeRenamed(path, body); err != nil {
		return "", err
	}
	line := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, len(body), time.Now().UnixNano())
	return path, writeRenamed(file(dir, req.ActionID, "a"), []byte(line))
}

// writeRenamed writes data to path under a temporary name and renames it,
// so that a reader sees no half file, making its directory first. It is
// fsutil.WriteCache (no fsync: the cache is the task's and a lost entry a
// miss), written again here because this file must build on its own.
func writeRenamed(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
