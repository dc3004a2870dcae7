// Package llm talks to any OpenAI-compatible chat-completions server (OpenAI,
// Ollama, vLLM, LM Studio, OpenRouter) through go-openai, and builds the two
// model-driven agents of the orchestrator on it: the planner and the
// tool-calling executor.
//
// # Client
//
// [New] makes a [Client] from a [Config] ([ConfigFromEnv] reads
// OPENAI_API_KEY, OPENAI_BASE_URL and STATGRAPH_MODEL). [Client.Chat] sends
// one chat completion with a per-attempt timeout, retrying rate limits,
// server errors, timeouts and connection errors with exponential backoff and
// full jitter, or exactly as long as the server's retry-after-ms or
// Retry-After header asks, never longer than MaxBackoff. Errors that retrying
// cannot fix (bad key, unknown model, prompt too long, malformed request)
// return at once as an *[APIError] whose text says what to change; errors.Is
// matches it against the sentinels ErrAuth, ErrNotFound, ErrBadRequest,
// ErrContextLength, ErrRateLimited and ErrServer.
//
// go-openai's errors do not expose response headers, so the client wraps the
// HTTP transport: each attempt carries a record in its request context, and
// the transport stores the response headers there for the retry logic.
//
// # Budgets
//
// Each call's token usage ([Usage]) is charged to a [Budget]. A task's budget
// usually has the run's global budget as parent. Budgets are checked before
// each call and charged after it, so a task stops with [ErrBudget] and a
// reason such as "task budget of 5000 tokens spent (5210 used)" having
// overspent by at most one call.
//
// # Planner
//
// [Client.Plan] sends the task ([TaskInfo]) and a compact file tree
// ([RepoView]) and asks for a JSON [Plan] {summary, steps, files,
// test_strategy}. Code fences and prose around the object are tolerated. An
// answer that does not parse or lacks a field gets one repair round, in
// which the parse error goes back to the model; a second bad answer fails
// with [ErrInvalidPlan]. Config.JSONMode adds response_format json_object
// for servers that support it.
//
// # Task lists
//
// [Client.SpecTasks], [Client.Subtasks] and [Client.Complexity] write a
// task list from a requirements document, break a task into subtasks and
// score tasks 1 to 10, in task-master's fields. Each asks for a reply of
// a declared JSON schema (response_format json_schema, strict; asked
// again without it when the server refuses it with HTTP 400), checks its
// shape and bounds (MaxSpecTasks, MaxSpecSubtasks, MaxSpecTitle,
// MaxSpecText) with one repair round, and fails with [ErrInvalidSpec].
//
// # Executor
//
// [Client.Execute] runs one attempt as a tool-calling loop over a
// [FileSystem] (the workspace's confined file operations): list_files,
// read_file, search, write_file, replace_in_file and finish. A tool's error
// goes back to the model as the tool result, so the model can correct
// itself; results are capped in size and the loop in turns. Running out of
// turns is not an error: the attempt ends unfinished and verification
// decides. Against a hostile or broken model each attempt is bounded: one
// response's bytes (Config.MaxResponseBytes, 4 MiB), the tool calls run per
// turn (64), the conversation kept (older tool results are elided past
// 1 MiB) and the bytes and files written (50 MiB, 2,000); see [ExecRequest].
// [BuildExecutorPrompt] is the attempt's task prompt (task, plan,
// "Attempt k of N", the verifier's feedback), shared with command executors
// that write it to a file.
//
// # Secrets
//
// The API key goes only into the Authorization header. It is removed from
// every error and log line the package produces, including server messages
// that echo it, and from every message sent to the model (a file or test
// output that holds it reaches the model as [REDACTED]). The removal is the
// module's one scrubber (internal/secret): every secret statgraph was
// started with goes too, and so do their base64, hex, URL-encoded and
// reversed forms.
package llm
