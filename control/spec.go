package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/internal/fsutil"
	"github.com/statgraph/statgraph/tasks"
)

// spec.go holds the plan operations that ask the model about the task
// list itself, as task-master's parse-prd, expand and analyze-complexity
// do: WritePlan (statgraph plan), Expand and Complexity. The model's
// answer is checked as a tasks file is (tasks.AddTag, tasks.AddSubtasks)
// and as a front door's task is (tasks.CheckNew), and written under the
// plan's lock; a bad answer writes nothing.

// MaxSpecBytes caps the requirements document WritePlan sends.
const MaxSpecBytes = 1 << 20

// PlanOptions say what WritePlan writes.
type PlanOptions struct {
	// Spec is the path of the requirements document (Markdown or text);
	// with Text set, only its name in messages ("" means "(the text
	// sent)").
	Spec string
	// Text, when not "", is the requirements document itself (as the web
	// API and MCP send it), read instead of the file Spec.
	Text string
	// File is the tasks file to write; "" means "tasks.json". A missing
	// file is created; an existing one gets a new tag.
	File string
	// Tag is the new tag; "" means tasks.DefaultTag.
	Tag string
	// Tasks asks for about this many tasks; 0 lets the model choose. At
	// most llm.MaxSpecTasks.
	Tasks int
	// Model is the model to ask (the planner's: --model, STATGRAPH_MODEL,
	// OPENAI_BASE_URL, OPENAI_API_KEY).
	Model llm.Config
}

// PlanResult says what WritePlan wrote.
type PlanResult struct {
	File, Tag string
	Created   bool     // the file is new
	IDs       []string // the new tasks' ids, in order
	Tokens    int      // the model's tokens, all calls
}

// errNoModel says how to configure the model the spec operations need.
var errNoModel = errors.New("no model is configured: pass --model NAME or set STATGRAPH_MODEL " +
	"(with OPENAI_BASE_URL for a local server such as Ollama, and OPENAI_API_KEY if it needs one)")

// specClient makes the client of a spec operation.
func specClient(mc llm.Config) (*llm.Client, error) {
	if strings.TrimSpace(mc.Model) == "" {
		return nil, kinded(KindInvalid, errNoModel)
	}
	return llm.New(mc)
}

// WritePlan asks the model for a task list implementing the requirements
// document o.Spec and writes it as the tag o.Tag of o.File: a new file
// in task-master's tagged form, or a new tag at the end of an existing
// file (tasks.AddTag: the file's other bytes unchanged, an existing tag
// refused). The list is checked as a tasks file and each task as a front
// door's (size caps); on any problem (a model that does not answer with
// a usable list, an unknown dependency, a cycle, too many tasks or too
// large a text) the error says what and nothing is written. The model is
// asked before the plan's lock is taken, the file written under it
// (ErrRunning while a run holds it).
func WritePlan(ctx context.Context, o PlanOptions) (PlanResult, error) {
	if o.File == "" {
		o.File = "tasks.json"
	}
	if o.Tag == "" {
		o.Tag = tasks.DefaultTag
	}
	if o.Tasks < 0 || o.Tasks > llm.MaxSpecTasks {
		return PlanResult{}, kinded(KindInvalid, fmt.Errorf("--tasks %d: want 1 to %d, or 0 to let the model choose", o.Tasks, llm.MaxSpecTasks))
	}
	spec, err := o.document()
	if err != nil {
		return PlanResult{}, kinded(KindInvalid, err)
	}
	if err := tasks.CanAddTag(o.File, o.Tag); err != nil {
		return PlanResult{}, kinded(KindRefused, err) // said before the model is paid
	}
	client, err := specClient(o.Model)
	if err != nil {
		return PlanResult{}, err
	}
	list, usage, err := client.SpecTasks(ctx, spec, o.Tasks, nil)
	res := PlanResult{File: o.File, Tag: o.Tag, Tokens: usage.Total}
	if err != nil {
		return res, fmt.Errorf("plan %s: %w; nothing was written", o.Spec, err)
	}
	drafts, err := checkDrafts(list, "")
	if err != nil {
		return res, fmt.Errorf("plan %s: the model's task list is refused: %w; nothing was written", o.Spec, err)
	}
	lock, err := lockPlan(o.File)
	if err != nil {
		return res, err
	}
	defer lock.Unlock()
	_, statErr := os.Stat(o.File)
	desc := fmt.Sprintf("Tasks written by statgraph plan from %s", filepath.Base(o.Spec))
	f, err := tasks.AddTag(o.File, o.Tag, desc, drafts, time.Now())
	if err != nil {
		return res, refusedDraft("plan "+o.Spec, "task list", err)
	}
	res.Created = errors.Is(statErr, os.ErrNotExist)
	for _, t := range f.Tasks {
		res.IDs = append(res.IDs, t.ID)
	}
	return res, nil
}

