// Package taskid holds the one rule for task ids that every part of
// statgraph applies: the tasks file's validation (tasks) and the git
// workspaces (agents/workspace), which use an id as a directory name and in
// the branch name statgraph/<plan>/<id>. It is a leaf that imports nothing
// of the module, so both sides use it without depending on each other.
package taskid

import (
	"fmt"
	"strings"
)

// MaxLen is the longest id accepted, in bytes.
const MaxLen = 100

// Rule says in words which ids Reason accepts, for error messages.
const Rule = `use letters, digits, '.', '-' and '_', starting with a letter or digit, at most 100 characters, without ".." and not ending in "." or ".lock" (e.g. "3" or "3.2")`

// Reason says why id cannot be used as a directory name and a git branch
// name component ("it is empty", `it contains ".."`), or returns "" when it
// can: an id must be 1 to MaxLen ASCII letters, digits, '.', '-' or '_',
// start with a letter or digit, not contain "..", and not end in "." or
// ".lock". Callers quote the id with %q in their message and add Rule.
// Reason is a pure function, safe for concurrent use.
func Reason(id string) string {
	switch {
	case id == "":
		return "it is empty"
	case len(id) > MaxLen:
		return fmt.Sprintf("it is %d characters long, more than %d", len(id), MaxLen)
	case !isAlnum(id[0]):
		return "it must start with a letter or a digit"
	case strings.Contains(id, ".."):
		return `it contains ".."`
	case strings.HasSuffix(id, ".") || strings.HasSuffix(id, ".lock"):
		return `it ends in "." or ".lock"`
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '.' && c != '-' && c != '_' {
			return fmt.Sprintf("character %q is not allowed", c)
		}
	}
	return ""
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
