package tasks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func intp(n int) *int { return &n }

func TestLoadPlain(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "plain.json"), "")
	require.NoError(t, err)
	assert.False(t, f.Tagged)
	assert.Empty(t, f.Tag)
	assert.Equal(t, intp(2), f.Defaults.MaxRetries)
	assert.Equal(t, Command{Shell: "go test ./..."}, f.Defaults.TestCmd)
	require.Len(t, f.Tasks, 3)

	one := f.Tasks[0]
	assert.Equal(t, "1", one.ID)
	assert.Equal(t, "Parse the config", one.Title)
	assert.Equal(t, "Read config.toml", one.Description)
	assert.Equal(t, StatusPending, one.Status)
	assert.Equal(t, "high", one.Priority)
	assert.Equal(t, "unit tests", one.TestStrategy)
	assert.Equal(t, Position{Line: 5, Col: 5}, one.Pos)
	assert.Equal(t, 2, one.Retries(), "max_retries comes from defaults")
	assert.Equal(t, Command{Argv: []string{"go", "vet", "./..."}}, one.LintCmd)
	assert.True(t, one.Executor.IsLLM())

	two := f.Tasks[1]
	assert.Equal(t, "2", two.ID)
	assert.Equal(t, []string{"1"}, two.Dependencies)
	assert.Equal(t, 5, two.Retries())
	assert.Equal(t, []string{"./fix.sh", "{prompt_file}", "{workdir}", "{attempt}"}, two.Executor.Command)
	require.Len(t, two.Subtasks, 3)
	sub := two.Subtasks
	assert.Equal(t, []string{"2.1", "2.2", "2.3"}, []string{sub[0].ID, sub[1].ID, sub[2].ID})
	assert.Equal(t, []string{"1", "2", "2.3"}, []string{sub[0].LocalID, sub[1].LocalID, sub[2].LocalID})
	assert.Equal(t, "2", sub[0].Parent)
	assert.Equal(t, 5, sub[0].Retries(), "a subtask inherits its parent's max_retries")
	assert.Equal(t, two.Executor, sub[1].Executor, "a subtask inherits its parent's executor")
	assert.Equal(t, OnExhaustedAsk, sub[1].OnExhausted)
	assert.Equal(t, "small", sub[2].Model)
	assert.Equal(t, Command{Shell: "go test ./..."}, sub[2].TestCmd, "defaults reach subtasks")

	three := f.Tasks[2]
	assert.Equal(t, Command{Argv: []string{"make", "release-check"}}, three.TestCmd)
	assert.Equal(t, intp(50000), three.BudgetTokens)
	assert.Equal(t, 1, three.RetryCount)
	assert.Equal(t, []string{"Retry 1: boom"}, three.ErrorHistory)
	assert.Nil(t, three.FailedAt)

	got, ok := f.Task("2.2")
	require.True(t, ok)
	assert.Equal(t, "Handlers", got.Title)
	_, ok = f.Task("9")
	assert.False(t, ok)
}

func TestLoadTagged(t *testing.T) {
	tests := []struct {
		tag    string
		titles []string
		model  string
	}{
		{"", []string{"Master one"}, ""},
		{"master", []string{"Master one"}, ""},
		{"feature-x", []string{"Feature one", "Feature two"}, "big"},
	}
	for _, tt := range tests {
		t.Run("tag="+tt.tag, func(t *testing.T) {
			f, err := Load(filepath.Join("testdata", "tagged.json"), tt.tag)
			require.NoError(t, err)
			assert.True(t, f.Tagged)
			var titles []string
			for _, task := range f.Tasks {
				titles = append(titles, task.Title)
				assert.Equal(t, tt.model, task.Model)
			}
			assert.Equal(t, tt.titles, titles)
		})
	}

	t.Run("missing tag lists the tags present", func(t *testing.T) {
		_, err := Load(filepath.Join("testdata", "tagged.json"), "nope")
		require.Error(t, err)
		assert.Equal(t, filepath.Join("testdata", "tagged.json")+`:1:1: tag "nope" not found (tags present: master, feature-x); choose one with --tag`, err.Error())
	})
	t.Run("tag on a plain file", func(t *testing.T) {
		_, err := Load(filepath.Join("testdata", "plain.json"), "feature-x")
		require.Error(t, err)
		assert.Contains(t, err.Error(), `tag "feature-x" was asked for but the file has the plain form`)
	})
}

