package tasks

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/statgraph/statgraph/internal/copypath"
	"github.com/statgraph/statgraph/internal/taskid"
)

// decode.go turns task objects into Tasks, checking each known field's type
// and value. Unknown fields are not looked at: they stay in the tree and are
// written back as they were. null counts as absent for every optional field.

// defaultsOnlyKeys are the fields of the defaults object that are the
// run's, not a task's.
var defaultsOnlyKeys = []string{"notify"}

// settingKeys are the statgraph fields a defaults object may hold; a task
// may hold them too, but for "prices".
var settingKeys = []string{"max_retries", "test_cmd", "lint_cmd", "checks", "review", "workdir", "executor", "model", "on_exhausted", "budget_tokens", "budget_usd", "timeout", "request_timeout", "limits", "sandbox", "setup_cmd", "copy_files", "approve_plan", "land", "attempts", "candidates", "judge", "prices"}

// taskList decodes an array of task objects; parent is nil for top-level
// tasks. inherited holds the settings a task takes when it leaves them out.
func (d *decoder) taskList(list *node, parent *Task, inherited Defaults) []Task {
	out := make([]Task, 0, len(list.elems))
	for i, el := range list.elems {
		where := fmt.Sprintf("tasks[%d]", i)
		if parent != nil {
			where = fmt.Sprintf("subtasks[%d]", i)
		}
		if el.kind != kindObject {
			owner := ""
			if parent != nil {
				owner = parent.ID
			}
			d.add(el.off, owner, "%s is %s %s; want a task object", where, article(el.kind), el.kind)
			continue
		}
		out = append(out, d.task(el, parent, where, inherited))
	}
	return out
}

// task decodes one task object.
func (d *decoder) task(obj *node, parent *Task, where string, inherited Defaults) Task {
	t := Task{obj: obj, Pos: d.lines.pos(obj.off)}
	if parent != nil {
		t.Parent = parent.ID
	}
	switch id := obj.get("id"); {
	case id == nil || id.kind == kindNull:
		d.add(obj.off, t.Parent, `%s has no "id"; give it a number or a string`, where)
	case id.kind == kindNumber:
		t.LocalID = string(id.raw)
	case id.kind == kindString && strings.TrimSpace(id.str) != "":
		t.LocalID = id.str
	default:
		d.add(id.off, t.Parent, `%s: "id" is %s; want a number or a non-empty string`, where, describe(id))
	}
	t.ID = t.LocalID
	if parent != nil && t.LocalID != "" && !strings.HasPrefix(t.LocalID, parent.ID+".") {
		t.ID = parent.ID + "." + t.LocalID
	}
	if why := taskid.Reason(t.ID); t.ID != "" && why != "" {
		d.add(obj.get("id").off, "", "task id %q cannot be used: %s; %s", t.ID, why, taskid.Rule)
	}
	d.uniqueKeys(obj, t.ID)
	label := where + " has"
	if t.ID != "" {
		label = "has"
	}

	if title := obj.get("title"); title == nil || title.kind == kindNull || title.kind == kindString && strings.TrimSpace(title.str) == "" {
		d.add(obj.off, t.ID, `%s no "title"; give it a short description of the work`, label)
	} else {
		t.Title = d.str(obj, "title", t.ID)
	}
	t.Description = d.str(obj, "description", t.ID)
	t.Details = d.str(obj, "details", t.ID)
	t.TestStrategy = d.str(obj, "testStrategy", t.ID)
	t.Priority = d.str(obj, "priority", t.ID)
	t.Status = d.str(obj, "status", t.ID)
	if !ValidStatus(t.Status) {
		d.warn(obj.get("status").off, t.ID, "unknown status %q: the task will not run (known: %s)", t.Status, strings.Join(statuses, ", "))
	}
	t.StatusReason = d.str(obj, "status_reason", t.ID)
	t.Dependencies, _ = d.strList(obj, "dependencies", t.ID, true)

	own := d.settings(obj, t.ID, false)
	t.applySettings(own.merge(inherited))

	if n := d.count(obj, "retry_count", t.ID); n != nil {
		t.RetryCount = *n
	}
	t.ErrorHistory, _ = d.strList(obj, "error_history", t.ID, false)
	t.FailedAt = d.time(obj, "failed_at", t.ID)

	t.ParkedUntil = d.time(obj, "parked_until", t.ID)

	if subs := obj.get("subtasks"); subs != nil && subs.kind != kindNull {
		switch {
		case subs.kind != kindArray:
			d.add(subs.off, t.ID, `"subtasks" is %s; want an array of task objects`, describe(subs))
		case parent != nil:
			d.add(subs.off, t.ID, "subtask %s has subtasks of its own; only one level of subtasks is supported", t.ID)
		case t.ID != "":
			t.Subtasks = d.taskList(subs, &t, t.settings())
		}
	}
	return t
}

