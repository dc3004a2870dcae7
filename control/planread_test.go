package control

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/tasks"
)

// readFixture writes a tasks file of three pending tasks and returns it
// with its plan, the file's modification time set to age ago.
func readFixture(t *testing.T, age time.Duration) (string, dispatch.Plan) {
	t.Helper()
	t.Setenv("STATGRAPH_HOME", t.TempDir())
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.json")
	writeAged(t, file, `{"tasks": [{"id": 1, "title": "a", "status": "pending"}, {"id": 2, "title": "b"}, {"id": 3, "title": "c"}]}`, age)
	plan, err := dispatch.NewPlan(dir, file, "")
	require.NoError(t, err)
	return file, plan
}

// writeAged writes content into the file at path in place (same inode),
// with its modification time age ago.
func writeAged(t *testing.T, path, content string, age time.Duration) time.Time {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	mt := time.Now().Add(-age).Truncate(time.Second)
	require.NoError(t, os.Chtimes(path, mt, mt))
	return mt
}

func statusOf(t *testing.T, units []TaskInfo, id string) string {
	t.Helper()
	for _, u := range units {
		if u.ID == id {
			return u.Status
		}
	}
	t.Fatalf("no unit %s", id)
	return ""
}

// A read of files that did not change since they were last read, long
// after they were written, parses nothing: it returns the same units.
func TestPlanReadParsesOnlyOnChange(t *testing.T) {
	file, plan := readFixture(t, time.Hour)
	var pr planRead
	first, _, err := pr.read(file, "", plan)
	require.NoError(t, err)
	again, _, err := pr.read(file, "", plan)
	require.NoError(t, err)
	require.Same(t, &first[0], &again[0], "nothing changed: the last parse is used")

	// A rewrite that changes the size is seen.
	writeAged(t, file, `{"tasks": [{"id": 1, "title": "a", "status": "done"}, {"id": 2, "title": "b"}, {"id": 3, "title": "c"}]}`, time.Hour)
	third, _, err := pr.read(file, "", plan)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusDone, statusOf(t, third, "1"))

	// So is an outcome only in the results journal (a run going on).
	require.NoError(t, os.MkdirAll(plan.Dir, 0o755))
	require.NoError(t, os.WriteFile(plan.Journal(), []byte(`{"id":"2","status":"failed","reason":"broke"}`+"\n"), 0o600))
	fourth, _, err := pr.read(file, "", plan)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusFailed, statusOf(t, fourth, "2"))
	fifth, _, err := pr.read(file, "", plan)
	require.NoError(t, err)
	require.Same(t, &fourth[0], &fifth[0])

	// And the journal emptied again (the run saved the file).
	require.NoError(t, os.Truncate(plan.Journal(), 0))
	sixth, _, err := pr.read(file, "", plan)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusPending, statusOf(t, sixth, "2"))
}

// A rewrite of the same size, in place, that leaves the modification time
// as it was (a file system's coarse clock: both writes in one tick) is
// seen when the last read was within racyWindow of that time, however
// long after it the next read comes: the content is hashed again.
func TestPlanReadSeesSameSizeRewriteInOneTick(t *testing.T) {
	file, plan := readFixture(t, 0)
	var pr planRead
	first, _, err := pr.read(file, "", plan)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusPending, statusOf(t, first, "1"))
	mt := pr.file.fi.ModTime()

	// "pending" -> "failed!" would change the size; "pending" and
	// "blocked" have the same length.
	require.NoError(t, os.WriteFile(file, []byte(`{"tasks": [{"id": 1, "title": "a", "status": "blocked"}, {"id": 2, "title": "b"}, {"id": 3, "title": "c"}]}`), 0o644))
	require.NoError(t, os.Chtimes(file, mt, mt))
	fi, err := os.Stat(file)
	require.NoError(t, err)
	require.True(t, os.SameFile(pr.file.fi, fi) && fi.Size() == pr.file.fi.Size() && fi.ModTime().Equal(mt), "the stat cannot tell")
	second, _, err := pr.read(file, "", plan)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusBlocked, statusOf(t, second, "1"))
}

// sameTask compares every field of TaskInfo: a TaskInfo that differs in
// any one field is not the same.
func TestSameTaskSeesEveryField(t *testing.T) {
	base := TaskInfo{ID: "1", Dependencies: []string{"2"}, Question: &Question{}}
	require.True(t, sameTask(base, base))
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		b := base
		b.Dependencies = []string{"2"}
		q := *base.Question
		b.Question = &q
		require.True(t, sameTask(base, b), "copies are the same")
		f := reflect.ValueOf(&b).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("changed")
		case reflect.Int:
			f.SetInt(7)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"3"}))
		case reflect.Struct:
			f.FieldByName("Total").SetInt(7)
		case reflect.Pointer:
			if f.Type().Elem().Kind() == reflect.Float64 {
				c := 0.5
				f.Set(reflect.ValueOf(&c))
				break
			}
			b.Question.Attempts = 5
		default:
			t.Fatalf("field %s: kind %s not covered by this test", typ.Field(i).Name, f.Kind())
		}
		require.False(t, sameTask(base, b), "field %s changed", typ.Field(i).Name)
	}
	b := base
	b.Question = nil
	require.False(t, sameTask(base, b), "a question gone")
}