// refusedDraft words an error of tasks.AddTag or AddSubtasks: problems of
// the model's list (with positions in a file that was never written, so
// by task id only) or why the file was not written.
func refusedDraft(op, what string, err error) error {
	var verr *tasks.ValidationError
	if !errors.As(err, &verr) {
		return fmt.Errorf("%s: %w; nothing was written", op, err)
	}
	lines := make([]string, len(verr.Problems))
	for i, p := range verr.Problems {
		lines[i] = "  task " + p.TaskID + ": " + p.Message
		if p.TaskID == "" {
			lines[i] = "  " + p.Message
		}
	}
	return fmt.Errorf("%s: the model's %s is refused, nothing was written:\n%s", op, what, strings.Join(lines, "\n"))
}

// document returns the requirements document: Text, else the file Spec.
func (o *PlanOptions) document() (string, error) {
	if o.Text == "" {
		return readSpec(o.Spec)
	}
	if o.Spec == "" {
		o.Spec = "(the text sent)"
	}
	return checkSpec(o.Spec, []byte(o.Text))
}

// PlanSpec writes a new tag of the Control's tasks file from the
// requirements document text, as WritePlan does with the Control's model
// (Options.Run.Model); tag "" means tasks.DefaultTag. It fails with
// ErrRunning while a run holds the plan, and, with nothing written, for
// a tag the file has, a document that is empty or over MaxSpecBytes, or
// a reply of the model that is not a valid task list.
func (c *Control) PlanSpec(ctx context.Context, text, tag string, n int) (PlanResult, error) {
	if strings.TrimSpace(text) == "" {
		return PlanResult{}, kinded(KindInvalid, errors.New("the requirements document is empty; send its text"))
	}
	res, err := WritePlan(ctx, PlanOptions{Text: text, File: c.o.File, Tag: tag, Tasks: n, Model: c.o.Run.Model})
	if err == nil {
		c.hub.resyncAll()
	}
	return res, err
}

// ReportPath is where Complexity's report of the Control's plan goes by
// default, as statgraph complexity writes it (ComplexityReportPath).
func (c *Control) ReportPath() string { return ComplexityReportPath(c.o.File, c.o.Tag) }

