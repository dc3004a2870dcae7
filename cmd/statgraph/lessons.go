package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/internal/printable"
)

// cmdLessons lists and edits what runs learned about a repository
// (agents.Lessons): statgraph lessons [list] [--json], lessons add TEXT,
// lessons rm KEY...
func cmdLessons(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("lessons", stderr)
	repo := fs.String("repo", ".", "the git repository whose lessons to show or edit")
	files := fs.String("files", "", "lessons add: comma-separated `paths` the lesson is about (a task mentioning one is shown it)")
	asJSON := fs.Bool("json", false, "lessons list: print one JSON object per lesson (key, kind, task, checks, files, text, learned)")
	checks := fs.String("checks", "", "lessons add: comma-separated check `names` the lesson is about (\"tests\", \"lint\", ...)")
	pos, err := parse(fs, args, 1<<20)
	if err != nil {
		return err
	}
	sub := "list"
	if len(pos) > 0 {
		sub, pos = pos[0], pos[1:]
	}
	abs, err := filepath.Abs(*repo)
	if err != nil {
		return usageError{fmt.Sprintf("lessons: --repo %s: %v", *repo, err)}
	}
	st, err := control.OpenLessons(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	switch sub {
	case "list":
		if len(pos) > 0 {
			return usagef("lessons list takes no arguments")
		}
		items, err := control.ListLessons(ctx, st, abs)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			for _, it := range items {
				if err := enc.Encode(lessonJSON{Key: it.Key, Lesson: agents.LessonOf(it.Value), Learned: it.Updated.UTC()}); err != nil {
					return err
				}
			}
			return nil
		}
		if len(items) == 0 {
			fmt.Fprintf(stdout, "no lessons for %s yet: runs record them when a retry fixes a failed check\n", printable.String(abs))
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tKIND\tLEARNED\tLESSON")
		for _, it := range items {
			l := agents.LessonOf(it.Value)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", printable.String(it.Key), printable.String(l.Kind),
				it.Updated.Local().Format("2006-01-02 15:04"), printable.String(l.Text))
		}
		return tw.Flush()
	case "add":
		if len(pos) == 0 {
			return usagef("lessons add: give the lesson's text, e.g. statgraph lessons add \"run go generate after editing api.proto\"")
		}
		key, err := control.AddLesson(ctx, st, abs, "", strings.Join(pos, " "), list(*files), list(*checks))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "added lesson %s\n", key)
		return nil
	case "rm":
		if len(pos) == 0 {
			return usagef("lessons rm: give the keys to remove (statgraph lessons list shows them)")
		}
		for _, key := range pos {
			if err := control.RemoveLesson(ctx, st, abs, key); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "removed lesson %s\n", printable.String(key))
		}
		return nil
	}
	return usagef("lessons: unknown subcommand %q: use list, add or rm", sub)
}

// lessonJSON is one line of lessons --json.
type lessonJSON struct {
	Key string `json:"key"`
	agents.Lesson
	Learned time.Time `json:"learned"`
}

// list splits a comma-separated flag value, dropping empty items.
func list(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