// settings decodes the statgraph settings present in obj. strict reports
// unknown keys, for the defaults object that holds nothing else.
func (d *decoder) settings(obj *node, id string, strict bool) Defaults {
	var s Defaults
	if strict {
		d.uniqueKeys(obj, id)
	}
	s.MaxRetries = d.count(obj, "max_retries", id)
	s.BudgetTokens = d.count(obj, "budget_tokens", id)
	s.BudgetUSD = d.amount(obj, "budget_usd", id, "")
	s.TestCmd = d.command(obj, "test_cmd", id)
	s.LintCmd = d.command(obj, "lint_cmd", id)
	s.SetupCmd = d.command(obj, "setup_cmd", id)
	s.CopyFiles = d.copyFiles(obj, id)
	s.Checks = d.checks(obj, id)
	s.Review = d.boolean(obj, "review", id)
	s.ApprovePlan = d.boolean(obj, "approve_plan", id)
	s.Sandbox = d.sandbox(obj, id)
	s.Timeout = d.duration(obj, "timeout", id)
	s.RequestTimeout = d.duration(obj, "request_timeout", id)
	s.Limits = d.limits(obj, id)
	s.Workdir = d.str(obj, "workdir", id)
	if s.Workdir != "" && !filepath.IsLocal(filepath.FromSlash(s.Workdir)) {
		d.add(obj.get("workdir").off, id, `"workdir" %q leaves the repository; give a relative path inside it, such as "server" or "cmd/tool"`, s.Workdir)
	}
	s.Model = d.str(obj, "model", id)
	s.Executor = d.executor(obj, id)
	s.OnExhausted = d.str(obj, "on_exhausted", id)
	s.Attempts = d.attempts(obj, id)
	s.Candidates = d.candidates(obj, id)
	s.Judge = d.judge(obj, id)
	if s.OnExhausted != "" && s.OnExhausted != OnExhaustedFail && s.OnExhausted != OnExhaustedAsk {
		d.add(obj.get("on_exhausted").off, id, `unknown on_exhausted %q (want "fail" or "ask")`, s.OnExhausted)
	}
	s.Land = d.str(obj, "land", id)
	if s.Land != "" && s.Land != LandSerial {
		d.add(obj.get("land").off, id, `unknown land %q (want "serial", or leave it out)`, s.Land)
	}
	if strict {
		s.Prices = d.prices(obj)
		for _, m := range obj.members {
			if !contains(settingKeys, m.key) && !contains(defaultsOnlyKeys, m.key) {
				d.add(m.keyOff, id, "unknown field %q in defaults (known: %s)", m.key, strings.Join(slices.Concat(settingKeys, defaultsOnlyKeys), ", "))
			}
		}
	}
	return s
}

// defaults decodes a defaults object on top of base.
func (d *decoder) defaults(obj *node, base Defaults) Defaults {
	if obj.kind != kindObject {
		d.add(obj.off, "", `"defaults" is %s; want an object of statgraph settings (%s)`, describe(obj), strings.Join(settingKeys, ", "))
		return base
	}
	s := d.settings(obj, "", true)
	s.Notify = d.str(obj, "notify", "")
	if u, err := url.Parse(s.Notify); s.Notify != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		d.add(obj.get("notify").off, "", `"notify" %q is not an http:// or https:// URL; give the URL run's summaries are POSTed to, e.g. a Slack webhook`, s.Notify)
		s.Notify = ""
	}
	return s.merge(base)
}

