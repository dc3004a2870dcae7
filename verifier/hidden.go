package verifier

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// pathRE matches absolute paths in command output.
var pathRE = regexp.MustCompile(`/[A-Za-z0-9._+@%=~-]+(?:/[A-Za-z0-9._+@%=~-]+)*`)

// maxHiddenPaths bounds the paths HiddenNote names.
const maxHiddenPaths = 3

// HiddenNote returns a sentence for a person reading why a command in s
// failed, when texts (its program and its output) name a path that exists
// on this host but that s does not show the command: one under the host's
// /tmp (the sandbox has a private, empty /tmp) or under a directory of
// Hide, and not under a directory s binds (Workspace, CacheDir, Home,
// ReadOnly). It returns "" when none is named, or s is nil. Only the first
// 64 KiB of each text are looked at.
func (s *Sandbox) HiddenNote(texts ...string) string {
	if s == nil {
		return ""
	}
	var tmp, state []string
	seen := map[string]bool{}
	for _, text := range texts {
		if len(text) > 64<<10 {
			text = text[:64<<10]
		}
		for _, p := range pathRE.FindAllString(text, -1) {
			p = strings.TrimRight(filepath.Clean(p), ".")
			if seen[p] || len(tmp)+len(state) >= maxHiddenPaths {
				continue
			}
			seen[p] = true
			switch why := s.hides(p); {
			case why == "":
			case why == "/tmp":
				tmp = append(tmp, p)
			default:
				state = append(state, p)
			}
		}
	}
	var notes []string
	if len(tmp) > 0 {
		notes = append(notes, fmt.Sprintf("the sandbox gives the command a private, empty /tmp, so %s on this machine's /tmp is not visible to it: "+
			"move it out of /tmp (or run with --no-sandbox)", strings.Join(tmp, ", ")))
	}
	if len(state) > 0 {
		notes = append(notes, fmt.Sprintf("%s is in statgraph's state directory, which the sandbox hides", strings.Join(state, ", ")))
	}
	return strings.Join(notes, "; ")
}

// hides returns "/tmp" or the Hide directory that keeps the existing host
// path p from the command, or "" when the command sees p (or p does not
// exist here).
func (s *Sandbox) hides(p string) string {
	if _, err := os.Lstat(p); err != nil {
		return ""
	}
	shown := []string{s.Workspace, s.CacheDir, s.Home}
	shown = append(shown, s.ReadOnly...)
	for _, d := range shown {
		if d != "" && within(p, d) {
			return ""
		}
	}
	if within(p, "/tmp") {
		return "/tmp"
	}
	for _, d := range s.Hide {
		if within(p, d) {
			return d
		}
	}
	return ""
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), p)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}
