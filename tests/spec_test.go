package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// samplePRD is the requirements document the spec tests plan from.
const samplePRD = `# Word counter

A command-line tool that counts the words of a file.

- wc.go reads the file named on the command line and prints its word count.
- Errors (no argument, unreadable file) go to stderr with exit code 1.
- A test covers an empty file and a file of three words.
`

// specTasks is a model's task list for samplePRD, as a reply text.
const specTasks = `{"tasks": [
 {"id": 1, "title": "Count words", "description": "Write the counting function.", "details": "A func Count(r io.Reader) (int, error) in wc.go.", "testStrategy": "A table test of Count.", "priority": "high", "dependencies": []},
 {"id": 2, "title": "Add the command", "description": "Read the file named on the command line.", "details": "main calls Count and prints the number.", "testStrategy": "Run it on a file of three words.", "priority": "medium", "dependencies": [1]},
 {"id": 3, "title": "Report errors", "description": "No argument or an unreadable file exits 1.", "details": "Messages go to stderr.", "testStrategy": "Run it without arguments.", "priority": "low", "dependencies": [2]}
]}`

// specModel starts a scripted model that answers every request with
// reply, and returns it with the environment that points statgraph at it.
func specModel(t *testing.T, reply string) (*llmtest.Server, []string) {
	s := llmtest.NewServer(t)
	s.SetFallback(llmtest.Always(llmtest.Text(reply, 40)))
	return s, []string{"OPENAI_BASE_URL=" + s.BaseURL(), "STATGRAPH_MODEL=" + llmtest.Model}
}

// taskMasterTaskFields are the fields of a task as task-master's
// parse-prd writes it (its src/schemas/parse-prd.js and the tasks of its
// own .taskmaster/tasks/tasks.json), with their JSON types; a subtask as
// its expand writes it (base-schemas.js SubtaskSchema) has them but
// priority and subtasks.
var taskMasterTaskFields = map[string]string{
	"id": "integer", "title": "string", "description": "string", "status": "string",
	"dependencies": "integer array", "priority": "string", "details": "string", "testStrategy": "string",
	"subtasks": "array",
}

// jsonType names v's JSON type as taskMasterTaskFields does.
func jsonType(v any) string {
	switch v := v.(type) {
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		if len(v) == 0 {
			return "array"
		}
		for _, e := range v {
			if jsonType(e) != "integer" {
				return "array"
			}
		}
		return "integer array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// checkTaskMasterShape fails t unless the tag of the file at path has
// task-master's shape: {"<tag>": {"tasks": [...], "metadata": {"created",
// "updated", "description"}}}, each task with exactly the fields and types
// task-master writes, and each subtask likewise.
func checkTaskMasterShape(t *testing.T, path, tag string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]struct {
		Tasks    []map[string]any  `json:"tasks"`
		Metadata map[string]string `json:"metadata"`
	}
	require.NoError(t, dec.Decode(&doc), "%s", data)
	got := doc[tag]
	require.NotEmpty(t, got.Tasks, "tag %q has tasks: %s", tag, data)
	for _, k := range []string{"created", "updated", "description"} {
		assert.NotEmpty(t, got.Metadata[k], "metadata.%s", k)
	}
	for _, task := range got.Tasks {
		types := map[string]string{}
		for k, v := range task {
			types[k] = jsonType(v)
		}
		if deps := task["dependencies"].([]any); len(deps) == 0 {
			types["dependencies"] = "integer array"
		}
		assert.Equal(t, taskMasterTaskFields, types, "task %v", task["id"])
		assert.Equal(t, "pending", task["status"])
		assert.Contains(t, []any{"high", "medium", "low"}, task["priority"])
		for _, sub := range task["subtasks"].([]any) {
			want := maps(taskMasterTaskFields, "priority", "subtasks")
			types := map[string]string{}
			for k, v := range sub.(map[string]any) {
				types[k] = jsonType(v)
			}
			if deps := sub.(map[string]any)["dependencies"].([]any); len(deps) == 0 {
				types["dependencies"] = "integer array"
			}
			assert.Equal(t, want, types, "subtask %v of task %v", sub.(map[string]any)["id"], task["id"])
		}
	}
	return got.Tasks
}

// maps returns m without the keys drop.
func maps(m map[string]string, drop ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !slices.Contains(drop, k) {
			out[k] = v
		}
	}
	return out
}