// merge returns s with every unset field taken from base.
func (s Defaults) merge(base Defaults) Defaults {
	if s.MaxRetries == nil {
		s.MaxRetries = base.MaxRetries
	}
	if s.BudgetTokens == nil {
		s.BudgetTokens = base.BudgetTokens
	}
	if s.BudgetUSD == nil {
		s.BudgetUSD = base.BudgetUSD
	}
	if s.Prices == nil {
		s.Prices = base.Prices
	} else if base.Prices != nil {
		merged := make(map[string]Price, len(base.Prices)+len(s.Prices))
		for k, v := range base.Prices {
			merged[k] = v
		}
		for k, v := range s.Prices {
			merged[k] = v
		}
		s.Prices = merged
	}
	if s.TestCmd.IsZero() {
		s.TestCmd = base.TestCmd
	}
	if s.LintCmd.IsZero() {
		s.LintCmd = base.LintCmd
	}
	if s.SetupCmd.IsZero() {
		s.SetupCmd = base.SetupCmd
	}
	if s.CopyFiles == nil {
		s.CopyFiles = base.CopyFiles
	}
	if len(s.Checks) == 0 {
		s.Checks = base.Checks
	}
	if s.Review == nil {
		s.Review = base.Review
	}
	if s.ApprovePlan == nil {
		s.ApprovePlan = base.ApprovePlan
	}
	s.Sandbox = s.Sandbox.merge(base.Sandbox)
	if s.Workdir == "" {
		s.Workdir = base.Workdir
	}
	if s.Model == "" {
		s.Model = base.Model
	}
	if s.Executor.IsLLM() {
		s.Executor = base.Executor
	}
	if s.OnExhausted == "" {
		s.OnExhausted = base.OnExhausted
	}
	if s.Land == "" {
		s.Land = base.Land
	}
	if s.Timeout == 0 {
		s.Timeout = base.Timeout
	}
	if s.RequestTimeout == 0 {
		s.RequestTimeout = base.RequestTimeout
	}
	s.Limits = s.Limits.merge(base.Limits)
	if s.Attempts == nil {
		s.Attempts = base.Attempts
	}
	if s.Candidates == nil {
		s.Candidates = base.Candidates
	}
	if s.Judge == nil {
		s.Judge = base.Judge
	}
	if s.Notify == "" {
		s.Notify = base.Notify
	}
	return s
}

func (t *Task) applySettings(s Defaults) {
	t.MaxRetries, t.BudgetTokens, t.BudgetUSD = s.MaxRetries, s.BudgetTokens, s.BudgetUSD
	t.TestCmd, t.LintCmd, t.Checks, t.Review, t.Sandbox = s.TestCmd, s.LintCmd, s.Checks, s.Review, s.Sandbox
	t.SetupCmd, t.CopyFiles, t.ApprovePlan = s.SetupCmd, s.CopyFiles, s.ApprovePlan
	t.Workdir, t.Model, t.Executor, t.OnExhausted = s.Workdir, s.Model, s.Executor, s.OnExhausted
	t.Timeout, t.RequestTimeout, t.Limits, t.Land = s.Timeout, s.RequestTimeout, s.Limits, s.Land
	t.Attempts, t.CandidateSettings, t.Judge = s.Attempts, s.Candidates, s.Judge
}

// settings returns the task's effective settings, for its subtasks to inherit.
func (t *Task) settings() Defaults {
	return Defaults{
		MaxRetries: t.MaxRetries, BudgetTokens: t.BudgetTokens, BudgetUSD: t.BudgetUSD,
		TestCmd: t.TestCmd, LintCmd: t.LintCmd, Checks: t.Checks, Review: t.Review, Sandbox: t.Sandbox,
		SetupCmd: t.SetupCmd, CopyFiles: t.CopyFiles, ApprovePlan: t.ApprovePlan,
		Workdir: t.Workdir, Model: t.Model, Executor: t.Executor, OnExhausted: t.OnExhausted,
		Timeout: t.Timeout, RequestTimeout: t.RequestTimeout, Limits: t.Limits, Land: t.Land,
		Attempts: t.Attempts, Candidates: t.CandidateSettings, Judge: t.Judge,
	}
}

