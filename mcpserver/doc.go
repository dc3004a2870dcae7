// Package mcpserver serves one plan (a tasks.json with its run store and
// repository) over the Model Context Protocol, so that a coding assistant
// (Claude Code, Cursor, Codex) can list and add tasks, start and stop a run
// of the pending ones, read status and history, answer an escalation or a
// plan waiting for approval, send a done task back with review comments
// and send failed tasks back to pending. `statgraph mcp` runs it over stdio.
//
// The server holds no task logic of its own: every tool calls package
// control, the backend the web UI and the CLI's status and history share, so
// all three read and steer a plan through one mechanism. What this package
// adds is the protocol surface: tool names, typed input and output schemas
// (inferred from the Go types below, with descriptions), checks of the
// arguments that come from outside (task ids, status values, answers), and
// errors written for the assistant that reads them: what was wrong, where
// (the task id, the file), and what to do next.
//
// A tool that fails returns a result with IsError set and that message as
// its text, as the MCP specification asks, rather than a protocol error, so
// the model sees it and can correct its call. A run started by run_pending
// belongs to the server's process: it goes on after the tool returns,
// progress is read with status and get_task, and it is stopped gracefully by
// stop_run or when the server's context ends (the client disconnects).
package mcpserver
