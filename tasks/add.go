package tasks

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadTask is returned (wrapped) by AddTask when the new task is not a
// JSON object.
var ErrBadTask = errors.New("the new task is not a JSON object")

// AddTask appends one task, given as the JSON object a task has in the
// file (task-master's fields and statgraph's own), to the tasks list of
// the file at path and tag ("" means DefaultTag), and returns its id and
// the file as written. An object without "id" gets the next free integer
// id (one more than the largest integer id of a top-level task).
//
// The new file is validated exactly as Load validates one: when the object
// is not a JSON object, or the file with it has any problem (a duplicate
// id, a dependency on no task, a bad field, or a problem that a file may
// hold only as a blocked task, such as duplicate subtask ids), AddTask
// returns the error (a *ValidationError for validation problems) and
// writes nothing. Otherwise
// it writes the file atomically (as Save does), keeping every other byte's
// meaning, members' order and the file's indentation.
//
// allowEnv names the variables the caller may hand an agent (a server's
// --allow-env; nil for none): every executor the new task ends up with,
// the one it takes from the file's "defaults" and its candidates' included,
// may name only what EnvAllowed lets through, or AddTask returns an error
// wrapping ErrRefusedTask and writes nothing.
//
// The caller holds the file's Lock, so that no run writes it meanwhile;
// AddTask itself is not safe for concurrent use on one path.
func AddTask(path, tag string, task []byte, allowEnv []string) (string, *File, error) {
	f, err := Load(path, tag)
	if err != nil {
		return "", nil, err
	}
	obj, serr := parseTree(bytes.TrimSpace(task))
	if serr != nil {
		return "", nil, fmt.Errorf("%w: invalid JSON: %s at byte %d", ErrBadTask, serr.msg, serr.off)
	}
	if obj.kind != kindObject {
		return "", nil, fmt.Errorf("%w: it is %s %s; want one such as {\"title\": \"...\"}", ErrBadTask, article(obj.kind), obj.kind)
	}
	if obj.get("id") == nil {
		obj.members = append([]member{{key: "id", keyRaw: marshalString("id"), keyOff: -1, val: intNode(nextID(f))}}, obj.members...)
	}
	list := f.root.get("tasks")
	if f.Tagged {
		list = f.root.get(f.Tag).get("tasks")
	}
	list.elems = append(list.elems, obj)
	var buf bytes.Buffer
	if f.bom {
		buf.Write(utf8BOM)
	}
	render(&buf, f.root, f.indent, 0)
	if f.eol {
		buf.WriteByte('\n')
	}
	nf, err := Parse(path, buf.Bytes(), tag)
	if err != nil {
		return "", nil, err
	}
	id := nf.Tasks[len(nf.Tasks)-1].ID
	if held := nf.holds[id]; held != "" && f.holds[id] == "" {
		// A file may hold a task its problems block; a new one may not.
		return "", nil, &ValidationError{Problems: ownWarnings(nf.Warnings, id)}
	}
	if err := envWithin(nf, id, allowEnv); err != nil {
		return "", nil, err
	}
	wrote, err := writeAtomicIf(path, buf.Bytes(), f.unchangedOnDisk)
	if err != nil {
		return "", nil, fmt.Errorf("tasks: add a task to %s: %w", path, err)
	}
	if !wrote {
		return "", nil, fmt.Errorf("tasks: add a task to %s: the file changed while the task was added; nothing was written, add it again", path)
	}
	return id, nf, nil
}

// envWithin refuses task id of f, or one of its subtasks, whose executors
// (its own, the defaults' it inherits, its candidates') pass a variable
// allowEnv does not allow.
func envWithin(f *File, id string, allowEnv []string) error {
	for _, u := range f.Units() {
		if u.ID != id && u.Parent != id {
			continue
		}
		envs := [][]string{u.Task.Executor.Env}
		for _, c := range u.Task.CandidateSettings {
			if c.Executor != nil {
				envs = append(envs, c.Executor.Env)
			}
		}
		for _, env := range envs {
			if bad := EnvOutside(env, allowEnv); len(bad) > 0 {
				return fmt.Errorf("%w: task %s would pass %q to its agent through its executor (its own, or the one it takes from the file's \"defaults\"), "+
					"which this server does not pass to agent CLIs; %s; or give the task an executor of its own without it",
					ErrRefusedTask, u.ID, bad[0], allowedEnv(allowEnv))
			}
		}
	}
	return nil
}

// ownWarnings returns the warnings about task id or its subtasks.
func ownWarnings(ws []Problem, id string) []Problem {
	var out []Problem
	for _, w := range ws {
		if w.TaskID == id || strings.HasPrefix(w.TaskID, id+".") {
			out = append(out, w)
		}
	}
	return out
}

// nextID is one more than the largest integer id of f's top-level tasks.
func nextID(f *File) int {
	max := 0
	for _, t := range f.Tasks {
		if n, err := strconv.Atoi(t.ID); err == nil && n > max {
			max = n
		}
	}
	return max + 1
}
