package control

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/statgraph/store"
)

// LessonsPath is the SQLite file of the lessons of every repository
// (agents.Lessons): lessons.db in statgraph's state root, beside the
// plans' run stores, so that the lessons of a repository reach every plan
// run in it.
func LessonsPath() (string, error) {
	root, err := workspace.StateRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "lessons.db"), nil
}

// OpenLessons opens, creating it and its directory, the lessons store at
// LessonsPath.
func OpenLessons(ctx context.Context) (*sqlite.ItemStore, error) {
	path, err := LessonsPath()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lessons store: %w", err)
	}
	return sqlite.OpenItemStore(ctx, path)
}

// ListLessons returns the lessons of the repository at repo, most
// recently learned first.
func ListLessons(ctx context.Context, st store.Store, repo string) ([]store.Item, error) {
	var all []store.Item
	for {
		page, err := st.Search(ctx, agents.LessonNamespace(repo), store.Query{Limit: 100, Offset: len(all)})
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < 100 {
			return all, nil
		}
	}
}

// AddLesson records text as a lesson of the repository at repo, of kind
// "note" (a convention a person states), relevant to the files and checks
// given, under key ("" makes one from the text).
func AddLesson(ctx context.Context, st store.Store, repo, key, text string, files, checks []string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", fmt.Errorf("a lesson needs a text: statgraph lessons add \"TEXT\"")
	}
	if key == "" {
		key = workspace.KeyedName("note", 12, text)
	}
	l := agents.Lesson{Kind: "note", Text: text, Files: files, Checks: checks}
	return key, st.Put(ctx, store.Item{Namespace: agents.LessonNamespace(repo), Key: key, Value: l.Value()})
}

// RemoveLesson deletes the lesson under key of the repository at repo; a
// key that is not there is an error naming it.
func RemoveLesson(ctx context.Context, st store.Store, repo, key string) error {
	ns := agents.LessonNamespace(repo)
	if _, err := st.Get(ctx, ns, key); err != nil {
		return fmt.Errorf("no lesson %q for %s (statgraph lessons list shows the keys): %w", key, repo, err)
	}
	return st.Delete(ctx, ns, key)
}
