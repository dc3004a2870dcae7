package workspace

import (
	"cmp"
	"fmt"
	"io/fs"
	"strconv"
)

// The defaults of Options.MaxFileBytes, MaxCommitFiles and MaxCommitBytes.
// The last two equal the LLM executor's caps on what one attempt writes
// (limits.write_files and limits.write_bytes in tasks.json), so an agent
// CLI gets no more than a model does.
const (
	DefaultMaxFileBytes   = 100 << 20
	DefaultMaxCommitFiles = 2000
	DefaultMaxCommitBytes = 50 << 20
)

// commitLimits are a workspace's caps on what one commit records; see
// Options. Zero fields mean the defaults.
type commitLimits struct {
	fileBytes, bytes int64
	files            int
}

func limitsOf(o Options) commitLimits {
	return commitLimits{
		fileBytes: cmp.Or(o.MaxFileBytes, DefaultMaxFileBytes),
		bytes:     cmp.Or(o.MaxCommitBytes, DefaultMaxCommitBytes),
		files:     cmp.Or(o.MaxCommitFiles, DefaultMaxCommitFiles),
	}
}

// refuse returns the error for path p that a commit must not record.
func refuse(p, why, todo string) error {
	return fmt.Errorf("%w: %s: %s; %s", ErrRefused, strconv.Quote(p), why, todo)
}

// count adds the file p (content size bytes) to the files and bytes this
// scan records anew or changed, refusing it when that passes a cap.
func (s *gitScan) count(p string, size int64) error {
	l := s.w.limits
	s.newFiles++
	s.newBytes += size
	switch {
	case s.newFiles > l.files:
		return refuse(p, fmt.Sprintf("the attempt adds or changes more than %d files, the cap per attempt (limits.write_files in tasks.json)", l.files),
			"remove generated files or list them in .gitignore, or raise the cap")
	case s.newBytes > l.bytes:
		return refuse(p, fmt.Sprintf("the attempt's new or changed files pass %s, the cap per attempt (limits.write_bytes in tasks.json)", sizeText(l.bytes)),
			"remove large generated files or list them in .gitignore, or raise the cap")
	}
	return nil
}

// checkSize refuses the file p whose lstat is fi when it is over the cap
// per file, before anything reads it.
func (s *gitScan) checkSize(p string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() && fi.Size() > s.w.limits.fileBytes {
		return refuse(p, fmt.Sprintf("the file is %s, over the cap of %s per file (limits.file_bytes in tasks.json)", sizeText(fi.Size()), sizeText(s.w.limits.fileBytes)),
			"remove it or list it in .gitignore, or raise the cap")
	}
	return nil
}

// sizeText writes n bytes in the largest binary unit that keeps it at 1 or
// more, e.g. "2.0 GiB".
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
