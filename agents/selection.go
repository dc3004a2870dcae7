package agents

// Selection is the record of a best-of-N task (tasks.json "attempts"):
// its candidates side by side, the one chosen, and why. It is kept in the
// task's own state (TaskState.Selection), whose other fields are the
// winner's, so history, the web UI and MCP read it where they read the
// task.
type Selection struct {
	// Winner is the number of the chosen candidate (1-based); 0 when none
	// passed its blocking checks.
	Winner int `json:"winner"`
	// Why says by which rule the winner was chosen: "only passing
	// candidate", "fewest warnings", "judge", "smallest diff", or "picked
	// by a person" (statgraph pick).
	Why        string      `json:"why,omitempty"`
	Candidates []Candidate `json:"candidates"`
	// Judge holds the model judge's rounds, in the order they were played.
	Judge []JudgeRound `json:"judge,omitempty"`
}

// Candidate is one candidate of a best-of-N task as it ended.
type Candidate struct {
	K        int    `json:"k"`
	Branch   string `json:"branch,omitempty"` // statgraph/<plan>/<id>@<k>, where its work is published
	Thread   string `json:"thread"`           // its checkpoint thread in the run store
	Executor string `json:"executor"`         // "llm", a preset or a command line
	Model    string `json:"model,omitempty"`
	// Status is the tasks.json status the candidate ended with (done,
	// failed, interrupted), or "cancelled" when it was stopped because
	// another candidate had won.
	Status    string `json:"status"`
	Reason    string `json:"reason,omitempty"`
	Passed    bool   `json:"passed"`
	Warnings  int    `json:"warnings"`   // advisory findings of its last verification
	DiffLines int    `json:"diff_lines"` // lines added and removed against the task's base
	Attempts  int    `json:"attempts"`   // verifications it made
	Tokens    int    `json:"tokens"`
	Commit    string `json:"commit,omitempty"` // the tip of its branch
}

// JudgeRound is one match of the judge's tournament: candidates A and B
// compared against the task, the winner, and the model's reasoning.
type JudgeRound struct {
	A         int    `json:"a"`
	B         int    `json:"b"`
	Winner    int    `json:"winner"`
	Reasoning string `json:"reasoning"`
}
