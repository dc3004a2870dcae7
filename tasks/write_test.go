package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyFixture copies testdata/name into a temp dir as tasks.json.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "tasks.json")
	require.NoError(t, os.WriteFile(path, data, 0o640))
	return path
}

// decodeFile decodes a file (after any BOM) into plain Go values.
func decodeFile(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(bytes.TrimPrefix(data, utf8BOM), &v))
	return v
}

func TestSaveRoundTripUnmodified(t *testing.T) {
	for _, name := range []string{"plain.json", "tagged.json", "bom.json", "canonical.json"} {
		t.Run(name, func(t *testing.T) {
			path := copyFixture(t, name)
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			want := decodeFile(t, path)

			f, err := Load(path, "")
			require.NoError(t, err)
			require.NoError(t, f.Save())

			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, want, decodeFile(t, path))
			assert.Equal(t, bytes.HasPrefix(before, utf8BOM), bytes.HasPrefix(after, utf8BOM), "BOM kept")
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "permissions kept")
			if name == "canonical.json" {
				assert.Equal(t, string(before), string(after), "a file already in the write-back layout is byte-for-byte unchanged")
			}
		})
	}
}

// TestSaveKeepsUnknownFields changes every field statgraph owns on a task,
// a subtask and a tagged task, then checks the whole document: exactly the
// owned fields changed and everything else (top level, tasks, subtasks,
// nested objects, other tags) decodes to the same values.
func TestSaveKeepsUnknownFields(t *testing.T) {
	failedAt := time.Date(2025, 3, 4, 12, 30, 0, 0, time.FixedZone("CET", 3600))

	t.Run("plain", func(t *testing.T) {
		path := copyFixture(t, "plain.json")
		want := decodeFile(t, path)
		f, err := Load(path, "")
		require.NoError(t, err)

		require.NoError(t, f.Apply("1", Outcome{Status: StatusFailed, RetryCount: 3,
			ErrorHistory: []string{"Retry 1: a", "Retry 2: b", "Retry 3: c"}, FailedAt: &failedAt}))
		require.NoError(t, f.Apply("2.1", Outcome{Status: StatusDone, RetryCount: 1}))
		require.NoError(t, f.SetStatus("3", StatusBlocked, "dependency 2.2 failed"))
		require.NoError(t, f.Save())

		tasks := want["tasks"].([]any)
		one := tasks[0].(map[string]any)
		one["status"] = "failed"
		one["retry_count"] = 3.0
		one["error_history"] = []any{"Retry 1: a", "Retry 2: b", "Retry 3: c"}
		one["failed_at"] = "2025-03-04T11:30:00Z"
		two := tasks[1].(map[string]any)
		two["status"] = "in-progress" // derived: one of three subtasks is done
		sub := two["subtasks"].([]any)[0].(map[string]any)
		sub["status"] = "done"
		sub["retry_count"] = 1.0
		three := tasks[2].(map[string]any)
		three["status"] = "blocked"
		three["status_reason"] = "dependency 2.2 failed"
		assert.Equal(t, want, decodeFile(t, path))

		again, err := Load(path, "")
		require.NoError(t, err, "the saved file loads again")
		got, ok := again.Task("1")
		require.True(t, ok)
		assert.Equal(t, failedAt.UTC(), *got.FailedAt)
		assert.Equal(t, 3, got.RetryCount)
	})

	t.Run("tagged", func(t *testing.T) {
		path := copyFixture(t, "tagged.json")
		want := decodeFile(t, path)
		f, err := Load(path, "feature-x")
		require.NoError(t, err)
		require.NoError(t, f.SetStatus("1.1", StatusDone, ""))
		require.NoError(t, f.Save())

		feature := want["feature-x"].(map[string]any)
		parent := feature["tasks"].([]any)[0].(map[string]any)
		parent["status"] = "done"
		parent["subtasks"].([]any)[0].(map[string]any)["status"] = "done"
		assert.Equal(t, want, decodeFile(t, path))
	})
}

// TestSaveLayout checks the spelling of untouched values, key order and
// where new keys go.
func TestSaveLayout(t *testing.T) {
	path := copyFixture(t, "plain.json")
	f, err := Load(path, "")
	require.NoError(t, err)
	require.NoError(t, f.Apply("2", Outcome{Status: StatusInProgress, RetryCount: 2}))
	require.NoError(t, f.Save())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(data)
	assert.Contains(t, text, `"id": 1,`, "numeric id stays a number")
	assert.Contains(t, text, `"id": "2",`, "string id stays a string")
	assert.Contains(t, text, `"weight": 1.50`, "numbers keep their spelling")

	root, serr := parseTree(data)
	require.Nil(t, serr)
	var keys []string
	for _, m := range root.get("tasks").elems[1].members {
		keys = append(keys, m.key)
	}
	assert.Equal(t, []string{"id", "title", "dependencies", "max_retries", "executor", "status", "retry_count", "subtasks"}, keys)
	var top []string
	for _, m := range root.members {
		top = append(top, m.key)
	}
	assert.Equal(t, []string{"project", "defaults", "tasks"}, top)
}

