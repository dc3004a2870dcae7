package tasks

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestParkedUntilDurable: a parked outcome writes status "parked" and
// parked_until to the file and through the results journal, both read
// back by Load; the next outcome removes parked_until again.
func TestParkedUntilDurable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.json")
	if err := os.WriteFile(path, []byte(`{"tasks": [{"id": 1, "title": "a"}, {"id": 2, "title": "b"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	until := time.Date(2026, 11, 28, 15, 0, 0, 500_000_000, time.FixedZone("x", 3600))
	f, err := Load(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Apply("1", Outcome{Status: StatusParked, Reason: "usage limit", RetryCount: 1, ParkedUntil: &until}); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "journal")
	j, _, err := OpenJournal(f, journal)
	if err != nil {
		t.Fatal(err)
	}
	j.Add("2", Outcome{Status: StatusParked, ParkedUntil: &until})
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	j.Close()

	g, err := Load(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyJournal(g, journal); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1", "2"} {
		task, _ := g.Task(id)
		if task.Status != StatusParked || task.ParkedUntil == nil || !task.ParkedUntil.Equal(until) {
			t.Errorf("task %s: status %q, parked_until %v; want parked until %v", id, task.Status, task.ParkedUntil, until)
		}
		if !Runnable(task.Status) {
			t.Errorf("a parked task is not runnable")
		}
	}
	if err := g.Apply("1", Outcome{Status: StatusDone, RetryCount: 1}); err != nil {
		t.Fatal(err)
	}
	if task, _ := g.Task("1"); task.ParkedUntil != nil {
		t.Errorf("parked_until %v kept after the task is done", task.ParkedUntil)
	}
}
