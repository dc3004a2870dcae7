package workspace

// gitpath.go holds git's own rules for names it refuses to check out or
// fsck refuses to receive (git's read-cache.c verify_path, path.c
// is_ntfs_dotgit, utf8.c is_hfs_dotgit, fsck.c's .gitmodules checks), so
// that Commit never records a tree that breaks the user's checkout of the
// task branch or a push of it.

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/config"
)

// nameProblem returns why git would refuse a path component called name
// (of a tree entry with mode mode), or "" when it would not. Control
// characters, which git accepts, are left to the caller.
func nameProblem(name string, mode filemode.FileMode) string {
	// NTFS also splits names at backslashes, and git checks every part.
	for part := range strings.SplitSeq(name, `\`) {
		switch {
		case part == "." || part == "..":
			return fmt.Sprintf("%q is a relative path component", part)
		case isNTFSDot(part, "git", ""):
			return "git reads it as .git on Windows (NTFS ignores trailing dots and spaces and knows the short name GIT~1)"
		case isHFSDot(part, "git"):
			return "git reads it as .git on macOS (HFS+ ignores the invisible characters in it)"
		}
	}
	if mode == filemode.Symlink && isGitmodules(name) {
		return "a .gitmodules that is a symbolic link, which git refuses"
	}
	return ""
}

// hasControl reports whether s holds a control character (C0 or DEL),
// which git's fsck accepts but which make a name unsafe to show.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// isGitmodules reports whether git reads a file called name as .gitmodules
// on any file system it protects (case-insensitive, NTFS and HFS+ aliases).
func isGitmodules(name string) bool {
	return isNTFSDot(name, "gitmodules", "gi7eba") || isHFSDot(name, "gitmodules")
}

// isNTFSDot reports whether NTFS resolves name to "."+dotgit: the same
// letters in any case followed only by spaces and dots (or an alternate
// data stream after ':'), its short name (the first six letters, '~' and
// a digit 1-4), or, for a shortPrefix, the hashed short name
// shortPrefix~N. It follows git's is_ntfs_dot_generic.
func isNTFSDot(name, dotgit, shortPrefix string) bool {
	trailing := func(start int) bool {
		for i := start; i < len(name); i++ {
			switch name[i] {
			case ':':
				return true
			case ' ', '.':
			default:
				return false
			}
		}
		return true
	}
	if len(name) > len(dotgit) && name[0] == '.' && strings.EqualFold(name[1:1+len(dotgit)], dotgit) && trailing(1+len(dotgit)) {
		return true
	}
	short := dotgit
	if len(short) > 6 {
		short = short[:6]
	}
	if dotgit == "git" && len(name) >= 5 && strings.EqualFold(name[:5], "git~1") && trailing(5) {
		return true
	}
	if len(dotgit) >= 6 && len(name) >= 8 && strings.EqualFold(name[:6], short) && name[6] == '~' && name[7] >= '1' && name[7] <= '4' && trailing(8) {
		return true
	}
	if shortPrefix == "" || len(name) < 8 {
		return false
	}
	// The fall-back short name: up to six letters of shortPrefix, '~',
	// then digits, eight characters in all.
	tilde := false
	for i := 0; i < 8; i++ {
		c := name[i]
		switch {
		case tilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			if i+1 >= len(name) || name[i+1] < '1' || name[i+1] > '9' {
				return false
			}
			tilde = true
			i++
		case i >= 6 || c >= 0x80 || lower(c) != shortPrefix[i]:
			return false
		}
	}
	return trailing(8)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// isHFSDot reports whether HFS+ resolves name to "."+dotgit: the same
// letters in any case with any of the code points HFS+ ignores anywhere
// in it. It follows git's is_hfs_dot_generic.
func isHFSDot(name, dotgit string) bool {
	var kept []rune
	for _, r := range name {
		if !hfsIgnored(r) {
			kept = append(kept, r)
		}
	}
	if len(kept) != len(dotgit)+1 || kept[0] != '.' {
		return false
	}
	for i, r := range kept[1:] {
		if r >= utf8.RuneSelf || rune(lower(byte(r))) != rune(dotgit[i]) {
			return false
		}
	}
	return true
}

// hfsIgnored reports whether HFS+ drops r when it compares names (git's
// utf8.c next_hfs_char).
func hfsIgnored(r rune) bool {
	switch r {
	case 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
		0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, 0xfeff:
		return true
	}
	return false
}

// gitmodulesProblem returns why git's fsck refuses a .gitmodules with
// content data, or "": a submodule whose url or path starts with '-' (git
// would pass it to a command as an option, e.g. --upload-pack=...), whose
// name has a ".." component, or whose update is a "!command". Content git
// cannot read as config is refused too, since its submodules cannot be
// checked.
func gitmodulesProblem(data []byte) string {
	cfg := config.New()
	if err := config.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return fmt.Sprintf("a .gitmodules that cannot be read as git config (%v)", err)
	}
	for _, sub := range cfg.Section("submodule").Subsections {
		for part := range strings.FieldsFuncSeq(sub.Name, func(r rune) bool { return r == '/' || r == '\\' }) {
			if part == ".." {
				return fmt.Sprintf("submodule %q has a \"..\" in its name", sub.Name)
			}
		}
		for _, o := range sub.Options {
			v := strings.TrimSpace(o.Value)
			switch {
			case (strings.EqualFold(o.Key, "url") || strings.EqualFold(o.Key, "path")) && strings.HasPrefix(v, "-"):
				return fmt.Sprintf("submodule %q has %s %q, which git would take for a command-line option", sub.Name, strings.ToLower(o.Key), v)
			case strings.EqualFold(o.Key, "update") && strings.HasPrefix(v, "!"):
				return fmt.Sprintf("submodule %q has update %q, a command git would run", sub.Name, v)
			}
		}
	}
	return ""
}