// TestPlanFromPRD: statgraph plan writes the model's task list into a new
// file that validate accepts without a warning and whose shape is
// task-master's, asking for it with a JSON-schema'd reply.
func TestPlanFromPRD(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"PRD.md": samplePRD})
	s, env := specModel(t, specTasks)

	r := statgraphEnv(t, repo, env, "plan", "--tasks", "3", "PRD.md")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `wrote 3 tasks (1, 2, 3) into tag "master" of tasks.json, a new file`)
	assert.Empty(t, leftovers(t, repo, "tasks.json"), "the lock and temporary files are gone")

	v := statgraph(t, repo, "validate", "tasks.json")
	require.Equal(t, 0, v.code, "stdout:\n%s\nstderr:\n%s", v.stdout, v.stderr)
	assert.Equal(t, "tasks.json is valid: 3 tasks, 3 runnable units\n", v.stdout, "no warnings")
	got := checkTaskMasterShape(t, filepath.Join(repo, "tasks.json"), "master")
	assert.Equal(t, "Add the command", got[1]["title"])

	reqs := s.Requests()
	require.Len(t, reqs, 1)
	require.NotNil(t, reqs[0].ResponseFormat)
	assert.Equal(t, openai.ChatCompletionResponseFormatTypeJSONSchema, reqs[0].ResponseFormat.Type)
	assert.Contains(t, reqs[0].Messages[1].Content, "A command-line tool that counts the words of a file.")
	assert.Contains(t, reqs[0].Messages[1].Content, "about 3 tasks")
}

// TestPlanIntoExistingFile: a plan into a file that exists becomes a new
// tag at its end, every byte of the other tags as it was; a tag that
// exists is refused before the model is asked, and nothing is written.
func TestPlanIntoExistingFile(t *testing.T) {
	t.Parallel()
	const existing = `{
	"master": {
		"tasks": [{"id": 1, "title": "Mine", "status": "done", "custom": {"kept": [1, 2]}}],
		"metadata": {"created": "2025-06-13T23:52:56.848Z", "description": "the user's"}
	},
	"feature": {"tasks": [{"id": 7,   "title": "Spaced  oddly"}]}
}
`
	repo := newRepo(t, map[string]string{"PRD.md": samplePRD, "tasks.json": existing})
	s, env := specModel(t, specTasks)

	r := statgraphEnv(t, repo, env, "plan", "--tag", "master", "PRD.md")
	require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, `tasks.json has a tag "master" (tags: master, feature); choose a new name with --tag`)
	assert.Zero(t, s.Count(), "refused before the model is asked")

	r = statgraphEnv(t, repo, env, "plan", "--tag", "wc", "PRD.md")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `into tag "wc" of tasks.json, a new tag of the existing file`)
	data, err := os.ReadFile(filepath.Join(repo, "tasks.json"))
	require.NoError(t, err)
	before := strings.TrimSuffix(existing, "\n}\n")
	require.True(t, strings.HasPrefix(string(data), before), "the other tags are byte-identical:\n%s", data)
	assert.True(t, strings.HasSuffix(string(data), "\n}\n"), "the file still ends as it did:\n%s", data)
	checkTaskMasterShape(t, filepath.Join(repo, "tasks.json"), "wc")
	for _, tag := range []string{"master", "feature", "wc"} {
		v := statgraph(t, repo, "validate", "--tag", tag, "tasks.json")
		assert.Equal(t, 0, v.code, "tag %s\nstdout:\n%s\nstderr:\n%s", tag, v.stdout, v.stderr)
	}

	r = statgraphEnv(t, repo, env, "plan", "--tag", "wc", "PRD.md")
	assert.Equal(t, 2, r.code, "the tag just written is refused too")
	after, err := os.ReadFile(filepath.Join(repo, "tasks.json"))
	require.NoError(t, err)
	assert.Equal(t, string(data), string(after))
}

