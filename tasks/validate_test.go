package tasks

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseBadFiles checks every problem of each bad fixture: message,
// file:line:col and task id. The fixtures are parsed under the name
// tasks.json so the expectations read like what a user sees.
func TestParseBadFiles(t *testing.T) {
	tests := []struct {
		file string
		want []string
		// warn are the problems confined to one task that would block it
		// rather than refuse the file (see TestConfinedProblemsBlockTheirTask).
		warn []string
	}{
		{file: "cycle", want: []string{
			`tasks.json:3:47: task 1: dependency cycle: 1 -> 3 -> 2 -> 1; remove one of these dependencies`,
		}, warn: []string{
			`tasks.json:6:49: task 4: task 4 depends on itself; remove 4 from its dependencies; task 4 is blocked until it is fixed, and so are the tasks that depend on it`,
		}},
		{file: "cycle_parent", want: []string{
			`tasks.json:3:47: task 1: dependency cycle: 1 -> 5.1 -> 2.2 -> 1; remove one of these dependencies`,
		}},
		{file: "cycle_subtasks", want: []string{
			`tasks.json:6:48: task 2.2: dependencies[0] is null; want a task id (a number or a string)`,
		}, warn: []string{
			`tasks.json:9:47: task 3.1: dependency cycle: 3.1 -> 3.2 -> 3.1; remove one of these dependencies; task 3 is blocked until it is fixed, and so are the tasks that depend on it`,
			`tasks.json:12:49: task 4: task 4 depends on its own subtask 4.1; its subtasks already run before it counts as done, so remove it; task 4 is blocked until it is fixed, and so are the tasks that depend on it`,
			`tasks.json:13:48: task 4.1: subtask 4.1 depends on its own parent 4; a parent is done only when its subtasks are, so remove it; task 4 is blocked until it is fixed, and so are the tasks that depend on it`,
		}},
		{file: "defaults", want: []string{
			`tasks.json:2:16: unknown field "max_retry" in defaults (known: max_retries, test_cmd, lint_cmd, checks, review, workdir, executor, model, on_exhausted, budget_tokens, budget_usd, timeout, request_timeout, limits, sandbox, setup_cmd, copy_files, approve_plan, land, attempts, candidates, judge, prices, notify)`,
			`tasks.json:2:44: unknown executor "gpt"; want "llm", a preset (aider, claude, codex, gemini, opencode, qwen) or {"command": ["program", "arg", ...]}`,
		}},
		{file: "dupkeys", want: []string{
			`tasks.json:3:29: task 1: field "title" appears twice (first at 3:15); keep one`,
			`tasks.json:3:74: task 1: field "command" appears twice (first at 3:56); keep one`,
			`tasks.json:5:3: field "tasks" appears twice (first at 2:3); keep one`,
		}},
		{file: "duplicate", want: []string{
			`tasks.json:4:5: task 1: duplicate id 1: the task at tasks.json:3:5 has it too; ids must be unique`,
		}, warn: []string{
			`tasks.json:5:69: task 2.1: duplicate id 2.1: the task at tasks.json:5:44 has it too; ids must be unique; task 2 is blocked until it is fixed, and so are the tasks that depend on it`,
		}},
		{file: "empty", want: []string{
			`tasks.json:1:1: invalid JSON: the file is empty; want {"tasks": [...]}`,
		}},
		{file: "lifecycle", want: []string{
			`tasks.json:2:29: "setup_cmd" is a number (5); want a string (run with sh -c) or an array of strings (run directly)`,
			`tasks.json:2:46: "copy_files" is a string (".env"); want an array of strings`,
			`tasks.json:4:44: task 1: copy_files[0] "../secrets.env" leaves the repository; give a path relative to the repository's top directory, such as ".env"`,
			`tasks.json:4:62: task 1: copy_files[1] ".git/config" is inside .git; name files of the working tree`,
			`tasks.json:4:88: task 1: copy_files[3] is a number (3); want a string`,
		}},
		{file: "missing", want: []string{
			`tasks.json:3:5: tasks[0] has no "id"; give it a number or a string`,
			`tasks.json:4:5: task 2: has no "title"; give it a short description of the work`,
			`tasks.json:5:5: task 3: has no "title"; give it a short description of the work`,
			`tasks.json:5:44: task 3: subtasks[0] has no "id"; give it a number or a string`,
		}},
		{file: "syntax", want: []string{
			`tasks.json:3:28: task 1: invalid JSON: trailing comma before '}': remove the comma after the last member`,
		}},
		{file: "checks", want: []string{
			`tasks.json:2:26: "checks" is an object; want an array of {"name": ..., "cmd": ..., "kind": "test|lint|other", "mode": "blocking|advisory|informational", "timeout": "10m"}`,
			`tasks.json:4:39: task 1: "review" is a string ("yes"); want true or false`,
			`tasks.json:5:7: task 1: checks[0] has no "name"; give it a short name such as "race"`,
			`tasks.json:6:64: task 1: checks[1]: unknown kind "unit" (want "test", "lint" or "other")`,
			`tasks.json:6:80: task 1: checks[1]: unknown mode "maybe" (want "blocking", "advisory" or "informational")`,
			`tasks.json:6:100: task 1: checks[1]: timeout "soon" is not a positive duration such as "90s" or "10m"`,
			`tasks.json:7:7: task 1: checks[2]: a check named "race" comes earlier; names must be unique`,
			`tasks.json:7:39: task 1: checks[2]: unknown field "colour" (known: name, cmd, kind, mode, timeout)`,
			`tasks.json:8:7: task 1: checks[3] is a string ("go vet"); want an array of {"name": ..., "cmd": ..., "kind": "test|lint|other", "mode": "blocking|advisory|informational", "timeout": "10m"}`,
		}},
		{file: "sandbox", want: []string{
			`tasks.json:2:27: "sandbox" is a string ("off"); want an object such as {"network": ["proxy.golang.org"], "read": ["~/.m2"], "hide": ["~/notes"]}`,
			`tasks.json:4:52: task 1: "sandbox.network" is a string ("no"); want false (closed), true (the host's network) or an array of hosts such as ["proxy.golang.org", "*.npmjs.org"]`,
			`tasks.json:5:41: task 2: unknown sandbox field "net" (known: network, read, hide)`,
			`tasks.json:6:73: task 3: sandbox.network[1]: host "https://x.org/" is not a host; want a host name ("example.com"), "*.example.com", an IP address, or one of them with ":port" (no scheme or path)`,
			`tasks.json:6:91: task 3: sandbox.network[2] is a number (443); want a host such as "proxy.golang.org"`,
			`tasks.json:6:96: task 3: sandbox.network[3]: host "a:99999" has port "99999"; want a number from 1 to 65535`,
			`tasks.json:7:59: task 4: sandbox.read[1] "rel/path" is not an absolute path; give one such as "/opt/sdk" or "~/.m2" (under your home)`,
			`tasks.json:7:71: task 4: sandbox.read[2] "/" is the whole filesystem (or home); name the directories themselves, such as "~/.m2"`,
			`tasks.json:7:85: task 4: "hide" is a string ("~/.ssh"); want an array of strings`,
		}},
		{file: "syntax_subtask", want: []string{
			`tasks.json:5:30: task 2.1: invalid JSON: unexpected character '"' after object member "title", expecting ',' or '}'`,
		}},
		{file: "tag_missing", want: []string{
			`tasks.json:1:1: tag "master" not found (tags present: master2, feature-x); choose one with --tag`,
		}},
		{file: "toplevel", want: []string{
			`tasks.json:1:1: the top level is an array; want an object {"tasks": [...]}`,
		}},
		{file: "trailing", want: []string{
			`tasks.json:2:1: invalid JSON: unexpected character 'g' after the end of the top-level JSON value`,
		}},
		{file: "types", want: []string{
			`tasks.json:5:16: task 1: "title" is a number (7); want a string`,
			`tasks.json:6:23: task 1: "dependencies" is a string ("2"); want an array of task ids (numbers or strings)`,
			`tasks.json:7:22: task 1: "max_retries" is -1; want 0 or more`,
			`tasks.json:8:24: task 1: "budget_tokens" is a string ("many"); want a whole number`,
			`tasks.json:10:19: task 1: unknown executor "robot"; want "llm", a preset (aider, claude, codex, gemini, opencode, qwen) or {"command": ["program", "arg", ...]}`,
			`tasks.json:11:23: task 1: unknown on_exhausted "retry" (want "fail" or "ask")`,
			`tasks.json:12:22: task 1: "retry_count" is 1.5; want a whole number`,
			`tasks.json:13:19: task 1: "test_cmd" is a number (5); want a string (run with sh -c) or an array of strings (run directly)`,
			`tasks.json:14:20: task 1: "failed_at" "yesterday" is not an RFC 3339 time such as "2025-01-02T15:04:05Z"`,
			`tasks.json:16:5: tasks[1] is a string; want a task object`,
			`tasks.json:17:12: tasks[2]: "id" is a boolean (true); want a number or a non-empty string`,
			`tasks.json:18:72: task 4: unknown placeholder {prompt_text} in executor command (known: {prompt}, {prompt_file}, {workdir}, {attempt}, {task_id})`,
			`tasks.json:18:97: task 4: "env" is an object; want an array of strings`,
			`tasks.json:18:101: task 4: unknown executor field "shell" (known: command, preset, stdin, timeout, env)`,
			`tasks.json:19:56: task 5: dependencies[1] is null; want a task id (a number or a string)`,
			`tasks.json:19:75: task 5: "subtasks" is an object; want an array of task objects`,
		}, warn: []string{
			`tasks.json:9:17: task 1: unknown status "wip": the task will not run (known: pending, in-progress, done, completed, review, failed, blocked, cancelled, deferred, interrupted, parked)`,
		}},
		{file: "unclosed", want: []string{
			`tasks.json:2:12: invalid JSON: array starting here is not closed before the end of file`,
		}},
		{file: "whitespace", want: []string{
			`tasks.json:1:1: invalid JSON: the file is empty; want {"tasks": [...]}`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "bad", tt.file+".json"))
			require.NoError(t, err)
			f, err := Parse("tasks.json", data, "")
			require.Error(t, err)
			assert.Nil(t, f)
			var verr *ValidationError
			require.True(t, errors.As(err, &verr), "got %T; want *ValidationError", err)
			got := make([]string, len(verr.Problems))
			for i, p := range verr.Problems {
				got[i] = p.String()
				assert.Positive(t, p.Line, "problem %q has no line", p.Message)
				assert.Positive(t, p.Col, "problem %q has no column", p.Message)
			}
			assert.Equal(t, tt.want, got)
			var warned []string
			for _, w := range verr.Warnings {
				warned = append(warned, w.String())
			}
			assert.Equal(t, tt.warn, warned, "warnings")
		})
	}
}
