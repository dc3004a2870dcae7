package tasks

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Status values a task can have. The first eight are claude-task-master's
// (StatusCompleted is tm-core's spelling of done, StatusReview marks work
// waiting for a person's review); StatusFailed and StatusInterrupted are
// written by statgraph, as is StatusParked. A task without a status is pending.
const (
	StatusPending     = "pending"
	StatusInProgress  = "in-progress"
	StatusDone        = "done"
	StatusCompleted   = "completed"
	StatusReview      = "review"
	StatusFailed      = "failed"
	StatusBlocked     = "blocked"
	StatusCancelled   = "cancelled"
	StatusDeferred    = "deferred"
	StatusInterrupted = "interrupted"
	// StatusParked: a usage or rate limit of the task's model provider
	// stopped it until parked_until; the run that parked it (or the next
	// run or resume) continues it then, with no retry used.
	StatusParked = "parked"
)

// statuses lists every known status in the order messages show them.
var statuses = []string{
	StatusPending, StatusInProgress, StatusDone, StatusCompleted, StatusReview, StatusFailed,
	StatusBlocked, StatusCancelled, StatusDeferred, StatusInterrupted, StatusParked,
}

// ValidStatus reports whether s is a status statgraph knows; the empty
// string is valid and means pending. A file may hold other statuses: Load
// warns about them, and such a task does not run.
func ValidStatus(s string) bool {
	if s == "" {
		return true
	}
	for _, v := range statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Statuses returns every status ValidStatus accepts (besides ""), in the
// order messages show them; the slice is the caller's.
func Statuses() []string { return append([]string(nil), statuses...) }

// IsDone reports whether a task with status s counts as finished for the
// tasks that depend on it: done, or tm-core's completed.
func IsDone(s string) bool { return s == StatusDone || s == StatusCompleted }

// On-exhausted policies: what happens when a task has used all its retries.
const (
	OnExhaustedFail = "fail" // the task ends failed (the default)
	OnExhaustedAsk  = "ask"  // the CLI asks retry, skip or abort
)

// LandSerial is the one value of a task's "land": the task never runs at
// the same time as another unit (see Task.Land).
const LandSerial = "serial"

// DefaultTag is the claude-task-master tag used when none is chosen.
const DefaultTag = "master"

// File is a loaded tasks.json. Load and Parse return it only when the file
// is valid. Tasks hold the effective settings (a task's own values, else its
// parent's, else Defaults'); write-back changes only the fields statgraph
// owns and keeps everything else as it was read.
//
// A File is safe for concurrent use through its methods. The exported fields
// are a snapshot taken at load time, replaced when Save takes in the user's
// edits: read them before starting goroutines that call the setters and
// Save, or read a task through Task, which locks.
type File struct {
	Path     string   // the path given to Load, or the name given to Parse
	Raw      []byte   // the bytes read, including any BOM
	Tagged   bool     // the file has the tagged form {"<tag>": {"tasks": [...]}}
	Tag      string   // the tag in use when Tagged, else ""
	Defaults Defaults // the top-level defaults (merged with the tag's own in the tagged form)
	Tasks    []Task   // top-level tasks in file order, subtasks nested
	// Warnings lists what is odd in the file but does not stop a run: an
	// unknown status (the task does not run), problems confined to tasks
	// that will not run (a cycle or duplicate ids among done tasks), a
	// dependency on a task of another tag, and a problem confined to one
	// task (duplicate ids among its subtasks, a dependency on itself, its
	// parent or its own subtask, a cycle among its subtasks); those last
	// two block the task (Unit.Hold). Sorted by position.
	Warnings []Problem

	mu     sync.Mutex        // guards everything below, and the tasks reachable from byID
	root   *node             // the whole document; setters edit it in place
	bom    bool              // the file started with a UTF-8 byte order mark
	indent string            // indentation unit for write-back
	eol    bool              // the file ended with a newline
	byID   map[string]*Task  // every task and subtask by full id
	tagArg string            // the tag given to Load or Parse, to read the file again
	disk   []byte            // the file's bytes as last read or written, to tell the user's edits
	dirty  map[string]bool   // tasks whose owned fields changed since the last Save
	notes  []string          // lines for TakeNotes
	gen    int               // see Generation
	holds  map[string]string // unit id -> why it cannot run whatever its dependencies do
}

// Defaults holds the statgraph fields a task may leave out. A zero field
// leaves the built-in default in place.
type Defaults struct {
	MaxRetries   *int
	TestCmd      Command
	LintCmd      Command
	SetupCmd     Command
	CopyFiles    []string
	Workdir      string
	Executor     Executor
	Model        string
	OnExhausted  string
	BudgetTokens *int
	BudgetUSD    *float64
	Checks       []Check
	Review       *bool
	ApprovePlan  *bool
	Sandbox      SandboxSettings
	// Timeout is the task's deadline, per run; RequestTimeout bounds each
	// model request. 0 leaves the CLI's (or dispatch.Dispatcher's) value in place.
	Timeout, RequestTimeout time.Duration
	Limits                  Limits
	Land                    string
	Attempts                *int
	Candidates              []Candidate
	Judge                   *Judge
	// Prices ("prices", in the defaults object only) price models by
	// name, over the built-in table; nil means none given.
	Prices map[string]Price
	// Notify is defaults' "notify" only (a task has none): the URL a run
	// POSTs its notifications to when --notify gives none; "" for none.
	Notify string
}

// SandboxSettings is a task's "sandbox" object: how its checks, setup_cmd
// and agent CLI are confined. In JSON:
//
//	"sandbox": {"network": ["proxy.golang.org", "*.npmjs.org"], "read": ["~/.m2"], "hide": ["~/work/notes"]}
//
// network false, or absent: the sandbox has a network namespace of its
// own, reaching no host but those an agent CLI's preset declares for its
// model (the agent's only); an array of hosts ("example.com",
// "*.example.com" for the names under it, "host:port", "127.0.0.1:8080"):
// those too, through statgraph's allowlisting HTTP(S) proxy; true: the
// host's network, unconfined. A task's array adds to its defaults'
// (and a subtask's to its parent's); a task's true or false replaces
// them. setup_cmd always has the network, as it installs dependencies.
// read lists more paths (absolute, or "~/..." under the user's home) a
// sandbox may read; hide lists paths it never sees; both add to the
// defaults'.
type SandboxSettings struct {
	// Network is the "network" boolean: nil when absent or an array, then
	// taken from the defaults (closed when they say nothing either).
	Network *bool
	// Hosts is the "network" array, with the inherited hosts.
	Hosts []string
	// Read and Hide are "read" and "hide" as written, with the inherited
	// paths; HomePath expands their "~/".
	Read, Hide []string
}

// NetworkOn reports whether the sandbox keeps the host's network
// ("network": true).
func (s SandboxSettings) NetworkOn() bool { return s.Network != nil && *s.Network }

// merge returns s with what it leaves out taken from base: its network
// setting and hosts when it gives no boolean (hosts added to base's), and
// base's read and hide paths added to its own.
func (s SandboxSettings) merge(base SandboxSettings) SandboxSettings {
	if s.Network == nil {
		s.Network = base.Network
		s.Hosts = union(base.Hosts, s.Hosts)
	}
	s.Read, s.Hide = union(base.Read, s.Read), union(base.Hide, s.Hide)
	return s
}

// union returns a followed by the entries of b not in a; nil when both
// are empty.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, e := range b {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// HomePath returns p with a leading "~/" replaced by home.
func HomePath(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// Task is one entry of tasks.json, or one of its subtasks.
//
// ID is the full id: a top-level task's id as written (3 and "3" both give
// "3"), a subtask's as "<parent>.<local>" (subtask 2 of task 3 is "3.2",
// whether written 2 or "3.2"). Ids are never rewritten, so their JSON form
// survives write-back.
type Task struct {
	ID           string
	LocalID      string // a subtask's id as written, else equal to ID
	Parent       string // the parent's id for a subtask, else ""
	Title        string
	Description  string
	Status       string // one of the Status constants; "" means pending
	Details      string
	TestStrategy string
	Priority     string
	Dependencies []string // as written: ids, or for subtasks sibling local ids
	Subtasks     []Task

	MaxRetries *int // nil: DefaultMaxRetries (see Retries)
	// TestCmd ("test_cmd") and LintCmd ("lint_cmd") are the blocking test
	// and lint checks. A command field is a string, run with sh -c
	// (Command.Shell), or an array of strings, run directly
	// (Argv); absent is the zero Command, meaning none.
	TestCmd, LintCmd Command
	SetupCmd         Command  // run once in each new workspace, e.g. to install dependencies
	CopyFiles        []string // untracked files (e.g. .env) copied into each new workspace
	Workdir          string
	Executor         Executor
	Model            string
	OnExhausted      string // "" means OnExhaustedFail
	BudgetTokens     *int   // nil: no per-task budget
	// BudgetUSD ("budget_usd") is the task's budget in US dollars; nil:
	// none.
	BudgetUSD *float64
	// Checks ("checks") are more commands the verifier runs besides
	// test_cmd and lint_cmd, each with its own enforcement mode:
	//
	//	"checks": [{"name": "race", "cmd": ["go", "test", "-race", "./..."], "kind": "test",
	//	            "mode": "advisory", "timeout": "5m"}]
	//
	// cmd is a string (sh -c) or an array (run directly); kind is "test",
	// "lint" or "other" (default); mode is "blocking" (default: a failure
	// sends the task back to the executor), "advisory" (a failure is
	// recorded as a warning and does not block) or "informational" (shown
	// only); timeout is a Go duration, default 10m, kept in
	// Command.Timeout.
	Checks  []Check
	Review  *bool // true: an advisory LLM review of each passing attempt's diff
	Sandbox SandboxSettings
	// ApprovePlan ("approve_plan") true pauses the task after the planner
	// until an operator approves, edits or rejects its plan.
	ApprovePlan *bool
	// Timeout ("timeout") is how long one run of the task may take, all
	// attempts included; past it the task ends failed with the reason.
	// 0 means dispatch.Dispatcher.TaskTimeout.
	Timeout time.Duration
	// RequestTimeout ("request_timeout") bounds each model request (each
	// attempt of a call). 0 means dispatch.Dispatcher's Model.Timeout.
	RequestTimeout time.Duration
	Limits         Limits // "limits": caps of each LLM executor attempt
	// Land ("land") is LandSerial or "": a serial task never runs at the
	// same time as another unit. The files a task changes are known only
	// once it ran, so keeping it apart from the tasks whose files overlap
	// its own is done by keeping it apart from all; statgraph land takes
	// every task one at a time anyway.
	Land string
	// Attempts ("attempts") is how many candidates run side by side, each
	// from the same base in its own workspace through its own executor ->
	// verifier loop; nil means one, or one per entry of
	// CandidateSettings (see Candidates). CandidateSettings
	// ("candidates") gives candidate k its own executor or model (see
	// Candidate); Judge ("judge") lets a model choose among passing
	// candidates that tie on warnings. docs/tasks-json.md has the order
	// the winner is chosen by.
	Attempts          *int
	CandidateSettings []Candidate
	Judge             *Judge

	RetryCount   int
	ErrorHistory []string
	FailedAt     *time.Time
	// ParkedUntil ("parked_until", RFC 3339) is when a parked task's
	// usage limit resets; nil unless the status is parked.
	ParkedUntil  *time.Time
	StatusReason string // why statgraph set the status, e.g. "dependency 2 failed"

	Pos Position // where the task's object starts in the file

	obj *node // the task's object in File.root
}

// DefaultMaxRetries is the max_retries of a task that sets none: the
// orchestrator's default (note 002), which a test of the dispatcher holds
// equal to agents.DefaultMaxRetries.
const DefaultMaxRetries = 3

// Retries returns the task's max_retries, or DefaultMaxRetries when unset.
func (t *Task) Retries() int {
	if t.MaxRetries == nil {
		return DefaultMaxRetries
	}
	return *t.MaxRetries
}

// Executor says who does a task's work. In JSON it is the string "llm" (or
// absent), meaning the built-in tool-calling loop against the configured
// model; the name of an agent CLI statgraph knows (one of ExecutorPresets:
// its argv, prompt passing, environment and token reading are built in);
// or an object naming any agent CLI:
//
//	"executor": {"command": ["aider", "--message-file", "{prompt_file}", "--yes"],
//	             "stdin": false, "timeout": "45m", "env": ["AIDER_MODEL", "LANG=C"]}
//
// or {"preset": "claude", "timeout": "1h", "env": [...]} to adjust a preset.
// The command runs directly, never through a shell, in the task's
// workspace; before it runs, the placeholders listed in Placeholders are
// replaced in every argument (see Expand). stdin true gives the agent the
// prompt on its standard input; timeout bounds one run (default 30m); env
// names variables to pass through (NAME, or PREFIX* for every variable
// starting with PREFIX) or sets them (NAME=VALUE). The zero Executor is the
// LLM executor.
type Executor struct {
	Preset  string // a name from ExecutorPresets, or ""
	Command []string
	Stdin   bool
	Timeout time.Duration // 0: the agents package's default (30m)
	Env     []string
}

// ExecutorPresets lists the agent CLIs an executor can name, sorted: the
// names agents.Preset knows, which defines how each is run (a test of the
// dispatcher holds the two lists equal).
var ExecutorPresets = []string{"aider", "claude", "codex", "gemini", "opencode", "qwen"}

// Executor placeholders replaced by Expand.
const (
	PlaceholderPrompt     = "{prompt}"      // the full prompt text, as one argument
	PlaceholderPromptFile = "{prompt_file}" // path of a file holding the full prompt
	PlaceholderWorkdir    = "{workdir}"     // absolute path of the task's workspace
	PlaceholderAttempt    = "{attempt}"     // attempt number, starting at 1
	PlaceholderTaskID     = "{task_id}"     // the task's full id
)

// Placeholders lists the placeholders an executor command may use.
var Placeholders = []string{PlaceholderPrompt, PlaceholderPromptFile, PlaceholderWorkdir, PlaceholderAttempt, PlaceholderTaskID}

// IsLLM reports whether e is the built-in LLM executor.
func (e Executor) IsLLM() bool { return e.Preset == "" && len(e.Command) == 0 }

// String returns "llm", the preset's name, or the command line.
func (e Executor) String() string {
	switch {
	case e.IsLLM():
		return "llm"
	case e.Preset != "":
		return e.Preset
	}
	return strings.Join(e.Command, " ")
}

// Task returns a copy of the task or subtask with the given full id, as
// last set through the File's setters. It is safe to call concurrently with
// them. The copy's Subtasks still share memory with the File; read a
// subtask through Task with its own id.
func (f *File) Task(id string) (Task, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.byID[id]
	if !ok {
		return Task{}, false
	}
	return *t, true
}
