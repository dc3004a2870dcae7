// Package llmtest provides a scripted OpenAI-compatible chat-completions
// server for tests, in the spirit of net/http/httptest: the code under test
// talks to it with the real go-openai client, over real HTTP, and the test
// then reads back exactly what was sent.
//
// It is for tests only, and must never reach a binary: it reports failures
// through a testing.TB, and nothing in it is meant for a real model.
// _test.go files import it, and so may a test-helper package (a directory
// whose name ends in "test", not a command) that shares fixtures between
// tests, as long as only _test.go files or other such helpers import that
// package. A test in this package walks the module and fails, naming the
// chain of imports, when any other code reaches it.
//
// # Server
//
// [NewServer] starts a [Server] on a loopback port and closes it when the
// test ends. It answers POST /v1/chat/completions with the [Reply] values it
// was given, in order; once they are used up it asks the [ReplyFunc] set by
// [Server.SetFallback] (use [Always] to repeat one reply), and with neither
// it fails the test. Point a client at [Server.BaseURL] with the
// [Server.Client] HTTP client. [Server.Requests], [Server.RawBodies],
// [Server.AuthHeaders] and [Server.Count] tell what arrived.
//
// # Replies
//
// [Text] and [ToolCalls] build successful completions carrying a token
// usage, [Completion] wraps any assistant message, and [Error] builds an
// OpenAI-style error body with an HTTP status; [Reply.WithHeader] adds
// headers such as Retry-After. A [Call] is one tool call; [WriteFile] and
// [Finish] build the calls of the executor's write_file and finish tools.
// A Reply is a plain struct, so a test can also set its Status, Body or
// Delay directly, for example to answer with a body that is not JSON or to
// let a client time out.
//
// # Waiting
//
// [SleepRecorder] stands in for a client's sleep between retries (the
// llm.Config Sleep hook): it returns at once and records each wait, so retry
// tests neither sleep nor guess.
//
// This package imports nothing else of statgraph, so the llm package's own
// internal tests can use it without an import cycle.
package llmtest
