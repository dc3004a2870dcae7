package agents

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/statgraph/statgraph/agents/llm"
)

// presets are the agent CLIs statgraph knows how to drive by name. Each
// runs non-interactively in the workspace, edits files and runs commands
// without asking (statgraph's sandbox is the boundary, so the CLI's own
// approvals and sandbox are off), leaves committing to statgraph, and,
// where the CLI has a machine-readable output, reports its tokens through
// it. The claude, codex, gemini, opencode and qwen presets are proven
// against their real CLIs (versions in docs/models-and-agents.md, tests in
// tests/realcli_presets_test.go): claude `-p` reads the prompt from stdin,
// `--output-format json` prints one result object with "result" and
// "usage", and `--permission-mode bypassPermissions` lets it run shell
// commands (acceptEdits refuses them in -p mode); codex `exec --json -`
// reads stdin and prints JSON Lines whose "turn.completed" events carry
// "usage", and `--dangerously-bypass-approvals-and-sandbox` is its mode for
// an external sandbox (its own cannot nest in statgraph's); gemini
// `--prompt`, `--yolo`, `--skip-trust` (else a fresh workspace is
// untrusted and yolo is dropped), `--output-format json` prints
// {"response", "stats": {"models": {m: {"tokens": {...}}}}}; qwen is a
// fork of gemini-cli that reads the prompt from stdin and whose -o json
// prints a JSON array of claude-style events ending in a "result" with
// "usage", configured through OPENAI_BASE_URL, OPENAI_API_KEY and
// OPENAI_MODEL; opencode `run --format json` prints JSON Lines whose
// "step_finish" parts carry "tokens". aider (not on npm, so not proven)
// `--message-file` runs one message and exits, `--yes-always`,
// `--no-auto-commits` (aider.chat/docs/scripting.html), and reports
// tokens only in its "Tokens: ... sent, ... received." lines. HomeConfig
// names where each keeps its login and settings under HOME, copied into
// its private home in the sandbox; Hosts the API and login hosts of its
// providers (opencode's also models.dev, where it reads its model list),
// the only ones its sandbox reaches besides its base URL's.
var presets = map[string]CommandExecutor{
	"claude": {
		Argv:       []string{"claude", "-p", "--output-format", "json", "--permission-mode", "bypassPermissions"},
		Stdin:      true,
		Env:        []string{"ANTHROPIC_*", "CLAUDE_*", "AWS_*", "GOOGLE_APPLICATION_CREDENTIALS", "CLOUD_ML_REGION"},
		Usage:      claudeUsage,
		Limit:      claudeLimit,
		HomeConfig: []string{".claude", ".claude.json"},
		Hosts:      []string{"api.anthropic.com", "statsig.anthropic.com", "console.anthropic.com", "claude.ai"},
	},
	"codex": {
		Argv:       []string{"codex", "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "-"},
		Stdin:      true,
		Env:        []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_*"},
		Usage:      codexUsage,
		Limit:      codexLimit,
		HomeConfig: []string{".codex"},
		Hosts:      []string{"api.openai.com", "chatgpt.com", "auth.openai.com"},
	},
	"aider": {
		Argv:  []string{"aider", "--yes-always", "--no-auto-commits", "--no-check-update", "--no-pretty", "--no-stream", "--message-file", "{prompt_file}"},
		Usage: aiderUsage,
		Env: []string{"AIDER_*", "OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
			"GEMINI_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "OLLAMA_API_BASE"},
		HomeConfig: []string{".aider.conf.yml"},
		Hosts:      []string{"api.openai.com", "api.anthropic.com", "openrouter.ai", "generativelanguage.googleapis.com", "api.deepseek.com"},
	},
	"gemini": {
		Argv:       []string{"gemini", "--skip-trust", "--yolo", "--output-format", "json", "--prompt", "{prompt}"},
		Env:        []string{"GEMINI_*", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS"},
		Usage:      geminiUsage,
		Limit:      geminiLimit,
		LiveLimit:  geminiLiveLimit,
		HomeConfig: []string{".gemini"},
		Hosts:      []string{"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"},
	},
	"qwen": {
		Argv:       []string{"qwen", "--yolo", "--output-format", "json"},
		Stdin:      true,
		Env:        []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "QWEN_*", "DASHSCOPE_API_KEY"},
		Usage:      claudeUsage,
		Limit:      qwenLimit,
		HomeConfig: []string{".qwen"},
		Hosts:      []string{"dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com", "portal.qwen.ai", "chat.qwen.ai"},
	},
	"opencode": {
		Argv:       []string{"opencode", "run", "--format", "json", "--print-logs", "--log-level", "WARN", "{prompt}"},
		Env:        []string{"OPENCODE_*", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY"},
		Usage:      opencodeUsage,
		Limit:      opencodeLimit,
		LiveLimit:  opencodeLiveLimit,
		HomeConfig: []string{".config/opencode", ".local/share/opencode"},
		Hosts:      []string{"models.dev", "opencode.ai", "api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com", "openrouter.ai", "api.groq.com"},
	},
}

// PresetNames returns the names Preset knows, sorted. It is safe for
// concurrent use, as are Preset and PresetInstall.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Preset returns a CommandExecutor set up for the named agent CLI (one of
// PresetNames): its argv, how it takes the prompt, the environment
// variables it needs, and how to read its token usage. The caller fills in
// Workdir, PromptDir, Timeout, Budget and Workspace, and may append to Env.
// ok is false for an unknown name. The result shares nothing with other
// calls' results.
func Preset(name string) (CommandExecutor, bool) {
	p, ok := presets[name]
	p.Argv, p.Env, p.HomeConfig, p.Hosts = slices.Clone(p.Argv), slices.Clone(p.Env), slices.Clone(p.HomeConfig), slices.Clone(p.Hosts)
	return p, ok
}

// jsonObjects yields the JSON objects in out: every line that is an
// object, or the elements of a line that is an array of them, and a
// pretty-printed object from a line "{" to a line "}" (agents print one
// object, JSON Lines, an array or an indented document; stderr is mixed
// in, so the output as a whole is rarely valid JSON).
func jsonObjects(out string, yield func([]byte)) {
	if whole := strings.TrimSpace(out); strings.HasPrefix(whole, "{") && json.Valid([]byte(whole)) {
		yield([]byte(whole))
		return
	}
	var block strings.Builder // a pretty-printed object so far
	inBlock := false
	for l := range strings.Lines(out) {
		if r := strings.TrimRight(l, " \t\r\n"); r == "{" || inBlock {
			inBlock = true
			block.WriteString(l)
			if r == "}" {
				if b := []byte(block.String()); json.Valid(b) {
					yield(b)
				}
				block.Reset()
				inBlock = false
			}
			continue
		}
		l = strings.TrimSpace(l)
		var elems []json.RawMessage
		switch {
		case strings.HasPrefix(l, "{") && json.Valid([]byte(l)):
			yield([]byte(l))
		case strings.HasPrefix(l, "[") && json.Unmarshal([]byte(l), &elems) == nil:
			for _, e := range elems {
				yield(e)
			}
		}
	}
}

// claudeUsage reads claude's (and qwen's) result object: {"type":
// "result", "result": "...", "total_cost_usd": 0.0123, "usage":
// {"input_tokens", "output_tokens", "cache_*"}}; cache reads are cached
// input tokens, and total_cost_usd, when present, is the cost. qwen prints
// it as the last element of an array on one line, which may be too long
// to keep whole, so the last result object is also looked for on its own.
func claudeUsage(out string) (u llm.Usage, final string, ok bool) {
	var r struct {
		Type   string   `json:"type"`
		Result string   `json:"result"`
		Cost   *float64 `json:"total_cost_usd"`
		Usage  *struct {
			In         int `json:"input_tokens"`
			Out        int `json:"output_tokens"`
			CacheRead  int `json:"cache_read_input_tokens"`
			CacheWrite int `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	}
	use := func() (llm.Usage, string, bool) {
		in := r.Usage.In + r.Usage.CacheRead + r.Usage.CacheWrite
		u := llm.Usage{Prompt: in, Cached: r.Usage.CacheRead, Completion: r.Usage.Out, Total: in + r.Usage.Out}
		return reported(u, r.Cost), r.Result, true
	}
	if i := strings.LastIndex(out, `{"type":"result"`); i >= 0 {
		if json.NewDecoder(strings.NewReader(out[i:])).Decode(&r) == nil && r.Usage != nil {
			return use()
		}
	}
	jsonObjects(out, func(obj []byte) {
		r.Usage, r.Cost = nil, nil
		if json.Unmarshal(obj, &r) == nil && r.Type == "result" && r.Usage != nil {
			u, final, ok = use()
		}
	})
	return u, final, ok
}

// reported returns u with the cost an agent reported, or, when it
// reported none (cost nil), with all its tokens unpriced.
func reported(u llm.Usage, cost *float64) llm.Usage {
	if cost == nil {
		u.Unpriced = u.Tokens()
		return u
	}
	u.CostUSD = *cost
	return u
}

// codexUsage sums the "usage" of codex's "turn.completed" events
// (input_tokens, of them cached_input_tokens, and output_tokens; codex
// reports no cost) and keeps the text of its last "agent_message" item.
func codexUsage(out string) (u llm.Usage, final string, ok bool) {
	defer func() { u = reported(u, nil) }()
	jsonObjects(out, func(obj []byte) {
		var e struct {
			Type  string `json:"type"`
			Usage struct {
				In     int `json:"input_tokens"`
				Cached int `json:"cached_input_tokens"`
				Out    int `json:"output_tokens"`
			} `json:"usage"`
			Item struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
		}
		if json.Unmarshal(obj, &e) != nil {
			return
		}
		switch {
		case e.Type == "turn.completed":
			u.Prompt += e.Usage.In
			u.Cached += e.Usage.Cached
			u.Completion += e.Usage.Out
			u.Total += e.Usage.In + e.Usage.Out
			ok = true
		case e.Type == "item.completed" && e.Item.Type == "agent_message":
			final = e.Item.Text
		}
	})
	return u, final, ok
}

// geminiUsage reads gemini's (and qwen's) JSON result: {"response": "...",
// "stats": {"models": {"<model>": {"tokens": {"prompt", "candidates",
// "total", "cached"}}}}}, summed over the models; gemini reports no cost.
func geminiUsage(out string) (u llm.Usage, final string, ok bool) {
	defer func() { u = reported(u, nil) }()
	jsonObjects(out, func(obj []byte) {
		var r struct {
			Response string `json:"response"`
			Stats    *struct {
				Models map[string]struct {
					Tokens struct {
						Prompt     int `json:"prompt"`
						Candidates int `json:"candidates"`
						Total      int `json:"total"`
						Cached     int `json:"cached"`
					} `json:"tokens"`
				} `json:"models"`
			} `json:"stats"`
		}
		if json.Unmarshal(obj, &r) != nil || r.Stats == nil {
			return
		}
		for _, s := range r.Stats.Models {
			u.Prompt += s.Tokens.Prompt
			u.Cached += min(s.Tokens.Cached, s.Tokens.Prompt)
			u.Completion += s.Tokens.Candidates
			t := s.Tokens.Total
			if t == 0 {
				t = s.Tokens.Prompt + s.Tokens.Candidates
			}
			u.Total += t
		}
		final, ok = r.Response, true
	})
	return u, final, ok
}

// opencodeUsage sums the "tokens" and "cost" of opencode's "step_finish"
// events and keeps its last "text" part. Its cost counts only when every
// step reports one.
func opencodeUsage(out string) (u llm.Usage, final string, ok bool) {
	var cost float64
	costed := true
	defer func() {
		if costed {
			u = reported(u, &cost)
		} else {
			u = reported(u, nil)
		}
	}()
	jsonObjects(out, func(obj []byte) {
		var e struct {
			Type string `json:"type"`
			Part struct {
				Text   string   `json:"text"`
				Cost   *float64 `json:"cost"`
				Tokens struct {
					Input  int `json:"input"`
					Output int `json:"output"`
					Total  int `json:"total"`
				} `json:"tokens"`
			} `json:"part"`
		}
		if json.Unmarshal(obj, &e) != nil {
			return
		}
		switch e.Type {
		case "step_finish":
			t := e.Part.Tokens
			u.Prompt += t.Input
			u.Completion += t.Output
			if t.Total == 0 {
				t.Total = t.Input + t.Output
			}
			u.Total += t.Total
			if e.Part.Cost != nil {
				cost += *e.Part.Cost
			} else {
				costed = false
			}
			ok = true
		case "text":
			final = e.Part.Text
		}
	})
	return u, final, ok
}

// aiderTokens matches aider's report of one message's tokens, "Tokens:
// 2.3k sent, 108 received." (with "N cache write" and "N cache hit"
// between when the provider caches).
var aiderTokens = regexp.MustCompile(`Tokens: ([0-9.]+[kM]?) sent,(?: [0-9.]+[kM]? cache (?:write|hit),)* ([0-9.]+[kM]?) received\.`)

// aiderUsage sums aider's "Tokens: ... sent, ... received." lines, the one
// report of usage it prints (it has no machine-readable output). Aider
// rounds what it prints (1.2k, 15k, 1.5M), so the sums are as exact as
// those; the final message is not reported. Its "Cost: $0.00" lines are
// rounded to cents, so its tokens are left unpriced (priced by the task's
// "model" when it has a price).
func aiderUsage(out string) (u llm.Usage, final string, ok bool) {
	defer func() { u = reported(u, nil) }()
	for _, m := range aiderTokens.FindAllStringSubmatch(out, -1) {
		in, okIn := aiderCount(m[1])
		outTok, okOut := aiderCount(m[2])
		if !okIn || !okOut {
			continue
		}
		u.Prompt += in
		u.Completion += outTok
		u.Total += in + outTok
		ok = true
	}
	return u, "", ok
}

// aiderCount reads a count as aider prints it: 80, 1.2k, 15k, 1.5M.
func aiderCount(s string) (int, bool) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return int(math.Round(f * mult)), true
}

// presetCosts names the presets whose CLI reports its own cost
// (claude's total_cost_usd, opencode's step costs).
var presetCosts = map[string]bool{"claude": true, "opencode": true}

// PresetReportsCost reports whether the named preset's CLI reports what
// its run cost; the others report tokens only (or nothing, aider).
func PresetReportsCost(name string) bool { return presetCosts[name] }

// presetInstall says how to install each preset's CLI.
var presetInstall = map[string]string{
	"claude":   "npm install -g @anthropic-ai/claude-code",
	"codex":    "npm install -g @openai/codex",
	"aider":    "python -m pip install aider-install && aider-install",
	"gemini":   "npm install -g @google/gemini-cli",
	"qwen":     "npm install -g @qwen-code/qwen-code",
	"opencode": "npm install -g opencode-ai",
}

// PresetInstall returns the command that installs the named preset's CLI,
// or "" for an unknown name.
func PresetInstall(name string) string { return presetInstall[name] }
