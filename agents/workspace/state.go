package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// StateRoot returns the directory that holds statgraph's state outside
// every repository (run stores, workspaces, prompt files): $STATGRAPH_HOME
// if set, else $XDG_STATE_HOME/statgraph, else ~/.local/state/statgraph.
// The state lives in the state directory, not the cache directory, because
// a workspace holds the uncommitted work of an interrupted task, which a
// cache cleaner must not take. The path is absolute; StateRoot creates
// nothing. It fails only when none of the variables is set and the home
// directory is unknown.
func StateRoot() (string, error) {
	if d := os.Getenv("STATGRAPH_HOME"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "statgraph"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("workspace: where to keep statgraph's state: %w; set STATGRAPH_HOME to a directory", err)
	}
	return filepath.Join(home, ".local", "state", "statgraph"), nil
}

// BinDir returns the directory where statgraph builds the small programs
// its sandbox starts for every command and every go command in it
// (verifier.SandboxInitProgram, verifier.GoCacheProgram): StateRoot's
// bin, so that statgraph writes nothing outside its state root. Like
// StateRoot it creates nothing and fails only when StateRoot does.
func BinDir() (string, error) {
	root, err := StateRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin"), nil
}

// KeyedName returns a short name for a directory or a branch that is
// readable and unique for key: a slug of label (letters, digits, '-' and
// '_', starting with a letter or digit, at most 24 characters; "plan" if
// nothing is left) and the first
// hexLen hex digits of the SHA-256 of the key's parts, e.g.
// KeyedName("tasks", 6, "tasks.json", "master") == "tasks-1c9e0b".
func KeyedName(label string, hexLen int, key ...string) string {
	h := sha256.Sum256([]byte(strings.Join(key, "\x00")))
	return slug(label) + "-" + hex.EncodeToString(h[:])[:hexLen]
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 24 {
			break
		}
	}
	out := strings.TrimRight(strings.TrimLeft(b.String(), "-_"), "-")
	if out == "" {
		return "plan"
	}
	return out
}

// RefuseSymlink returns an error wrapping ErrSymlink if path is a symbolic
// link, nil if it is anything else or does not exist. State directories
// are refused when they are links because whoever made the link (a
// repository that commits one, another user of a shared directory) decides
// where statgraph writes.
func RefuseSymlink(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("workspace: %w", err)
	case fi.Mode()&fs.ModeSymlink == 0:
		return nil
	}
	target, _ := os.Readlink(path)
	return fmt.Errorf("%w: %s points to %s; statgraph does not write through a link someone else may have pointed elsewhere: remove the link (statgraph makes a real directory in its place) or set STATGRAPH_HOME to another directory",
		ErrSymlink, path, target)
}

// MkdirNoLink makes dir (its parent must exist) unless it exists, refusing
// a dir that is a symbolic link with ErrSymlink.
func MkdirNoLink(dir string) error {
	if err := RefuseSymlink(dir); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("workspace: %w", err)
	}
	return nil
}