func TestSaveKeepsIndent(t *testing.T) {
	path := copyFixture(t, "canonical.json")
	f, err := Load(path, "")
	require.NoError(t, err)
	require.NoError(t, f.SetStatus("1", StatusDone, ""))
	require.NoError(t, f.Save())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "\n            \"status\": \"done\",\n")
}

func TestParentStatus(t *testing.T) {
	tests := []struct {
		subs []string
		want string
	}{
		{[]string{"done", "done"}, "done"},
		{[]string{"done", "cancelled"}, "done"},
		{[]string{"cancelled", "cancelled"}, "cancelled"},
		{[]string{"done", "in-progress", "failed"}, "in-progress"},
		{[]string{"done", "failed", "blocked"}, "failed"},
		{[]string{"interrupted", "blocked"}, "interrupted"},
		{[]string{"pending", "blocked"}, "blocked"},
		{[]string{"done", ""}, "in-progress"},
		{[]string{"pending", ""}, ""},
		{[]string{"deferred", "pending"}, ""},
	}
	for _, tt := range tests {
		var subs []Task
		for _, s := range tt.subs {
			subs = append(subs, Task{Status: s})
		}
		assert.Equal(t, tt.want, parentStatus(subs), "subtasks %v", tt.subs)
	}
}

func TestSettersReject(t *testing.T) {
	path := copyFixture(t, "plain.json")
	f, err := Load(path, "")
	require.NoError(t, err)
	tests := []struct {
		name string
		err  error
		set  func() error
	}{
		{"unknown id", ErrNoTask, func() error { return f.SetStatus("9", StatusDone, "") }},
		{"unknown subtask", ErrNoTask, func() error { return f.Apply("2.9", Outcome{Status: StatusInProgress, RetryCount: 1}) }},
		{"bad status", ErrBadStatus, func() error { return f.SetStatus("1", "finished", "") }},
		{"empty status", ErrBadStatus, func() error { return f.Apply("1", Outcome{}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.set()
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.err), "got %v; want %v", err, tt.err)
		})
	}
	got, ok := f.Task("1")
	require.True(t, ok)
	assert.Equal(t, StatusPending, got.Status, "a rejected change changes nothing")
}

// TestSaveAtomicUnderReader saves 200 times while another goroutine reads
// the file as fast as it can; every read must be complete, valid JSON.
func TestSaveAtomicUnderReader(t *testing.T) {
	path := copyFixture(t, "plain.json")
	f, err := Load(path, "")
	require.NoError(t, err)

	var stop atomic.Bool
	var reads, bad atomic.Int64
	var firstBad atomic.Value
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			data, err := os.ReadFile(path)
			if err != nil || !json.Valid(data) {
				if bad.Add(1) == 1 {
					firstBad.Store(string(data))
				}
			}
			reads.Add(1)
		}
	})
	for i := range 200 {
		status := []string{StatusInProgress, StatusFailed, StatusDone}[i%3]
		history := make([]string, i%7)
		for j := range history {
			history[j] = "Retry: " + string(rune('a'+j))
		}
		require.NoError(t, f.Apply("2.2", Outcome{Status: status, RetryCount: i, ErrorHistory: history}))
		require.NoError(t, f.Save())
	}
	stop.Store(true)
	wg.Wait()

	assert.Zero(t, bad.Load(), "a reader saw a torn file: %v", firstBad.Load())
	assert.Positive(t, reads.Load())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary files left")
	got, err := Load(path, "")
	require.NoError(t, err)
	sub, _ := got.Task("2.2")
	assert.Equal(t, 199, sub.RetryCount)
}

func TestSaveFollowsSymlink(t *testing.T) {
	path := copyFixture(t, "plain.json")
	link := filepath.Join(t.TempDir(), "link.json")
	require.NoError(t, os.Symlink(path, link))
	f, err := Load(link, "")
	require.NoError(t, err)
	require.NoError(t, f.SetStatus("1", StatusDone, ""))
	require.NoError(t, f.Save())

	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink, "the link is still a link")
	target, err := Load(path, "")
	require.NoError(t, err)
	one, _ := target.Task("1")
	assert.Equal(t, StatusDone, one.Status)
}
