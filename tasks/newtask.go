package tasks

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Caps on a task a client adds through a front door (the web API's POST
// /api/tasks, MCP's add_task; see CheckNew). A title is one line on the
// board; the longer texts (description, details, testStrategy) and every
// other string still fit a long specification.
const (
	MaxNewTaskBytes = 1 << 20   // the whole object as sent
	MaxTitleBytes   = 1 << 10   // "title"
	MaxTextBytes    = 256 << 10 // any other string in the object
)

// Errors of CheckNew, returned wrapped with what was wrong.
var (
	// ErrTooLarge: the new task, or one of its strings, is over its cap.
	ErrTooLarge = errors.New("the new task is too large; nothing was written")
	// ErrRefusedTask: the new task has a field statgraph does not know, or
	// names environment its client may not give.
	ErrRefusedTask = errors.New("the new task is refused; nothing was written")
)

// taskKeys are the fields a task object may hold: task-master's, the run's
// record statgraph writes, and the settings a defaults object may hold.
var taskKeys = append([]string{"id", "title", "description", "details", "testStrategy", "priority", "status",
	"status_reason", "dependencies", "subtasks", "retry_count", "error_history", "failed_at", "parked_until"}, settingKeys...)

// CheckNew checks a task object a client sends before AddTask adds it,
// refusing what a tasks file written by hand may hold but a client may
// not give:
//
//   - more than MaxNewTaskBytes in all, a title over MaxTitleBytes or any
//     other string over MaxTextBytes (an error wrapping ErrTooLarge);
//   - a field statgraph does not know, in the task or its subtasks (the
//     file keeps unknown fields, but a client's misspelt "test_cmd" would
//     be kept and silently do nothing);
//   - an executor "env" entry that EnvAllowed refuses under allowEnv, the
//     variables the server passes to agent CLIs (its --allow-env): a client
//     cannot give a task more of the server's environment than that.
//
// The last two wrap ErrRefusedTask; an object that is not JSON or not an
// object, ErrBadTask. Everything else (types, ids, dependencies) is
// AddTask's validation.
func CheckNew(obj []byte, allowEnv []string) error {
	if len(obj) > MaxNewTaskBytes {
		return fmt.Errorf("%w: %d bytes; a task may have at most %d (1 MiB)", ErrTooLarge, len(obj), MaxNewTaskBytes)
	}
	n, serr := parseTree(bytes.TrimSpace(obj))
	if serr != nil {
		return fmt.Errorf("%w: invalid JSON: %s at byte %d", ErrBadTask, serr.msg, serr.off)
	}
	if n.kind != kindObject {
		return fmt.Errorf("%w: it is %s %s; want one such as {\"title\": \"...\"}", ErrBadTask, article(n.kind), n.kind)
	}
	return checkNew(n, "task", allowEnv)
}

// checkNew is CheckNew on the task object n, named where in messages.
func checkNew(n *node, where string, allowEnv []string) error {
	for _, m := range n.members {
		if !slices.Contains(taskKeys, m.key) {
			return fmt.Errorf("%w: %s: unknown field %q (known: %s)", ErrRefusedTask, where, m.key, strings.Join(taskKeys, ", "))
		}
	}
	if t := n.get("title"); t != nil && t.kind == kindString && len(t.str) > MaxTitleBytes {
		return fmt.Errorf("%w: %s: \"title\" is %d bytes; at most %d: put the rest in \"description\" or \"details\"", ErrTooLarge, where, len(t.str), MaxTitleBytes)
	}
	if err := checkStrings(n, where); err != nil {
		return err
	}
	if e := n.get("executor"); e != nil && e.kind == kindObject {
		if env := e.get("env"); env != nil && env.kind == kindArray {
			for i, v := range env.elems {
				if v.kind == kindString && !EnvAllowed(v.str, allowEnv) {
					return fmt.Errorf("%w: %s: executor env[%d] %q names what this server does not pass to agent CLIs; %s", ErrRefusedTask, where, i, v.str, allowedEnv(allowEnv))
				}
			}
		}
	}
	if subs := n.get("subtasks"); subs != nil && subs.kind == kindArray {
		for i, s := range subs.elems {
			if s.kind == kindObject {
				if err := checkNew(s, fmt.Sprintf("%s: subtasks[%d]", where, i), allowEnv); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkStrings refuses a string over MaxTextBytes anywhere in n.
func checkStrings(n *node, where string) error {
	switch n.kind {
	case kindString:
		if len(n.str) > MaxTextBytes {
			return fmt.Errorf("%w: %s is %d bytes; a string in a task may have at most %d (256 KiB)", ErrTooLarge, where, len(n.str), MaxTextBytes)
		}
	case kindArray:
		for i, e := range n.elems {
			if err := checkStrings(e, fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	case kindObject:
		for _, m := range n.members {
			if err := checkStrings(m.val, fmt.Sprintf("%s: %q", where, m.key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// EnvAllowed reports whether an executor "env" entry stays within allow
// (names as --allow-env gives them: NAME, or PREFIX* for every variable
// starting with PREFIX, "*" for all). The entry NAME, and NAME=VALUE too,
// need NAME to be allowed: a value set by whoever wrote the task can turn
// an allowed secret against its owner (OPENAI_BASE_URL=https://elsewhere
// beside a preset's OPENAI_API_KEY). The entry PREFIX* needs an allowed
// prefix of PREFIX: "*" alone needs "*".
func EnvAllowed(entry string, allow []string) bool {
	name, _, _ := strings.Cut(entry, "=")
	prefix, all := strings.CutSuffix(name, "*")
	for _, a := range allow {
		ap, aall := strings.CutSuffix(a, "*")
		switch {
		case aall && strings.HasPrefix(prefix, ap):
			return true
		case !aall && !all && a == name:
			return true
		}
	}
	return false
}

// EnvOutside returns the entries of env that EnvAllowed refuses under
// allow, in env's order.
func EnvOutside(env, allow []string) []string {
	var out []string
	for _, e := range env {
		if !EnvAllowed(e, allow) {
			out = append(out, e)
		}
	}
	return out
}

// allowedEnv says what allow lets through, for messages.
func allowedEnv(allow []string) string {
	if len(allow) == 0 {
		return "it passes none beyond an agent preset's own (start it with --allow-env NAME,... to allow some)"
	}
	return "it passes only " + strings.Join(allow, ", ") + " (its --allow-env)"
}