// readSpec reads the requirements document at path, within MaxSpecBytes.
func readSpec(path string) (string, error) {
	if path == "" {
		return "", errors.New("give the requirements document, e.g. statgraph plan PRD.md")
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("requirements document: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return "", fmt.Errorf("requirements document: %w", err)
	}
	return checkSpec(path, data)
}

// checkSpec checks the requirements document data, named path.
func checkSpec(path string, data []byte) (string, error) {
	n := len(data)
	switch {
	case n > MaxSpecBytes:
		return "", fmt.Errorf("requirements document %s is over %d bytes (1 MiB); give the model a shorter one", path, MaxSpecBytes)
	case strings.TrimSpace(string(data[:n])) == "":
		return "", fmt.Errorf("requirements document %s is empty", path)
	}
	return string(data[:n]), nil
}

// checkDrafts turns the model's tasks into drafts, each checked as a
// task a front door adds (tasks.CheckNew); parent is the task whose
// subtasks they are, or "".
func checkDrafts(list []llm.SpecTask, parent string) ([]tasks.Draft, error) {
	drafts := make([]tasks.Draft, len(list))
	for i, t := range list {
		d := tasks.Draft{ID: t.ID, Title: t.Title, Description: t.Description, Priority: t.Priority,
			Details: t.Details, TestStrategy: t.TestStrategy, Dependencies: t.Dependencies}
		obj, err := json.Marshal(map[string]any{"id": d.ID, "title": d.Title, "description": d.Description,
			"details": d.Details, "testStrategy": d.TestStrategy, "dependencies": d.Dependencies})
		if err == nil {
			err = tasks.CheckNew(obj, nil)
		}
		if err != nil {
			id := strconv.Itoa(t.ID)
			if parent != "" {
				id = parent + "." + id
			}
			return nil, fmt.Errorf("task %s: %v", id, err) // the model's fault, not the caller's
		}
		drafts[i] = d
	}
	return drafts, nil
}

// Expand asks the model to break the pending task id into about n
// subtasks (0: the model chooses) and appends them to the task in the
// tasks file (tasks.AddSubtasks), under the plan's lock with the results
// journal settled first, as every write is; it returns the new subtasks'
// ids. The model is asked before the lock is taken. On any problem
// (unknown or not pending task, a model that does not answer with a
// usable list, a dependency on no subtask, a cycle) nothing is written
// and the error says what.
func (c *Control) Expand(ctx context.Context, id string, n int) ([]string, int, error) {
	if n < 0 || n > llm.MaxSpecSubtasks {
		return nil, 0, kinded(KindInvalid, fmt.Errorf("--num %d: want 1 to %d, or 0 to let the model choose", n, llm.MaxSpecSubtasks))
	}
	f, err := tasks.Load(c.o.File, c.o.Tag)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", c.o.File, err)
	}
	if err := f.CanExpand(id); err != nil {
		return nil, 0, kinded(KindConflict, err)
	}
	t, _ := f.Task(id)
	client, err := specClient(c.o.Run.Model)
	if err != nil {
		return nil, 0, err
	}
	var siblings []string
	for _, s := range t.Subtasks {
		siblings = append(siblings, s.Title)
	}
	first := tasks.NextSubtaskID(t)
	info := llm.TaskInfo{ID: t.ID, Title: t.Title, Description: t.Description, Details: t.Details, TestStrategy: t.TestStrategy}
	list, usage, err := client.Subtasks(ctx, info, n, first, siblings, nil)
	if err != nil {
		return nil, usage.Total, fmt.Errorf("expand %s: %w; nothing was written", id, err)
	}
	drafts, err := checkDrafts(list, id)
	if err != nil {
		return nil, usage.Total, fmt.Errorf("expand %s: the model's subtasks are refused: %w; nothing was written", id, err)
	}
	lock, err := lockPlan(c.o.File)
	if err != nil {
		return nil, usage.Total, err
	}
	defer lock.Unlock()
	settled, err := tasks.Load(c.o.File, c.o.Tag)
	if err != nil {
		return nil, usage.Total, fmt.Errorf("%s: %w", c.o.File, err)
	}
	if err := tasks.SettleJournal(settled, c.plan.Journal()); err != nil {
		return nil, usage.Total, err
	}
	if now, _ := settled.Task(id); now.Status != t.Status || tasks.NextSubtaskID(now) != first {
		return nil, usage.Total, fmt.Errorf("expand %s: the task changed while the model was asked (status %q, or new subtasks); nothing was written, run expand again", id, now.Status)
	}
	nf, err := tasks.AddSubtasks(c.o.File, c.o.Tag, id, drafts)
	if err != nil {
		return nil, usage.Total, refusedDraft("expand "+id, "subtasks", err)
	}
	c.hub.resyncAll()
	added, _ := nf.Task(id)
	var ids []string
	for _, s := range added.Subtasks[len(t.Subtasks):] {
		ids = append(ids, s.ID)
	}
	return ids, usage.Total, nil
}

// ComplexityReport is task-master's complexity report
// (.taskmaster/reports/task-complexity-report.json): its meta and one
// analysis per task.
type ComplexityReport struct {
	Meta struct {
		GeneratedAt    string `json:"generatedAt"`
		TasksAnalyzed  int    `json:"tasksAnalyzed"`
		TotalTasks     int    `json:"totalTasks"`
		AnalysisCount  int    `json:"analysisCount"`
		ThresholdScore int    `json:"thresholdScore"`
		ProjectName    string `json:"projectName"`
		UsedResearch   bool   `json:"usedResearch"`
	} `json:"meta"`
	Analysis []ComplexityEntry `json:"complexityAnalysis"`
}

