package tasks

import "strings"

// bestof.go decodes a task's best-of-N settings: "attempts", "candidates"
// and "judge" (see Task.Attempts).

// MaxAttempts bounds a task's "attempts": each candidate is a workspace,
// a sandbox and an agent running at once.
const MaxAttempts = 16

// Candidate is one entry of a task's "candidates": who makes that
// candidate, where it differs from the task. In JSON:
//
//	"candidates": [{"executor": "codex"}, {"model": "qwen3-coder"}, {}]
type Candidate struct {
	// Executor replaces the task's executor; nil keeps the task's.
	Executor *Executor
	// Model replaces the task's model; "" keeps the task's.
	Model string
}

// Judge is a task's "judge": whether a model compares passing candidates
// that tie on warnings, and which. In JSON true (the task's model) or a
// model's name.
type Judge struct {
	On    bool
	Model string // "" means the task's model
}

// candidateKeys are the fields of a candidate object.
var candidateKeys = []string{"executor", "model"}

// candidates decodes the "candidates" field.
func (d *decoder) candidates(obj *node, id string) []Candidate {
	v := obj.get("candidates")
	if v == nil || v.kind == kindNull {
		return nil
	}
	if v.kind != kindArray {
		d.add(v.off, id, `"candidates" is %s; want an array of objects such as [{"executor": "codex"}, {"model": "NAME"}]`, describe(v))
		return nil
	}
	if len(v.elems) > MaxAttempts {
		d.add(v.off, id, `"candidates" has %d entries; at most %d candidates run for one task`, len(v.elems), MaxAttempts)
		return nil
	}
	out := make([]Candidate, 0, len(v.elems))
	for i, el := range v.elems {
		if el.kind != kindObject {
			d.add(el.off, id, `candidates[%d] is %s; want an object with "executor" and/or "model"`, i, describe(el))
			continue
		}
		d.uniqueKeys(el, id)
		for _, m := range el.members {
			if !contains(candidateKeys, m.key) {
				d.add(m.keyOff, id, "unknown field %q in candidates[%d] (known: %s)", m.key, i, strings.Join(candidateKeys, ", "))
			}
		}
		var c Candidate
		if e := el.get("executor"); e != nil && e.kind != kindNull {
			ex := d.executor(el, id)
			c.Executor = &ex
		}
		c.Model = d.str(el, "model", id)
		out = append(out, c)
	}
	return out
}

// attempts decodes the "attempts" field: a whole number from 1 to
// MaxAttempts.
func (d *decoder) attempts(obj *node, id string) *int {
	n := d.count(obj, "attempts", id)
	if n != nil && (*n < 1 || *n > MaxAttempts) {
		d.add(obj.get("attempts").off, id, `"attempts" is %d; want 1 to %d (1 runs the task once, as without it)`, *n, MaxAttempts)
		return nil
	}
	return n
}

// judge decodes the "judge" field: true, false or a model's name.
func (d *decoder) judge(obj *node, id string) *Judge {
	v := obj.get("judge")
	switch {
	case v == nil || v.kind == kindNull:
		return nil
	case v.kind == kindBool:
		return &Judge{On: string(v.raw) == "true"}
	case v.kind == kindString && strings.TrimSpace(v.str) != "":
		return &Judge{On: true, Model: v.str}
	}
	d.add(v.off, id, `"judge" is %s; want true (the task's model judges), false, or a model's name`, describe(v))
	return nil
}

// Candidates returns how many candidates the task runs: its "attempts",
// else the number of its "candidates", else 1 (the task runs once, as
// without best-of-N).
func (t *Task) Candidates() int {
	switch {
	case t.Attempts != nil:
		return *t.Attempts
	case len(t.CandidateSettings) > 0:
		return len(t.CandidateSettings)
	}
	return 1
}

// Candidate returns the task as candidate k (1-based) runs it: with the
// executor and model of the k-th entry of its "candidates" where that
// entry sets them, else the task's own.
func (t Task) Candidate(k int) Task {
	if k < 1 || k > len(t.CandidateSettings) {
		return t
	}
	c := t.CandidateSettings[k-1]
	if c.Executor != nil {
		t.Executor = *c.Executor
	}
	if c.Model != "" {
		t.Model = c.Model
	}
	return t
}