// str returns the string field key, or "" when absent, null or mistyped.
func (d *decoder) str(obj *node, key, id string) string {
	v := obj.get(key)
	if v == nil || v.kind == kindNull {
		return ""
	}
	if v.kind != kindString {
		d.add(v.off, id, "%q is %s; want a string", key, describe(v))
		return ""
	}
	return v.str
}

// count returns the non-negative whole number in field key, or nil.
func (d *decoder) count(obj *node, key, id string) *int {
	v := obj.get(key)
	if v == nil || v.kind == kindNull {
		return nil
	}
	if v.kind != kindNumber {
		d.add(v.off, id, "%q is %s; want a whole number", key, describe(v))
		return nil
	}
	n, err := strconv.Atoi(string(v.raw))
	switch {
	case err != nil:
		d.add(v.off, id, "%q is %s; want a whole number", key, v.raw)
		return nil
	case n < 0:
		d.add(v.off, id, "%q is %d; want 0 or more", key, n)
		return nil
	}
	return &n
}

// strList returns the array field key as strings. ids accepts numbers too
// (as written), for dependency lists.
func (d *decoder) strList(obj *node, key, id string, ids bool) ([]string, bool) {
	v := obj.get(key)
	if v == nil || v.kind == kindNull {
		return nil, false
	}
	want, elemWant := "strings", "a string"
	if ids {
		want, elemWant = "task ids (numbers or strings)", "a task id (a number or a string)"
	}
	if v.kind != kindArray {
		d.add(v.off, id, "%q is %s; want an array of %s", key, describe(v), want)
		return nil, false
	}
	out := make([]string, 0, len(v.elems))
	for i, e := range v.elems {
		switch {
		case e.kind == kindString:
			out = append(out, e.str)
		case ids && e.kind == kindNumber:
			out = append(out, string(e.raw))
		default:
			d.add(e.off, id, "%s[%d] is %s; want %s", key, i, describe(e), elemWant)
		}
	}
	return out, true
}

// command decodes a command field: a string is Shell, an array Argv.
func (d *decoder) command(obj *node, key, id string) Command {
	v := obj.get(key)
	if v == nil || v.kind == kindNull {
		return Command{}
	}
	switch v.kind {
	case kindString:
		if strings.TrimSpace(v.str) == "" {
			d.add(v.off, id, "%q is empty; give a command or leave the field out", key)
		}
		return Command{Shell: v.str}
	case kindArray:
		argv, _ := d.strList(obj, key, id, false)
		if len(argv) == 0 || argv[0] == "" {
			d.add(v.off, id, "%q has no program; want [\"program\", \"arg\", ...]", key)
		}
		return Command{Argv: argv}
	default:
		d.add(v.off, id, "%q is %s; want a string (run with sh -c) or an array of strings (run directly)", key, describe(v))
		return Command{}
	}
}

// copyFiles decodes copy_files: paths relative to the repository, outside
// .git. An empty array is kept (not nil), so a task can clear its
// defaults' list.
func (d *decoder) copyFiles(obj *node, id string) []string {
	list, ok := d.strList(obj, "copy_files", id, false)
	if !ok {
		return nil
	}
	for i, e := range obj.get("copy_files").elems {
		if e.kind != kindString {
			continue // reported by strList
		}
		if err := copypath.Check(e.str); err != nil {
			d.add(e.off, id, "copy_files[%d] %v", i, err)
		}
	}
	return list
}

// uniqueKeys reports members that repeat an earlier key: readers disagree
// on which one counts (statgraph takes the first, JavaScript the last).
func (d *decoder) uniqueKeys(obj *node, id string) {
	report := func(dup, first member) {
		p := d.lines.pos(first.keyOff)
		d.add(dup.keyOff, id, "field %s appears twice (first at %d:%d); keep one", dup.keyRaw, p.Line, p.Col)
	}
	ms := obj.members
	if len(ms) <= 16 { // small objects, the usual case: no map needed
		for i := 1; i < len(ms); i++ {
			for j := range i {
				if ms[i].key == ms[j].key {
					report(ms[i], ms[j])
					break
				}
			}
		}
		return
	}
	seen := make(map[string]int, len(ms)) // key -> index of its first occurrence
	for i, m := range ms {
		if j, dup := seen[m.key]; dup {
			report(m, ms[j])
		} else {
			seen[m.key] = i
		}
	}
}