// ComplexityEntry is one task's analysis; TaskID is a JSON number when
// the id is an integer, as task-master writes it, else a string.
type ComplexityEntry struct {
	TaskID              json.RawMessage `json:"taskId"`
	TaskTitle           string          `json:"taskTitle"`
	ComplexityScore     int             `json:"complexityScore"`
	RecommendedSubtasks int             `json:"recommendedSubtasks"`
	ExpansionPrompt     string          `json:"expansionPrompt"`
	Reasoning           string          `json:"reasoning"`
}

// ComplexityThreshold is the score from which task-master recommends
// expanding a task (its default --threshold), recorded in the report.
const ComplexityThreshold = 5

// Complexity asks the model to score each pending top-level task of the
// plan 1 to 10, with a recommended number of subtasks and its reasoning,
// and writes the report to report ("" writes nothing) atomically. It
// reads the tasks file only.
func (c *Control) Complexity(ctx context.Context, report string) (ComplexityReport, int, error) {
	var r ComplexityReport
	f, err := tasks.Load(c.o.File, c.o.Tag)
	if err != nil {
		return r, 0, fmt.Errorf("%s: %w", c.o.File, err)
	}
	var infos []llm.TaskInfo
	for _, t := range f.Tasks {
		if tasks.Runnable(t.Status) && t.ID != "" {
			infos = append(infos, llm.TaskInfo{ID: t.ID, Title: t.Title, Description: t.Description, Details: t.Details, TestStrategy: t.TestStrategy})
		}
	}
	if len(infos) == 0 {
		return r, 0, kinded(KindConflict, fmt.Errorf("%s: no pending task to analyse", c.o.File))
	}
	if len(infos) > llm.MaxSpecTasks {
		return r, 0, kinded(KindTooLarge, fmt.Errorf("%s: %d pending tasks; at most %d are analysed at once (choose a smaller tag with --tag)", c.o.File, len(infos), llm.MaxSpecTasks))
	}
	client, err := specClient(c.o.Run.Model)
	if err != nil {
		return r, 0, err
	}
	list, usage, err := client.Complexity(ctx, infos, nil)
	if err != nil {
		return r, usage.Total, fmt.Errorf("complexity: %w; nothing was written", err)
	}
	r.Meta.GeneratedAt = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	r.Meta.TasksAnalyzed, r.Meta.TotalTasks, r.Meta.AnalysisCount = len(list), len(f.Tasks), len(list)
	r.Meta.ThresholdScore = ComplexityThreshold
	r.Meta.ProjectName = filepath.Base(c.plan.Repo)
	for _, e := range list {
		id, _ := json.Marshal(e.TaskID)
		if _, err := strconv.Atoi(e.TaskID); err == nil {
			id = []byte(e.TaskID)
		}
		r.Analysis = append(r.Analysis, ComplexityEntry{TaskID: id, TaskTitle: e.Title, ComplexityScore: e.Score,
			RecommendedSubtasks: e.RecommendedSubtasks, ExpansionPrompt: e.ExpansionPrompt, Reasoning: e.Reasoning})
	}
	if report == "" {
		return r, usage.Total, nil
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return r, usage.Total, err
	}
	if err := os.MkdirAll(filepath.Dir(report), 0o755); err != nil {
		return r, usage.Total, fmt.Errorf("complexity report: %w", err)
	}
	if err := fsutil.WriteFile(report, append(data, '\n'), 0o644); err != nil {
		return r, usage.Total, fmt.Errorf("complexity report: %w", err)
	}
	return r, usage.Total, nil
}

// ComplexityReportPath is where task-master keeps the complexity report
// of a tag: .taskmaster/reports/task-complexity-report.json (with
// "_<tag>" before .json for a tag other than master), under the project
// of the tasks file file (the directory holding .taskmaster when file is
// .taskmaster/tasks/tasks.json, else file's directory).
func ComplexityReportPath(file, tag string) string {
	dir := filepath.Dir(file)
	root := dir
	if filepath.Base(dir) == "tasks" && filepath.Base(filepath.Dir(dir)) == ".taskmaster" {
		root = filepath.Dir(filepath.Dir(dir))
	}
	name := "task-complexity-report.json"
	if tag != "" && tag != tasks.DefaultTag {
		name = "task-complexity-report_" + tag + ".json"
	}
	return filepath.Join(root, ".taskmaster", "reports", name)
}
