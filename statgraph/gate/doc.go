// Package gate is a quality gate for statgraph graphs and the policy both
// the gate and the orchestrator (package agents) decide with: how many
// attempts a piece of work gets, what happens when they are used up
// (fail, or ask an operator who answers retry, skip or abort), and how a
// failed check is enforced (blocking, advisory, informational).
//
// The gate is a layer over statgraph's public API, not part of its run
// loop: validators are nodes (AddValidator) that record a Verdict in the
// graph's state, and a gate (Add) is a node that weighs the verdicts
// followed by conditional edges to its next node, its retry target and its
// failure node. Its bookkeeping (State) lives in the graph's state S, so
// the normal checkpoint saves it and a resumed or killed run keeps counting.
package gate