// TestPlanRefusesBadReplies: a broken or hostile reply is refused with an
// error saying what is wrong, and nothing is written.
func TestPlanRefusesBadReplies(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	many.WriteString(`{"tasks": [`)
	for i := 1; i <= 10000; i++ {
		if i > 1 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `{"id": %d, "title": "t", "description": "d", "details": "", "testStrategy": "", "priority": "low", "dependencies": []}`, i)
	}
	many.WriteString(`]}`)
	task := func(id int, deps, title, details string) string {
		return fmt.Sprintf(`{"id": %d, "title": %q, "description": "d", "details": %q, "testStrategy": "", "priority": "low", "dependencies": [%s]}`, id, title, details, deps)
	}
	for _, tc := range []struct {
		name, reply, want string
	}{
		{"invalid JSON", `{"tasks": [{"id": 1, "title": }]}`, "the JSON object does not parse"},
		{"cycle", `{"tasks": [` + task(1, "2", "a", "") + "," + task(2, "1", "b", "") + `]}`, "task 1: dependency cycle: 1 -> 2 -> 1"},
		{"unknown dependency", `{"tasks": [` + task(1, "9", "a", "") + `]}`, "task 1: dependency 9 does not exist"},
		{"10,000 tasks", many.String(), "10000 entries; at most 100 are accepted"},
		{"huge title", `{"tasks": [` + task(1, "", strings.Repeat("x", 300), "") + `]}`, `"title" is 300 bytes; at most 200`},
		{"huge details", `{"tasks": [` + task(1, "", "a", strings.Repeat("y", 300<<10)) + `]}`, "a text is over 262144 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t, map[string]string{"PRD.md": samplePRD})
			_, env := specModel(t, tc.reply)
			r := statgraphEnv(t, repo, env, "plan", "PRD.md")
			assert.NotEqual(t, 0, r.code)
			assert.Contains(t, r.stderr, tc.want)
			assert.Contains(t, r.stderr, "nothing was written")
			assert.False(t, fileExists(filepath.Join(repo, "tasks.json")), "no tasks file")
			assert.Empty(t, leftovers(t, repo, "tasks.json"), "no temporary or lock file left")
		})
	}
}

// TestExpandAndComplexity: expand adds the model's subtasks to a pending
// task, and complexity prints a score per pending task and writes
// task-master's report.
func TestExpandAndComplexity(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"tasks.json": `{"master": {"tasks": [
  {"id": 1, "title": "Count words", "description": "Write Count.", "status": "pending", "dependencies": [], "priority": "high", "details": "", "testStrategy": ""},
  {"id": 2, "title": "Done already", "description": "x", "status": "done", "dependencies": []}
]}}
`})
	_, env := specModel(t, `{"subtasks": [
 {"id": 1, "title": "Split the input", "description": "Split on spaces.", "details": "strings.Fields", "testStrategy": "table test", "dependencies": []},
 {"id": 2, "title": "Count the fields", "description": "Return the count.", "details": "len", "testStrategy": "table test", "dependencies": [1]}
]}`)
	r := statgraphEnv(t, repo, env, "expand", "--num", "2", "1")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "added 2 subtasks to task 1: 1.1, 1.2")
	v := statgraph(t, repo, "validate", "tasks.json")
	require.Equal(t, 0, v.code, "stdout:\n%s\nstderr:\n%s", v.stdout, v.stderr)
	assert.Equal(t, "tasks.json is valid: 2 tasks, 3 runnable units\n", v.stdout)
	got := readTagged(t, filepath.Join(repo, "tasks.json"))
	require.Len(t, got[0].Subtasks, 2)
	assert.Equal(t, "pending", got[0].Subtasks[1].Status)

	r = statgraphEnv(t, repo, env, "expand", "2")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "task 2 is done; only a pending task can be expanded")

	_, env = specModel(t, `{"complexityAnalysis": [{"taskId": "1", "taskTitle": "Count words", "complexityScore": 3, "recommendedSubtasks": 2, "expansionPrompt": "Split then count.", "reasoning": "A small pure function."}]}`)
	r = statgraphEnv(t, repo, env, "complexity")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `(?m)^1\s+3\s+2\s+Count words\s+A small pure function\.$`, r.stdout)
	reportPath := filepath.Join(repo, ".taskmaster", "reports", "task-complexity-report.json")
	data, err := os.ReadFile(reportPath)
	require.NoError(t, err)
	var report struct {
		Meta     map[string]any   `json:"meta"`
		Analysis []map[string]any `json:"complexityAnalysis"`
	}
	require.NoError(t, json.Unmarshal(data, &report), "%s", data)
	for _, k := range []string{"generatedAt", "tasksAnalyzed", "totalTasks", "analysisCount", "thresholdScore", "projectName", "usedResearch"} {
		assert.Contains(t, report.Meta, k)
	}
	require.Len(t, report.Analysis, 1)
	assert.Equal(t, map[string]any{"taskId": 1.0, "taskTitle": "Count words", "complexityScore": 3.0, "recommendedSubtasks": 2.0,
		"expansionPrompt": "Split then count.", "reasoning": "A small pure function."}, report.Analysis[0])

	j := statgraphEnv(t, repo, env, "complexity", "--json", "--report", "-")
	require.Equal(t, 0, j.code, "stdout:\n%s\nstderr:\n%s", j.stdout, j.stderr)
	assert.Contains(t, j.stdout, `"complexityAnalysis"`)
}

// readTagged reads the master tag of the tasks file at path.
func readTagged(t *testing.T, path string) []taskDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]struct {
		Tasks []taskDoc `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal(data, &doc), "%s", data)
	return doc["master"].Tasks
}