// describe names a value's type, with the value itself for short scalars.
func describe(n *node) string {
	if n.kind == kindNull {
		return "null"
	}
	if n.raw != nil && len(n.raw) <= 40 {
		return fmt.Sprintf("%s %s", article(n.kind), n.kind) + " (" + string(n.raw) + ")"
	}
	return article(n.kind) + " " + n.kind.String()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// checkKeys are the members of a check object.
var checkKeys = []string{"name", "cmd", "kind", "mode", "timeout"}

// checks decodes the checks field: an array of check objects.
func (d *decoder) checks(obj *node, id string) []Check {
	v := obj.get("checks")
	if v == nil || v.kind == kindNull {
		return nil
	}
	const want = `want an array of {"name": ..., "cmd": ..., "kind": "test|lint|other", "mode": "blocking|advisory|informational", "timeout": "10m"}`
	if v.kind != kindArray {
		d.add(v.off, id, `"checks" is %s; %s`, describe(v), want)
		return nil
	}
	var out []Check
	names := map[string]bool{}
	for i, c := range v.elems {
		if c.kind != kindObject {
			d.add(c.off, id, "checks[%d] is %s; %s", i, describe(c), want)
			continue
		}
		d.uniqueKeys(c, id)
		for _, m := range c.members {
			if !contains(checkKeys, m.key) {
				d.add(m.keyOff, id, "checks[%d]: unknown field %q (known: %s)", i, m.key, strings.Join(checkKeys, ", "))
			}
		}
		ck := Check{Name: d.str(c, "name", id), Command: d.command(c, "cmd", id),
			Kind: d.str(c, "kind", id), Mode: d.str(c, "mode", id)}
		ck.Command.Timeout = 10 * time.Minute
		switch {
		case ck.Name == "":
			d.add(c.off, id, `checks[%d] has no "name"; give it a short name such as "race"`, i)
		case names[ck.Name]:
			d.add(c.off, id, "checks[%d]: a check named %q comes earlier; names must be unique", i, ck.Name)
		}
		names[ck.Name] = true
		if ck.Command.IsZero() && c.get("cmd") == nil {
			d.add(c.off, id, `checks[%d] has no "cmd"; give a string (sh -c) or an array (run directly)`, i)
		}
		if ck.Kind != "" && !contains(CheckKinds, ck.Kind) {
			d.add(c.get("kind").off, id, `checks[%d]: unknown kind %q (want "test", "lint" or "other")`, i, ck.Kind)
		}
		if ck.Mode != "" && !contains(CheckModes, ck.Mode) {
			d.add(c.get("mode").off, id, `checks[%d]: unknown mode %q (want "blocking", "advisory" or "informational")`, i, ck.Mode)
		}
		if t := d.str(c, "timeout", id); t != "" {
			dur, err := time.ParseDuration(t)
			if err != nil || dur <= 0 {
				d.add(c.get("timeout").off, id, `checks[%d]: timeout %q is not a positive duration such as "90s" or "10m"`, i, t)
			} else {
				ck.Command.Timeout = dur
			}
		}
		out = append(out, ck)
	}
	return out
}

// boolean returns the boolean field key, or nil when absent or null.
func (d *decoder) boolean(obj *node, key, id string) *bool {
	v := obj.get(key)
	if v == nil || v.kind == kindNull {
		return nil
	}
	if v.kind != kindBool {
		d.add(v.off, id, "%q is %s; want true or false", key, describe(v))
		return nil
	}
	b := string(v.raw) == "true"
	return &b
}

// time reads the RFC 3339 time key of obj, or nil when it is absent or
// null; a value of another type or form is a problem reported for task id.
func (d *decoder) time(obj *node, key, id string) *time.Time {
	at := obj.get(key)
	if at == nil || at.kind == kindNull {
		return nil
	}
	if at.kind != kindString {
		d.add(at.off, id, `%q is %s; want an RFC 3339 time such as "2025-01-02T15:04:05Z"`, key, describe(at))
		return nil
	}
	ts, err := time.Parse(time.RFC3339Nano, at.str)
	if err != nil {
		d.add(at.off, id, `%q %q is not an RFC 3339 time such as "2025-01-02T15:04:05Z"`, key, at.str)
		return nil
	}
	return &ts
}
