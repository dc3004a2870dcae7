package dispatch

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/tasks"
)

// PreflightTimeout bounds the one request Preflight makes to the model
// server.
const PreflightTimeout = 10 * time.Second

// PreflightError lists what stops a run before it starts, one problem per
// entry, each saying what is wrong, for which task, and what to do.
type PreflightError struct {
	Problems []string
}

// Error lists the problems, one per line.
func (e *PreflightError) Error() string {
	return strings.Join(e.Problems, "\n")
}

// Preflight checks that the setup can run the runnable units of f (those
// pending, in progress or interrupted) before anything is written: a model
// is configured for the units that need one (the LLM executor, "review":
// true); when a model is configured, an API key is set if the endpoint is
// OpenAI's own and the server answers one cheap request (GET <base>/models,
// within PreflightTimeout) without rejecting the key and, when it lists
// its models, lists this one; and each agent CLI (a preset's program, or
// a command's argv[0]) is found on PATH, or, for a path with a slash, in
// the repository repo. It returns a *PreflightError listing every problem,
// or nil. Preflight reads the file and the environment and writes nothing;
// hc nil means http.DefaultClient. It is safe for concurrent use.
func Preflight(ctx context.Context, f *tasks.File, repo string, model llm.Config, hc *http.Client) error {
	var problems, needModel, models []string
	seen := map[string]bool{}
	for _, u := range f.Units() {
		unit, _ := f.Task(u.ID)
		if !tasks.Runnable(unit.Status) {
			continue
		}
		if j := unit.Judge; j != nil && j.On {
			if m := cmp.Or(j.Model, unit.Model, model.Model); m == "" {
				needModel = append(needModel, u.ID)
			} else if !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
		for k := 1; k <= unit.Candidates(); k++ { // each candidate's executor and model
			t := unit.Candidate(k)
			m := cmp.Or(t.Model, model.Model) // a unit with a model plans with it
			if m != "" && !slices.Contains(models, m) {
				models = append(models, m)
			}
			if t.Executor.IsLLM() || (t.Review != nil && *t.Review) {
				if m == "" && !slices.Contains(needModel, u.ID) {
					needModel = append(needModel, u.ID)
				}
				continue
			}
			if p := checkAgentCLI(t, repo); p != "" && !seen[p] {
				seen[p] = true
				problems = append(problems, p)
			}
		}
	}
	if len(needModel) > 0 {
		problems = append(problems, fmt.Sprintf("%s need%s a model but none is configured: pass --model NAME or set STATGRAPH_MODEL "+
			"(with OPENAI_BASE_URL for a local server such as Ollama, and OPENAI_API_KEY if it needs one), "+
			"or give the task an agent CLI as \"executor\" (%s, or {\"command\": [...]})",
			plural("task", needModel), verbS(needModel), strings.Join(tasks.ExecutorPresets, ", ")))
	}
	if len(models) > 0 {
		problems = append(problems, checkModel(ctx, model, models, hc)...)
	}
	if len(problems) > 0 {
		return &PreflightError{Problems: problems}
	}
	return nil
}

// checkAgentCLI returns the problem with task t's agent CLI, or "".
func checkAgentCLI(t tasks.Task, repo string) string {
	prog, install := "", ""
	if t.Executor.Preset != "" {
		c, _ := agents.Preset(t.Executor.Preset)
		prog, install = c.Argv[0], agents.PresetInstall(t.Executor.Preset)
	} else {
		prog = t.Executor.Command[0]
	}
	if !strings.ContainsRune(prog, '/') {
		if _, err := exec.LookPath(prog); err != nil {
			hint := "install it"
			if install != "" {
				hint = "install it (" + install + ")"
			}
			return fmt.Sprintf("task %s: agent CLI %q is not on PATH: %s, or put its directory on PATH, or change the task's \"executor\"", t.ID, prog, hint)
		}
		return ""
	}
	path := prog
	if !filepath.IsAbs(path) {
		path = filepath.Join(repo, filepath.FromSlash(t.Workdir), path)
	}
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("task %s: agent CLI %s not found (%s): commit it to the repository or fix the task's \"executor\"", t.ID, prog, path)
	case st.IsDir() || st.Mode()&0o111 == 0:
		return fmt.Sprintf("task %s: agent CLI %s is not an executable file: chmod +x it and commit it, or fix the task's \"executor\"", t.ID, prog)
	}
	return ""
}

// checkModel asks the model server for its model list and returns the
// problems with the server and with models.
func checkModel(ctx context.Context, cfg llm.Config, models []string, hc *http.Client) []string {
	ids, problem := listModels(ctx, cfg, hc)
	if problem != "" {
		return []string{problem}
	}
	var out []string
	for _, m := range models {
		if p := checkListed(cfg, m, ids); len(ids) > 0 && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// listModels makes the request: it returns the model ids the server lists
// (none when it does not list them) or the problem with the server.
func listModels(ctx context.Context, cfg llm.Config, hc *http.Client) (ids []string, problem string) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Sprintf("OPENAI_BASE_URL %q is not an http(s) URL: set it to the server's /v1 URL, such as http://localhost:11434/v1", cfg.BaseURL)
	}
	if cfg.APIKey == "" && u.Hostname() == "api.openai.com" {
		return nil, "the model endpoint is OpenAI's (" + base + ") and OPENAI_API_KEY is not set: export OPENAI_API_KEY, or set OPENAI_BASE_URL to a server that needs no key (Ollama, vLLM, LM Studio)"
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return nil, fmt.Sprintf("model endpoint %s: %v", base, err)
	}
	if cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		msg := err.Error()
		if cfg.APIKey != "" {
			msg = strings.ReplaceAll(msg, cfg.APIKey, "[REDACTED]")
		}
		return nil, fmt.Sprintf("the model server at %s does not answer (%s): start it, or set OPENAI_BASE_URL to one that runs", base, msg)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Sprintf("the model server at %s rejected the API key (HTTP %d): set OPENAI_API_KEY to a valid key for it", base, resp.StatusCode)
	case resp.StatusCode >= 500:
		return nil, fmt.Sprintf("the model server at %s fails (HTTP %d): check the server, then run again", base, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, "" // it answers; listing models is optional for OpenAI-compatible servers
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil {
		return nil, ""
	}
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, ""
}

// checkListed returns the problem when model is not among ids (Ollama
// also answers "name" for "name:tag"), or "".
func checkListed(cfg llm.Config, model string, ids []string) string {
	for _, id := range ids {
		if id == model || strings.HasPrefix(id, model+":") {
			return ""
		}
	}
	ids = slices.Sorted(slices.Values(ids))
	if len(ids) > 10 {
		ids = append(ids[:10], "...")
	}
	base := cmp.Or(strings.TrimRight(cfg.BaseURL, "/"), "https://api.openai.com/v1")
	return fmt.Sprintf("the model server at %s does not serve model %q (it lists: %s): pass --model with one of them or set STATGRAPH_MODEL", base, model, strings.Join(ids, ", "))
}

func plural(word string, ids []string) string {
	if len(ids) == 1 {
		return word + " " + ids[0]
	}
	return word + "s " + strings.Join(ids, ", ")
}

func verbS(ids []string) string {
	if len(ids) == 1 {
		return "s"
	}
	return ""
}
