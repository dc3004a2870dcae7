package llm

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// defaultRepoViewEntries is RepoView's cap when maxEntries is 0 or less.
const defaultRepoViewEntries = 300

// RepoView returns a compact tree of the files under root for a prompt: one
// line per directory ("name/") or file ("name  size"), indented two spaces
// per level, in lexical order. .git directories are skipped. After
// maxEntries lines (0 or less: 300) the listing stops with a line saying so.
// Unreadable subdirectories are listed but not entered. It fails only if
// root cannot be read.
func RepoView(root string, maxEntries int) (string, error) {
	if maxEntries <= 0 {
		maxEntries = defaultRepoViewEntries
	}
	info, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("repository view: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("repository view: %s is not a directory", root)
	}
	var b strings.Builder
	entries := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, walkErr error) error {
		if walkErr != nil {
			if path == root {
				return walkErr
			}
			return nil // a directory that cannot be read: listed on the first call, not entered
		}
		if path == root {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if entries == maxEntries {
			fmt.Fprintf(&b, "… (listing stopped at %d entries)\n", maxEntries)
			return fs.SkipAll
		}
		entries++
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		b.WriteString(strings.Repeat("  ", strings.Count(filepath.ToSlash(rel), "/")))
		switch {
		case d.IsDir():
			b.WriteString(d.Name() + "/\n")
		case d.Type()&fs.ModeSymlink != 0:
			b.WriteString(d.Name() + "  (symlink)\n")
		default:
			size := "?"
			if fi, err := d.Info(); err == nil {
				size = formatSize(fi.Size())
			}
			b.WriteString(d.Name() + "  " + size + "\n")
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("repository view of %s: %w", root, err)
	}
	if entries == 0 {
		return "(empty repository)\n", nil
	}
	return b.String(), nil
}

// formatSize renders n bytes as "812 B", "4.1 KiB" or "2.3 MiB".
func formatSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
