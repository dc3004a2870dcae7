package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// agentRepo makes a repository whose task 1 runs script (sh -c) as its
// command agent, with checks that pass, and returns it.
func agentRepo(t *testing.T, script string) string {
	t.Helper()
	task, err := json.Marshal(map[string]any{"tasks": []any{map[string]any{
		"id": 1, "title": "agent", "max_retries": 1, "test_cmd": "true",
		"executor": map[string]any{"command": []string{"sh", "-c", script}},
	}}})
	require.NoError(t, err)
	return newRepo(t, map[string]string{"README.md": "a repository\n", "tasks.json": string(task)})
}

// branchFiles returns the files on task 1's branch in repo, or nil when
// the branch is not there.
func branchFiles(t *testing.T, repo string) []string {
	t.Helper()
	branch := planOf(t, repo, "tasks.json", "").Branch("1")
	if exec.Command("git", "-C", repo, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Run() != nil {
		return nil
	}
	out := gittest.Git(t, repo, "ls-tree", "-r", "-z", "--name-only", branch)
	return strings.Split(strings.TrimRight(out, "\x00"), "\x00")
}

// TestCommandAgentGitTrapsRefused: an agent CLI leaves a .git alias or a
// .gitmodules whose url runs a command on the user's next submodule
// update; the task fails with a reason naming the path, the branch in the
// user's repository holds none of it, and the user's git checks the
// repository and a checkout of the branch without complaint. On the old
// code each was published and the checkout failed.
func TestCommandAgentGitTrapsRefused(t *testing.T) {
	for _, tc := range []struct{ name, path, script string }{
		{"trailing space", ".git /", `mkdir -p ".git /hooks" && printf '#!/bin/sh\necho pwned\n' > ".git /hooks/post-checkout"`},
		{"trailing dot", ".git./", `mkdir .git. && echo '[core]' > .git./config`},
		{"short name", "git~1/", `mkdir git~1 && echo '[core]' > git~1/config`},
		{"upload-pack url", ".gitmodules", `printf '[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch /tmp/pwned\n' > .gitmodules`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := agentRepo(t, tc.script)
			r := statgraph(t, repo, "run", "tasks.json")
			assert.NotEqual(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			task := readTasks(t, filepath.Join(repo, "tasks.json"))["1"]
			assert.Equal(t, "failed", task.Status)
			assert.Contains(t, task.StatusReason, "commit refused: "+strconv.Quote(tc.path))
			for _, f := range branchFiles(t, repo) {
				assert.Contains(t, []string{"README.md", "tasks.json"}, f, "only the base is on the branch")
			}
			gittest.Git(t, repo, "fsck", "--full", "--strict")
			if files := branchFiles(t, repo); files != nil {
				clone := filepath.Join(t.TempDir(), "clone")
				gittest.Git(t, repo, "clone", "-q", repo, clone)
				gittest.Git(t, clone, "checkout", "-q", planOf(t, repo, "tasks.json", "").Branch("1"))
			}
		})
	}
}

// TestCommandAgentLargeFileStaysBounded: an agent CLI leaves a 2 GiB
// sparse file. statgraph fails the task naming it, publishes nothing of
// it, and its peak RSS (the child's, from wait4) stays under 200 MB: the
// file is refused from its size, never read. The old code read it whole
// (several GB of RSS) and committed it.
func TestCommandAgentLargeFileStaysBounded(t *testing.T) {
	repo := agentRepo(t, `truncate -s 2G big.bin && echo small > small.txt`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, repo, "run", "tasks.json")
	r := wait(t, cmd.Run(), stdout, stderr)
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024 // kilobytes on Linux
	t.Logf("peak RSS of statgraph run: %.1f MB", float64(rss)/1e6)
	assert.Less(t, rss, int64(200e6), "statgraph's peak RSS")
	assert.NotEqual(t, 0, r.code)
	task := readTasks(t, filepath.Join(repo, "tasks.json"))["1"]
	assert.Equal(t, "failed", task.Status)
	assert.Contains(t, task.StatusReason, `"big.bin": the file is 2.0 GiB, over the cap of 100.0 MiB per file (limits.file_bytes in tasks.json)`)
	assert.NotContains(t, branchFiles(t, repo), "big.bin")
}

// TestCommandAgentManyFilesRefused: an agent CLI leaves 100,000 files;
// the task fails naming the file that passed the cap of files per attempt
// and none of them is published. The old code committed and published
// all of them.
func TestCommandAgentManyFilesRefused(t *testing.T) {
	repo := agentRepo(t, `mkdir many && cd many && seq 1 100000 | xargs touch`)
	r := statgraph(t, repo, "run", "tasks.json")
	assert.NotEqual(t, 0, r.code)
	task := readTasks(t, filepath.Join(repo, "tasks.json"))["1"]
	assert.Equal(t, "failed", task.Status)
	assert.Regexp(t, `commit refused: "many/\d+": the attempt adds or changes more than 2000 files, the cap per attempt \(limits.write_files in tasks.json\)`, task.StatusReason)
	published := 0
	for _, f := range branchFiles(t, repo) {
		if strings.HasPrefix(f, "many/") {
			published++
		}
	}
	assert.Zero(t, published, "files of many/ on the branch")
}

// osc52 is a terminal escape that writes "pwned" to the clipboard.
const osc52 = "\x1b]52;c;cHduZWQ=\x07"

// TestHistoryShowsEveryNameAndEscapesTerminalSequences: task 1's agent CLI
// prints an OSC 52 clipboard write and writes one into a file; task 2's
// leaves a file whose name holds a control character. history prints
// both tasks' diffs (task 2's refused work as the workspace's
// uncommitted work, its name quoted as git quotes it) with no raw escape
// sequence; --json carries them. The old code printed the sequence raw and
// showed task 2's committed name with no diff at all.
func TestHistoryShowsEveryNameAndEscapesTerminalSequences(t *testing.T) {
	plan, err := json.Marshal(map[string]any{"tasks": []any{
		map[string]any{"id": 1, "title": "osc", "max_retries": 1, "test_cmd": "true",
			"executor": map[string]any{"command": []string{"sh", "-c", fmt.Sprintf(`printf 'clip %%s end\n' '%s' > osc.txt; printf 'did it %%s\n' '%s'`, osc52, osc52)}}},
		map[string]any{"id": 2, "title": "ctl", "max_retries": 1, "test_cmd": "true",
			"executor": map[string]any{"command": []string{"sh", "-c", `printf 'new\n' > "$(printf 'ctl\001name.txt')"; echo changed >> README.md`}}},
	}})
	require.NoError(t, err)
	repo := newRepo(t, map[string]string{"README.md": "a repository\n", "tasks.json": string(plan)})
	r := statgraph(t, repo, "run", "tasks.json")
	assert.NotContains(t, r.stdout+r.stderr, "\x1b]52", "run's own output")
	assert.Equal(t, "done", readTasks(t, filepath.Join(repo, "tasks.json"))["1"].Status)
	two := readTasks(t, filepath.Join(repo, "tasks.json"))["2"]
	assert.Equal(t, "failed", two.Status)
	assert.Contains(t, two.StatusReason, `commit refused: "ctl\x01name.txt"`)

	one := statgraph(t, repo, "history", "1")
	require.Equal(t, 0, one.code, one.stderr)
	assert.NotContains(t, one.stdout, "\x1b", "no raw escape in history")
	assert.Contains(t, one.stdout, `+clip \x1b]52;c;cHduZWQ=\a end`)

	h := statgraph(t, repo, "history", "2")
	require.Equal(t, 0, h.code, h.stderr)
	assert.NotContains(t, h.stdout, "\x01")
	assert.Contains(t, h.stdout, "diff --git \"a/ctl\\001name.txt\" \"b/ctl\\001name.txt\"")
	assert.Contains(t, h.stdout, "+changed", "the rest of the diff shows too")

	j := statgraph(t, repo, "history", "--json", "2")
	require.Equal(t, 0, j.code, j.stderr)
	var doc struct {
		Uncommitted string `json:"uncommitted"`
	}
	require.NoError(t, json.Unmarshal([]byte(j.stdout), &doc))
	assert.Contains(t, doc.Uncommitted, "+++ \"b/ctl\\001name.txt\"\n@@ -0,0 +1 @@\n+new\n")
}

// TestIntegrateLeftOutSaysWhy: task 1's published branch holds a name the
// integration cannot check out (a control character, as a branch
// published before statgraph refused them did), so --integrate publishes
// nothing; every task it leaves out says why. The old code printed
// "left out: " with nothing after it.
func TestIntegrateLeftOutSaysWhy(t *testing.T) {
	repo := agentRepo(t, `echo work > work.txt`)
	r := statgraph(t, repo, "run", "--plain", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	branch := planOf(t, repo, "tasks.json", "").Branch("1")
	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Git(t, repo, "clone", "-q", "-b", branch, repo, clone)
	gittest.Git(t, clone, "commit", "-q", "--allow-empty", "-m", "x")
	gittest.Git(t, clone, "rm", "-q", "work.txt")
	require.NoError(t, os.WriteFile(filepath.Join(clone, "ctl\x01name"), []byte("x\n"), 0o644))
	gittest.Git(t, clone, "add", "-A")
	gittest.Git(t, clone, "commit", "-q", "-m", "a name with a control character")
	gittest.Git(t, clone, "push", "-q", "origin", branch)

	r = statgraph(t, repo, "run", "--plain", "--integrate", "integrated", "tasks.json")
	assert.NotEqual(t, 0, r.code)
	assert.NotContains(t, r.stdout, "\x01")
	var left []string
	for l := range strings.Lines(r.stdout) {
		if _, reason, ok := strings.Cut(l, "left out:"); ok {
			left = append(left, strings.TrimSpace(reason))
		}
	}
	require.Len(t, left, 1, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, left[0], "not integrated, nothing was published: ")
	assert.Contains(t, left[0], `ctl\x01name`)
	assert.NotContains(t, gittest.Git(t, repo, "branch", "--list", "integrated"), "integrated")
}
