package workspace

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/go-git/go-git/v5/utils/merkletrie"
	dmp "github.com/sergi/go-diff/diffmatchpatch"

	"github.com/statgraph/statgraph/internal/printable"
)

// patchText returns the unified diff of changes (git's format, three lines
// of context), reading blobs from st. It does what go-git's
// Changes.PatchContext does but shows every change: go-git refuses a
// whole patch when one name holds a control character. A name that needs
// it is quoted as git quotes it (core.quotePath: "a/ctl\001name").
func patchText(ctx context.Context, st storer.EncodedObjectStorer, changes object.Changes) (string, error) {
	var out strings.Builder
	for _, c := range changes {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		fp, quoted, err := filePatchOf(st, c)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		if err := fdiff.NewUnifiedEncoder(&buf, fdiff.DefaultContextLines).Encode(onePatch{fp}); err != nil {
			return "", err
		}
		text := buf.String()
		if p, ok := fp.(filePatch); ok && p.large != "" {
			text = notShown(text, p.large)
		}
		for _, q := range quoted {
			text = quoteHeader(text, q)
		}
		out.WriteString(text)
	}
	return out.String(), nil
}

// quoteHeader replaces a/<escaped> and b/<escaped> by git's quoted forms
// in the header lines of one file's diff (those before its first hunk).
func quoteHeader(text, name string) string {
	inner := printable.GitPath(name)
	inner = inner[1 : len(inner)-1]
	end := strings.Index(text, "\n@@ ")
	if end < 0 {
		end = len(text)
	}
	head := text[:end]
	for _, side := range []string{"a/", "b/"} {
		head = strings.ReplaceAll(head, side+inner, `"`+side+inner+`"`)
	}
	return head + text[end:]
}

// filePatchOf returns the file patch of c and the names in it that git
// would quote. Paths are given to the encoder with git's escapes but
// without the quotes, which quoteHeader adds around the prefixed name.
func filePatchOf(st storer.EncodedObjectStorer, c *object.Change) (fdiff.FilePatch, []string, error) {
	action, err := c.Action()
	if err != nil {
		return nil, nil, err
	}
	var p filePatch
	var quoted []string
	side := func(e object.ChangeEntry) (*patchFile, string, bool, error) {
		name := e.Name
		if q := printable.GitPath(name); q != name {
			quoted = append(quoted, name)
			name = q[1 : len(q)-1]
		}
		f := &patchFile{path: name, mode: e.TreeEntry.Mode, hash: e.TreeEntry.Hash}
		if !e.TreeEntry.Mode.IsFile() {
			return f, "", false, nil
		}
		blob, err := object.GetBlob(st, e.TreeEntry.Hash)
		if err != nil {
			return nil, "", false, err
		}
		if blob.Size > maxDiffBlob {
			p.large = fmt.Sprintf("%s: %d bytes, not shown", printable.GitPath(e.Name), blob.Size)
			return f, "", true, nil
		}
		content, binary, err := blobText(blob)
		return f, content, binary, err
	}
	var fromText, toText string
	var fromBin, toBin bool
	if action != merkletrie.Insert {
		if p.from, fromText, fromBin, err = side(c.From); err != nil {
			return nil, nil, err
		}
	}
	if action != merkletrie.Delete {
		if p.to, toText, toBin, err = side(c.To); err != nil {
			return nil, nil, err
		}
	}
	if p.from != nil && !p.from.mode.IsFile() || p.to != nil && !p.to.mode.IsFile() {
		// A submodule, as go-git's patch shows it: no file patch.
		return filePatch{}, nil, nil
	}
	if fromBin || toBin {
		p.binary = true
		return p, quoted, nil
	}
	for _, d := range diff.Do(fromText, toText) {
		op := fdiff.Equal
		switch d.Type {
		case dmp.DiffDelete:
			op = fdiff.Delete
		case dmp.DiffInsert:
			op = fdiff.Add
		}
		p.chunks = append(p.chunks, chunk{d.Text, op})
	}
	return p, quoted, nil
}

// maxDiffBlob is the largest blob a diff shows the lines of; a larger
// one shows as "<path>: N bytes, not shown", and is never read.
const maxDiffBlob = 1 << 20

// notShown replaces the "Binary files ... differ" line that ends text (one
// file's diff) by line, which says why the content is not shown.
func notShown(text, line string) string {
	i := strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")
	return text[:i+1] + line + "\n"
}

// blobText returns the content of a blob of at most maxDiffBlob bytes, or
// binary true for one git would show as binary (which is not read past
// its first 8,000 bytes).
func blobText(b *object.Blob) (string, bool, error) {
	f := object.NewFile("", filemode.Regular, b)
	if bin, err := f.IsBinary(); err != nil || bin {
		return "", bin, err
	}
	s, err := f.Contents()
	return s, false, err
}

// onePatch is a patch of one file, for the unified encoder.
type onePatch struct{ fp fdiff.FilePatch }

func (p onePatch) FilePatches() []fdiff.FilePatch { return []fdiff.FilePatch{p.fp} }
func (p onePatch) Message() string                { return "" }

type filePatch struct {
	from, to *patchFile
	chunks   []fdiff.Chunk
	binary   bool
	large    string // for a side over maxDiffBlob: the line shown instead
}

func (p filePatch) IsBinary() bool        { return p.binary }
func (p filePatch) Chunks() []fdiff.Chunk { return p.chunks }

// Files returns nil interfaces, not typed nils, for an absent side.
func (p filePatch) Files() (from, to fdiff.File) {
	if p.from != nil {
		from = p.from
	}
	if p.to != nil {
		to = p.to
	}
	return from, to
}

type patchFile struct {
	path string
	mode filemode.FileMode
	hash plumbing.Hash
}

func (f *patchFile) Hash() plumbing.Hash     { return f.hash }
func (f *patchFile) Mode() filemode.FileMode { return f.mode }
func (f *patchFile) Path() string            { return f.path }

type chunk struct {
	content string
	op      fdiff.Operation
}

func (c chunk) Content() string       { return c.content }
func (c chunk) Type() fdiff.Operation { return c.op }
