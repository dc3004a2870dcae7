package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignoreFile is a parsed .gitignore (or .git/info/exclude) with the stat it
// was read at, so it is parsed again only when it changes.
type ignoreFile struct {
	key      statKey
	racy     bool
	patterns []gitignore.Pattern
}

// ignoreCache holds the parsed ignore files by path relative to the working
// tree; its zero value is empty and ready to use. Guarded by Workspace.mu.
type ignoreCache struct {
	files map[string]*ignoreFile
}

// patterns returns the patterns of the ignore file at abs (rel in the
// cache), whose lstat is fi, for the directory domain, reading it only when
// its stat changed since the last scan. A nil fi means there is none.
func (c *ignoreCache) patterns(abs, rel string, fi fs.FileInfo, domain []string, stamp int64) ([]gitignore.Pattern, error) {
	if fi == nil || !fi.Mode().IsRegular() {
		delete(c.files, rel)
		return nil, nil
	}
	key := keyOf(fi)
	if f := c.files[rel]; f != nil && !f.racy && f.key == key {
		return f.patterns, nil
	}
	data, err := os.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		delete(c.files, rel)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f := &ignoreFile{key: key, racy: key.mtime >= stamp, patterns: parseIgnore(data, domain)}
	if c.files == nil {
		c.files = map[string]*ignoreFile{}
	}
	c.files[rel] = f
	return f.patterns, nil
}

// parseIgnore parses the lines of an ignore file as go-git's worktree does:
// blank lines and lines starting with '#' are skipped.
func parseIgnore(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}
