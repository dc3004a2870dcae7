// Package agents is statgraph's autonomous coding loop: the orchestrator
// graph that takes one task through planner -> executor -> verifier and
// routes with should_retry_or_end, and the agents that fill those roles.
//
// The graph (Build, NewGraph) keeps the semantics of design note 002
// exactly: the verifier increments RetryCount on every verification and,
// when the verification fails, appends "Retry k: <errors>" to ErrorHistory
// (k being RetryCount before the increment); ShouldRetryOrEnd routes to done
// when the blocking checks pass, to the failed node when RetryCount >=
// MaxRetries, and back to the executor otherwise, with the verifier's
// feedback in the state. It decides with the task's gate.Policy, the one
// package statgraph/gate's gates use. The failed node sets Phase "failed"
// and FailedAt and prints "task <id> FAILED after N attempts" (a run that
// is not the task's own, a best-of-N candidate or a landing, says what it
// is instead: Config.Name); for a task
// whose policy escalates (on_exhausted "ask") it first interrupts the run
// with an Escalation and continues with the answer: retry (back to the
// executor, the count reset), skip or abort. A task with ApprovePlan goes
// from the planner to the approve node, which asks an operator (an
// Escalation of kind gate.KindApproval, the plan in its Proposal) to
// approve the plan, edit it (the executor gets the edited plan, see
// ParsePlan) or reject it (the task ends with Phase "cancelled").
//
// Planner, Executor and Verifier are one-method interfaces with Func
// adapters. The package provides an LLM planner and executor (over any
// OpenAI-compatible endpoint, through agents/llm), a command executor that
// drives an external coding-agent CLI (Preset sets it up for codex, claude,
// aider, gemini, qwen or opencode), and a verifier that runs the task's
// checks (verifier package) in the task's git workspace (agents/workspace).
//
// An *InfraError (matching ErrInfrastructure) marks a failure of what a
// task runs on, not of the task: a model server that rejects the key or
// stays unreachable, an agent CLI that is missing or crashes before it did
// anything. AsInfraError recognises them, model errors included; the
// dispatcher leaves such a task interrupted instead of counting an attempt.
//
// Sub-packages: llm (the model client, planner and tool loop) and workspace
// (per-task git clones and confined file operations) are separate because
// each is useful alone and each carries a heavy dependency (go-openai,
// go-git); this package imports both for its LLM adapters and command
// executor.
package agents
