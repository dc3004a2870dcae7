package workspace

import (
	"bytes"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/memory"
)

// BenchmarkPackWriters encodes the objects of this module's last commit
// (what its parent lacks: the objects one task's commit adds) as a pack
// and its index, with the hand-written encodePack and with go-git's
// encoder (the pack) and parser (the index), each as a sub-benchmark.
//
//	go test -run XXX -bench PackWriters -count 5 ./agents/workspace
func BenchmarkPackWriters(b *testing.B) {
	src := benchSource(b)
	repo, err := git.PlainOpenWithOptions(src, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		b.Fatal(err)
	}
	var objs []plumbing.EncodedObject
	for _, line := range strings.Split(gitRun(b, src, "rev-list", "--objects", "HEAD", "--not", "HEAD~1"), "\n") {
		h, _, _ := strings.Cut(line, " ")
		o, err := repo.Storer.EncodedObject(plumbing.AnyObject, plumbing.NewHash(h))
		if err != nil {
			b.Fatal(err)
		}
		objs = append(objs, o)
	}
	for _, w := range []struct {
		name string
		pack func([]plumbing.EncodedObject) ([]byte, []byte, string, error)
	}{{"encodePack", bufferPack}, {"gogit", goGitPack}} {
		b.Run(w.name, func(b *testing.B) {
			start := cpuTime()
			for b.Loop() {
				if _, _, _, err := w.pack(objs); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
			b.ReportMetric(float64(len(objs)), "objects")
		})
	}
}

// bufferPack returns objs as a pack (encodePack) in memory, its index
// and their base name.
func bufferPack(objs []plumbing.EncodedObject) (pack, index []byte, name string, err error) {
	var buf bytes.Buffer
	hashes, get := fromObjects(objs)
	sum, index, err := encodePack(&buf, hashes, get)
	return buf.Bytes(), index, "pack-" + sum.String(), err
}

// goGitPack returns objs, without deltas, as a pack (go-git's encoder) and
// its index (go-git's parser reading the pack back), and their base name
// ("pack-<sum>").
func goGitPack(objs []plumbing.EncodedObject) (pack, index []byte, name string, err error) {
	mem := memory.NewStorage()
	hashes := make([]plumbing.Hash, len(objs))
	for i, o := range objs {
		if hashes[i], err = mem.SetEncodedObject(o); err != nil {
			return nil, nil, "", err
		}
	}
	var buf bytes.Buffer
	sum, err := packfile.NewEncoder(&buf, mem, false).Encode(hashes, 0)
	if err != nil {
		return nil, nil, "", err
	}
	idx := new(idxfile.Writer)
	p, err := packfile.NewParser(packfile.NewScanner(bytes.NewReader(buf.Bytes())), idx)
	if err != nil {
		return nil, nil, "", err
	}
	if _, err := p.Parse(); err != nil {
		return nil, nil, "", err
	}
	if index, err = encodeIndex(idx); err != nil {
		return nil, nil, "", err
	}
	return buf.Bytes(), index, "pack-" + sum.String(), nil
}
