package main

import (
	"flag"
	"math"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/tasks"
)

// runFlags are the flags that set up a run, shared by run (and resume),
// serve and mcp: a run started from the web UI or by an assistant is set
// up as one started in a terminal (control.RunOptions).
type runFlags struct {
	jobs, budget   int
	attempts       int
	budgetUSD      float64
	model, allow   string
	prices         string
	requestTimeout time.Duration
	taskTimeout    time.Duration
	parkMax        time.Duration
	parkAfter      time.Duration
	parkDefault    time.Duration
	maxResponse    int64
	noSandbox      bool
	keep           bool
	notify         control.Notify
}

func (r *runFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&r.jobs, "j", 0, "tasks to run at once (default: number of CPUs)")
	fs.StringVar(&r.model, "model", "", "model name for the LLM planner and executor (default $STATGRAPH_MODEL)")
	fs.IntVar(&r.attempts, "attempts", 0, "candidates per task, side by side, the best one chosen (best-of-N; default 1; a task's \"attempts\" or \"candidates\" wins)")
	fs.IntVar(&r.budget, "budget", 0, "global token budget for each run (0 = unlimited)")
	fs.Float64Var(&r.budgetUSD, "budget-usd", 0, "global budget for each run in US dollars, e.g. 5; once spent no task starts and the rest stay pending with the reason (0 = unlimited)")
	fs.StringVar(&r.prices, "prices", "", "JSON file of model prices in dollars per million tokens, {\"model\": {\"input\", \"cached_input\", \"output\"}}, over the built-in table and tasks.json's defaults.prices")
	fs.DurationVar(&r.requestTimeout, "request-timeout", 0, "bound on each model request, e.g. 30s; a request past it is given up on and retried (default 2m; a task's request_timeout wins)")
	fs.DurationVar(&r.taskTimeout, "task-timeout", 0, "deadline of each task's run, e.g. 20m; a task past it ends failed (default none; a task's timeout wins)")
	fs.DurationVar(&r.parkMax, "park-max", 0, "longest a run waits for a usage limit's reset with a task parked, e.g. 8h; a reset further away ends the task interrupted (default 24h)")
	fs.DurationVar(&r.parkDefault, "park-default", 0, "how long a usage limit with no reset time (an agent CLI giving up on a bare HTTP 429) parks the task, e.g. 30m; at most --park-max (default 15m)")
	fs.DurationVar(&r.parkAfter, "park-after", 0, "a rate limit (HTTP 429) asking to wait longer than this parks the task until its reset instead of waiting inside the call (default 30s)")
	fs.Int64Var(&r.maxResponse, "max-response-bytes", 0, "cap on one model response's bytes; a larger one fails the task (default 4 MiB; a task's limits.response_bytes wins)")
	fs.BoolVar(&r.noSandbox, "no-sandbox", false, "run checks and agent CLIs without the bubblewrap sandbox (unprotected: see docs/sandbox-and-secrets.md)")
	fs.StringVar(&r.allow, "allow-env", "", "comma-separated environment variables (NAME or PREFIX*) to pass to agent CLIs besides those their preset or \"env\" names (e.g. MY_AGENT_CONFIG); checks never see them. For serve and mcp, also all that a task added through them may name in its \"env\"")
	fs.BoolVar(&r.keep, "keep-workspaces", false, "keep each finished task's workspace (default: removed once its branch is published)")
	fs.StringVar(&r.notify.URL, "notify", "", "POST a JSON summary (with a Slack-compatible \"text\") to `URL` when the run ends and when a task asks a question (default: tasks.json defaults.notify)")
	fs.StringVar(&r.notify.Cmd, "notify-cmd", "", "run the shell `command` CMD for each notification instead, with the JSON on its standard input")
}

// options returns the run settings the flags give: the model from the
// environment (llm.ConfigFromEnv) unless --model names one, and this
// binary as the sandbox's build-cache server and network bridge. A negative duration or size
// is a usage error. Tracer and Log are the caller's to set.
func (r *runFlags) options() (control.RunOptions, error) {
	switch {
	case r.requestTimeout < 0:
		return control.RunOptions{}, usagef("--request-timeout %s: want a positive duration such as 30s, or 0 for the default", r.requestTimeout)
	case r.taskTimeout < 0:
		return control.RunOptions{}, usagef("--task-timeout %s: want a positive duration such as 20m, or 0 for none", r.taskTimeout)
	case r.parkMax < 0:
		return control.RunOptions{}, usagef("--park-max %s: want a positive duration such as 8h, or 0 for the default (24h)", r.parkMax)
	case r.parkDefault < 0:
		return control.RunOptions{}, usagef("--park-default %s: want a positive duration such as 30m, or 0 for the default (15m)", r.parkDefault)
	case r.parkAfter < 0:
		return control.RunOptions{}, usagef("--park-after %s: want a positive duration such as 30s, or 0 for the default", r.parkAfter)
	case r.attempts < 0 || r.attempts > tasks.MaxAttempts:
		return control.RunOptions{}, usagef("--attempts %d: want 1 to %d candidates per task, or 0 for one", r.attempts, tasks.MaxAttempts)
	case r.maxResponse < 0:
		return control.RunOptions{}, usagef("--max-response-bytes %d: want a positive number of bytes, or 0 for the default (4 MiB)", r.maxResponse)
	case r.budget < 0:
		return control.RunOptions{}, usagef("--budget %d: want a number of tokens, or 0 for none", r.budget)
	case r.budgetUSD < 0 || math.IsNaN(r.budgetUSD) || math.IsInf(r.budgetUSD, 0):
		return control.RunOptions{}, usagef("--budget-usd %v: want an amount of US dollars such as 5 or 0.50, or 0 for none", r.budgetUSD)
	case r.notify.URL != "" && r.notify.Cmd != "":
		return control.RunOptions{}, usagef("--notify and --notify-cmd: give one; --notify-cmd runs instead of the POST")
	}
	if u, err := url.Parse(r.notify.URL); r.notify.URL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return control.RunOptions{}, usagef("--notify %q: want an http:// or https:// URL, such as a Slack incoming webhook's", r.notify.URL)
	}
	var prices llm.Prices
	if r.prices != "" {
		p, err := llm.ReadPrices(r.prices)
		if err != nil {
			return control.RunOptions{}, usageError{err.Error()}
		}
		prices = p
	}
	mc := llm.ConfigFromEnv()
	if r.model != "" {
		mc.Model = r.model
	}
	mc.Timeout, mc.MaxResponseBytes, mc.ParkAfter = r.requestTimeout, r.maxResponse, r.parkAfter
	o := control.RunOptions{Model: mc, Jobs: r.jobs, Budget: r.budget, BudgetUSD: r.budgetUSD, Prices: prices, NoSandbox: r.noSandbox,
		TaskTimeout: r.taskTimeout, ParkMax: r.parkMax, ParkDefault: r.parkDefault, KeepWorkspaces: r.keep, Attempts: r.attempts, Notify: r.notify}
	if exe, err := os.Executable(); err == nil {
		o.GoCacheProg = []string{exe, goCacheProgCmd}
		o.SandboxProbe = []string{exe, sandboxProbeCmd}
		o.SandboxHelper = []string{exe, sandboxInitCmd}
	}
	for _, name := range strings.Split(r.allow, ",") {
		if name = strings.TrimSpace(name); name != "" {
			o.AllowEnv = append(o.AllowEnv, name)
		}
	}
	return o, nil
}
