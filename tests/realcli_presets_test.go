package tests

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// call builds a tool call of name with args.
func call(name string, args map[string]string) llmtest.Call {
	b, _ := json.Marshal(args)
	return llmtest.Call{Name: name, Arguments: string(b)}
}

// TestClaudeEndToEnd runs the real Claude Code CLI as the "claude" preset
// against the scripted server speaking the Anthropic Messages API
// (ANTHROPIC_BASE_URL): its Write tool makes the edit, its Bash tool runs
// the probe of the environment and the network.
func TestClaudeEndToEnd(t *testing.T) {
	t.Parallel()
	realCLI{
		preset: "claude", bin: "claude", pkg: "@anthropic-ai/claude-code",
		env: func(srv *llmtest.Server) []string {
			return []string{"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-ant-llmtest"}
		},
		key:     "x-api-key: sk-ant-llmtest",
		workdir: regexp.MustCompile(`Primary working directory: (/\S+)`),
		write: func(path, content string) llmtest.Call {
			return call("Write", map[string]string{"file_path": path, "content": content})
		},
		shell: func(command string) llmtest.Call {
			return call("Bash", map[string]string{"command": command, "description": "probe"})
		},
		host: "api.anthropic.com",
	}.run(t)
}

// TestCodexEndToEnd runs the real Codex CLI as the "codex" preset against
// the scripted server speaking the OpenAI Responses API. Codex takes its
// endpoint from ~/.codex/config.toml (a model provider with base_url;
// OPENAI_BASE_URL is not read), so the task allows the server's host in
// its sandbox. Its exec_command tool makes the edit and runs the probe.
func TestCodexEndToEnd(t *testing.T) {
	t.Parallel()
	realCLI{
		preset: "codex", bin: "codex", pkg: "@openai/codex",
		env: func(*llmtest.Server) []string { return []string{"OPENAI_API_KEY=sk-llmtest"} },
		home: map[string]string{".codex/config.toml": `model = "test-model"
model_provider = "llmtest"
[model_providers.llmtest]
name = "llmtest"
base_url = "{URL}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
supports_websockets = false
`},
		sandbox: `{"network": ["{HOSTPORT}"]}`,
		key:     "Bearer sk-llmtest",
		workdir: regexp.MustCompile(`<cwd>(/[^<]+)</cwd>`),
		write: func(path, content string) llmtest.Call {
			return call("exec_command", map[string]string{"cmd": fmt.Sprintf("printf '%%s' '%s' > '%s'", content, path)})
		},
		shell: func(command string) llmtest.Call { return call("exec_command", map[string]string{"cmd": command}) },
		host:  "api.openai.com",
	}.run(t)
}

// TestGeminiEndToEnd runs the real Gemini CLI as the "gemini" preset
// against the scripted server speaking the Gemini API
// (GOOGLE_GEMINI_BASE_URL). With that variable set gemini-cli picks a
// "gateway" login it then refuses ("Invalid auth method selected"), so the
// user's settings select the API key login.
func TestGeminiEndToEnd(t *testing.T) {
	t.Parallel()
	realCLI{
		preset: "gemini", bin: "gemini", pkg: "@google/gemini-cli",
		env: func(srv *llmtest.Server) []string {
			return []string{"GOOGLE_GEMINI_BASE_URL=" + srv.URL(), "GEMINI_API_KEY=gk-llmtest"}
		},
		// A model named in the settings spares the requests that route
		// between models; no update checks or usage statistics offline.
		home: map[string]string{".gemini/settings.json": `{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "model": {"name": "gemini-2.5-pro"}, "general": {"disableAutoUpdate": true}, "privacy": {"usageStatisticsEnabled": false}}`},
		key:     "x-goog-api-key: gk-llmtest",
		workdir: regexp.MustCompile(`Workspace Directories:\*\*\s*-\s*(/\S+)`),
		write: func(path, content string) llmtest.Call {
			return call("write_file", map[string]string{"file_path": path, "content": content})
		},
		shell: func(command string) llmtest.Call {
			return call("run_shell_command", map[string]string{"command": command, "description": "probe"})
		},
		host: "generativelanguage.googleapis.com",
	}.run(t)
}

// TestOpencodeEndToEnd runs the real opencode CLI as the "opencode"
// preset against the scripted server speaking the OpenAI chat API, set
// up as a provider in the user's opencode.json; the task allows the
// server's host in its sandbox.
func TestOpencodeEndToEnd(t *testing.T) {
	t.Parallel()
	realCLI{
		preset: "opencode", bin: "opencode", pkg: "opencode-ai",
		env: func(*llmtest.Server) []string { return []string{"OPENAI_API_KEY=sk-llmtest"} },
		home: map[string]string{".config/opencode/opencode.json": `{"$schema": "https://opencode.ai/config.json",
 "model": "llmtest/test-model",
 "provider": {"llmtest": {"npm": "@ai-sdk/openai-compatible", "name": "llmtest",
   "options": {"baseURL": "{URL}/v1", "apiKey": "{env:OPENAI_API_KEY}"},
   "models": {"test-model": {"name": "test-model"}}}}}
`},
		sandbox: `{"network": ["{HOSTPORT}"]}`,
		key:     "Bearer sk-llmtest",
		workdir: regexp.MustCompile(`Working directory: (/\S+)`),
		write: func(path, content string) llmtest.Call {
			return call("write", map[string]string{"filePath": path, "content": content})
		},
		shell: func(command string) llmtest.Call {
			return call("bash", map[string]string{"command": command})
		},
		host: "api.openai.com",
	}.run(t)
}
