package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/internal/printable"
)

// spec.go holds the commands that ask the model about the task list
// itself: plan (tasks from a requirements document), expand (subtasks of
// a task) and complexity (a score per task), as task-master's parse-prd,
// expand and analyze-complexity do.

// modelFlag registers --model and returns the model configuration it and
// the environment give, as run's flags do (runFlags.options).
func modelFlag(fs *flag.FlagSet) func() llm.Config {
	model := fs.String("model", "", "model name (default $STATGRAPH_MODEL; OPENAI_BASE_URL and OPENAI_API_KEY as for run)")
	return func() llm.Config {
		mc := llm.ConfigFromEnv()
		if *model != "" {
			mc.Model = *model
		}
		return mc
	}
}

func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", stderr)
	file := fs.String("file", "tasks.json", "the tasks file to write: created when missing, else given a new tag")
	tag := fs.String("tag", "", "the new tag (default master); an existing tag is refused")
	n := fs.Int("tasks", 0, fmt.Sprintf("about how many tasks to write, 1 to %d (default: the model chooses)", llm.MaxSpecTasks))
	model := modelFlag(fs)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("plan: give the requirements document, e.g. statgraph plan PRD.md")
	}
	res, err := control.WritePlan(ctx, control.PlanOptions{Spec: pos[0], File: *file, Tag: *tag, Tasks: *n, Model: model()})
	if err != nil {
		return err
	}
	where := "a new file"
	if !res.Created {
		where = "a new tag of the existing file"
	}
	fmt.Fprintf(stdout, "wrote %d tasks (%s) into tag %q of %s, %s (%d tokens)\n", len(res.IDs), strings.Join(res.IDs, ", "),
		printable.String(res.Tag), printable.String(res.File), where, res.Tokens)
	fmt.Fprintf(stdout, "next: statgraph validate --tag %s %s, then statgraph run --tag %s %s\n",
		printable.String(res.Tag), printable.String(res.File), printable.String(res.Tag), printable.String(res.File))
	return nil
}

// openSpec opens the plan of file for expand and complexity.
func openSpec(file, tag, repo string, mc llm.Config) (*control.Control, error) {
	ctl, err := control.Open(control.Options{File: file, Tag: tag, Repo: repo, StoreOnly: true, Run: control.RunOptions{Model: mc}})
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return ctl, nil
}

func cmdExpand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("expand", stderr)
	file := fs.String("file", "tasks.json", "the tasks file")
	tag := fs.String("tag", "", "claude-task-master tag to use in a tagged tasks file (default master)")
	repo := fs.String("repo", "", "git repository the tasks change (default: the tasks file's directory)")
	n := fs.Int("num", 0, fmt.Sprintf("about how many subtasks to add, 1 to %d (default: the model chooses)", llm.MaxSpecSubtasks))
	model := modelFlag(fs)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("expand: give the id of a pending task, e.g. statgraph expand 3")
	}
	if _, err := load(*file, *tag, stderr); err != nil {
		return err
	}
	ctl, err := openSpec(*file, *tag, *repo, model())
	if err != nil {
		return err
	}
	defer ctl.Close()
	ids, tokens, err := ctl.Expand(ctx, pos[0], *n)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added %d subtasks to task %s: %s (%d tokens)\n", len(ids), printable.String(pos[0]), printable.String(strings.Join(ids, ", ")), tokens)
	return nil
}

func cmdComplexity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("complexity", stderr)
	tag := fs.String("tag", "", "claude-task-master tag to use in a tagged tasks file (default master)")
	repo := fs.String("repo", "", "git repository the tasks change (default: the tasks file's directory)")
	report := fs.String("report", "", "where to write the report (default: task-master's .taskmaster/reports/task-complexity-report[_TAG].json beside the tasks file); - for none")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of the table")
	model := modelFlag(fs)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	file := "tasks.json"
	if len(pos) > 0 {
		file = pos[0]
	}
	if _, err := load(file, *tag, stderr); err != nil {
		return err
	}
	path := *report
	switch path {
	case "":
		path = control.ComplexityReportPath(file, *tag)
	case "-":
		path = ""
	}
	ctl, err := openSpec(file, *tag, *repo, model())
	if err != nil {
		return err
	}
	defer ctl.Close()
	r, tokens, err := ctl.Complexity(ctx, path)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSCORE\tSUBTASKS\tTITLE\tREASONING")
	for _, e := range r.Analysis {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", clip(strings.Trim(string(e.TaskID), `"`), 12), e.ComplexityScore, e.RecommendedSubtasks, clip(e.TaskTitle, 40), clip(e.Reasoning, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if path != "" {
		fmt.Fprintf(stdout, "report written to %s (%d tokens); expand a task with statgraph expand <id> --num N\n", printable.String(path), tokens)
	}
	return nil
}