func TestLoadBOM(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "bom.json"), "")
	require.NoError(t, err)
	require.Len(t, f.Tasks, 1)
	assert.Equal(t, "With BOM", f.Tasks[0].Title)
	assert.Equal(t, Position{Line: 3, Col: 5}, f.Tasks[0].Pos, "the BOM does not count as columns")

	_, err = Parse("tasks.json", []byte("\xEF\xBB\xBF{\"tasks\": [{\"id\": 1}]}"), "")
	require.Error(t, err)
	assert.Equal(t, `tasks.json:1:12: task 1: has no "title"; give it a short description of the work`, err.Error())
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "tasks.json"), "")
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	var verr *ValidationError
	assert.False(t, errors.As(err, &verr))
}

// TestLoadBadFileUnchanged checks that loading an invalid file leaves it
// byte-for-byte as it was, together with its directory.
func TestLoadBadFileUnchanged(t *testing.T) {
	bad, err := filepath.Glob(filepath.Join("testdata", "bad", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, bad)
	for _, src := range bad {
		t.Run(filepath.Base(src), func(t *testing.T) {
			data, err := os.ReadFile(src)
			require.NoError(t, err)
			dir := t.TempDir()
			path := filepath.Join(dir, "tasks.json")
			require.NoError(t, os.WriteFile(path, data, 0o644))
			before, err := os.Stat(path)
			require.NoError(t, err)

			_, err = Load(path, "")
			require.Error(t, err)

			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, data, after)
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, before.ModTime(), st.ModTime())
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temp or lock file left behind")
		})
	}
}

func TestExecutorString(t *testing.T) {
	e := Executor{Command: []string{"agent", "--prompt={prompt_file}", "{workdir}", "try {attempt} of {task_id}", "{unknown}"}}
	assert.Equal(t, "agent --prompt={prompt_file} {workdir} try {attempt} of {task_id} {unknown}", e.String())
	assert.Equal(t, "llm", Executor{}.String())
}

// TestSandboxNetworkSetting: the network is closed unless the defaults or
// the task open it; a task's own true or false wins over the defaults, a
// task's hosts add to the defaults' (a subtask's to its parent's), false
// drops the inherited hosts, and read and hide paths add up the same way.
func TestSandboxNetworkSetting(t *testing.T) {
	f, err := Parse("tasks.json", []byte(`{"defaults": {"sandbox": {"network": ["proxy.golang.org"], "read": ["~/.m2"], "hide": ["/srv/secret"]}}, "tasks": [
  {"id": 1, "title": "inherits the list"},
  {"id": 2, "title": "on", "sandbox": {"network": true}, "subtasks": [{"id": 1, "title": "inherits on"}]},
  {"id": 3, "title": "adds", "sandbox": {"network": ["*.npmjs.org", "proxy.golang.org"], "read": ["/opt/sdk"]},
   "subtasks": [{"id": 1, "title": "adds more", "sandbox": {"network": ["127.0.0.1:8080"]}}]},
  {"id": 4, "title": "off", "sandbox": {"network": false, "hide": ["~/notes"]}}
]}`), "")
	require.NoError(t, err)
	for _, tc := range []struct {
		id         string
		on         bool
		hosts      []string
		read, hide []string
	}{
		{"1", false, []string{"proxy.golang.org"}, []string{"~/.m2"}, []string{"/srv/secret"}},
		{"2", true, nil, []string{"~/.m2"}, []string{"/srv/secret"}},
		{"2.1", true, nil, []string{"~/.m2"}, []string{"/srv/secret"}},
		{"3", false, []string{"proxy.golang.org", "*.npmjs.org"}, []string{"~/.m2", "/opt/sdk"}, []string{"/srv/secret"}},
		{"3.1", false, []string{"proxy.golang.org", "*.npmjs.org", "127.0.0.1:8080"}, []string{"~/.m2", "/opt/sdk"}, []string{"/srv/secret"}},
		{"4", false, nil, []string{"~/.m2"}, []string{"/srv/secret", "~/notes"}},
	} {
		task, ok := f.Task(tc.id)
		require.True(t, ok, tc.id)
		assert.Equal(t, tc.on, task.Sandbox.NetworkOn(), "task %s", tc.id)
		assert.Equal(t, tc.hosts, task.Sandbox.Hosts, "task %s", tc.id)
		assert.Equal(t, tc.read, task.Sandbox.Read, "task %s", tc.id)
		assert.Equal(t, tc.hide, task.Sandbox.Hide, "task %s", tc.id)
	}
	f, err = Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "default"}]}`), "")
	require.NoError(t, err)
	task, _ := f.Task("1")
	assert.False(t, task.Sandbox.NetworkOn(), "the network is closed by default")
	assert.Empty(t, task.Sandbox.Hosts)
	assert.Equal(t, "/home/u/.m2", HomePath("~/.m2", "/home/u"))
	assert.Equal(t, "/opt/sdk", HomePath("/opt/sdk", "/home/u"))
}
