package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// reflog.go writes the reflog entry of a publish, as git does for a ref
// update: one line appended to logs/<ref> in the common git directory,
//
//	<old> <new> <name> <<email>> <unix seconds> <+hhmm>\t<message>\n
//
// with one write while the ref's lock is held, fsynced, before the lock is
// renamed over the ref (git writes the log first, so a ref is never ahead
// of its log). A kill before the rename leaves a line whose new value the
// ref does not have, as git's own kill does; git reads such a log.

// wantsReflog reports whether the source keeps reflogs of branches:
// core.logAllRefUpdates in its configuration, true by default except in a
// bare repository (git's rule; the user's global configuration is not
// read).
func wantsReflog(src *git.Repository) bool {
	cfg, err := src.Config()
	if err != nil {
		return true
	}
	if cfg.Raw.Section("core").HasOption("logAllRefUpdates") {
		v := strings.ToLower(cfg.Raw.Section("core").Option("logAllRefUpdates"))
		return v == "true" || v == "always" || v == "yes" || v == "on" || v == "1"
	}
	return !cfg.Core.IsBare
}

// appendReflog appends the entry of the move of ref from old (zero: it did
// not exist) to tip to its reflog in the common git directory common.
func appendReflog(common string, ref plumbing.ReferenceName, old, tip plumbing.Hash, name, email, msg string, now time.Time) error {
	path := filepath.Join(common, "logs", filepath.FromSlash(ref.String()))
	dir := filepath.Dir(path)
	_, statErr := os.Stat(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%s %s %s <%s> %d %s\t%s\n", old, tip, oneLine(name), oneLine(email), now.Unix(), now.Format("-0700"), oneLine(msg))
	_, err = f.WriteString(line)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	if statErr != nil { // a new log file: make its name durable too
		return fsutil.SyncDir(dir)
	}
	return nil
}

// oneLine replaces the characters that would break a reflog line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\n', '\r', '\t', '<', '>':
			return ' '
		}
		return r
	}, s)
}
