package llm

import (
	"context"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults of ExecRequest.
const (
	defaultMaxTurns      = 30
	defaultMaxToolOutput = 16 << 10
)

// ExecRequest is one executor attempt at a task.
type ExecRequest struct {
	Task TaskInfo
	Plan Plan
	// Attempt is this attempt's number, from 1, of MaxAttempts.
	Attempt, MaxAttempts int
	// Feedback is the verifier's feedback on the previous attempt, already
	// capped by the caller; empty on the first attempt.
	Feedback string
	// MaxTurns bounds the model calls of the attempt. 0 means 30.
	MaxTurns int
	// MaxToolOutput caps each tool result sent to the model, in bytes.
	// 0 means 16 KiB.
	MaxToolOutput int
	// ExecLimits bounds the attempt against a hostile or broken model.
	ExecLimits
}

// ExecLimits are the per-attempt caps of [Client.Execute]. The zero value
// means every default.
type ExecLimits struct {
	// MaxToolCallsPerTurn is how many tool calls of one model reply run;
	// the calls past it are answered with an error telling the model to
	// repeat them later. 0 means [DefaultMaxToolCallsPerTurn] (64).
	MaxToolCallsPerTurn int
	// MaxConversationBytes caps the conversation sent on each turn: past
	// it, the oldest tool results, then the oldest tool-call arguments,
	// are replaced by a marker. 0 means [DefaultMaxConversationBytes]
	// (1 MiB).
	MaxConversationBytes int
	// MaxWriteBytes and MaxWriteFiles cap the bytes and the distinct files
	// the attempt writes through write_file and replace_in_file; a write
	// past them fails with an error the model sees. 0 means
	// [DefaultMaxWriteBytes] (50 MiB) and [DefaultMaxWriteFiles] (2,000).
	MaxWriteBytes, MaxWriteFiles int
}

// ExecResult describes an executor attempt.
type ExecResult struct {
	// Summary is the model's finish summary, or why the loop ended without one.
	Summary string
	// Turns is the number of model calls made.
	Turns int
	// Usage is the token usage over those calls.
	Usage Usage
	// ToolCalls counts the tool calls the model made, finish included.
	ToolCalls int
	// Finished reports whether the model called finish.
	Finished bool
	// LastReply is the model's last reply as a person reads it: its text,
	// then one line per tool call (name and arguments, each cut at
	// maxReplyArgs bytes). It is not scrubbed.
	LastReply string
}

// Execute runs the tool-calling loop of one attempt: the model gets
// [BuildExecutorPrompt] and the tools list_files, read_file, search,
// write_file, replace_in_file and finish, which act on fsys. Each tool call's
// result, or its error as "error: ...", goes back to the model as a tool
// message with the call's id; a failing tool never ends the loop. Results
// are capped at req.MaxToolOutput. A reply without tool calls gets a
// reminder to use the tools or finish. The attempt is bounded against a
// hostile or broken model: only the first req.MaxToolCallsPerTurn calls of
// a reply run (the rest get an error result), older tool results are
// elided once the conversation passes req.MaxConversationBytes, and writes
// past req.MaxWriteBytes or req.MaxWriteFiles fail.
//
// The loop ends when the model calls finish (Finished true, Summary its
// summary) or after req.MaxTurns model calls. Reaching the turn limit is not
// an error: the result has Finished false and a Summary saying the limit was
// reached, because the edits made so far may still pass verification, which
// decides. An error from [Client.Chat] (budget spent, bad key, server down,
// ctx done) ends the loop and is returned, wrapped with the task id and turn,
// together with the result so far.
func (c *Client) Execute(ctx context.Context, fsys FileSystem, req ExecRequest, budget *Budget) (ExecResult, error) {
	maxTurns := req.MaxTurns
	if maxTurns <= 0 {
		maxTurns = defaultMaxTurns
	}
	maxOut := orDefault(req.MaxToolOutput, defaultMaxToolOutput)
	maxCalls := orDefault(req.MaxToolCallsPerTurn, DefaultMaxToolCallsPerTurn)
	maxConv := orDefault(req.MaxConversationBytes, DefaultMaxConversationBytes)
	lfs := newLimitFS(fsys, orDefault(req.MaxWriteBytes, DefaultMaxWriteBytes), orDefault(req.MaxWriteFiles, DefaultMaxWriteFiles))
	chat := openai.ChatCompletionRequest{
		Tools: executorTools,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: executorSystemPrompt},
			{Role: openai.ChatMessageRoleUser, Content: BuildExecutorPrompt(req)},
		},
	}
	keep := len(chat.Messages)
	var res ExecResult
	for res.Turns < maxTurns {
		trimConversation(chat.Messages, keep, maxConv)
		resp, err := c.Chat(ctx, chat, budget)
		if err != nil {
			return res, fmt.Errorf("executor: task %s, turn %d: %w", req.Task.ID, res.Turns+1, err)
		}
		res.Turns++
		res.Usage = res.Usage.Plus(c.usageOf(chat.Model, resp))
		var msg openai.ChatCompletionMessage
		if len(resp.Choices) > 0 {
			msg = resp.Choices[0].Message
		}
		chat.Messages = append(chat.Messages, openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleAssistant, Content: msg.Content, ToolCalls: msg.ToolCalls,
		})
		res.LastReply = replyText(msg)
		if len(msg.ToolCalls) == 0 {
			chat.Messages = append(chat.Messages, openai.ChatCompletionMessage{
				Role:    openai.ChatMessageRoleUser,
				Content: "Use the tools to make the change, then call finish with a summary. Do not answer with text alone.",
			})
			continue
		}
		var finish *openai.ToolCall
		for i, call := range msg.ToolCalls {
			res.ToolCalls++
			if call.Function.Name == toolFinish {
				finish = &msg.ToolCalls[i]
				continue
			}
			var out string
			if i < maxCalls {
				out = capOutput(runTool(lfs, call), maxOut)
			} else {
				out = skippedCall(len(msg.ToolCalls), maxCalls, msg.ToolCalls[maxCalls].ID, i == maxCalls)
			}
			chat.Messages = append(chat.Messages, openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleTool, Content: out, ToolCallID: call.ID,
			})
		}
		if finish != nil {
			res.Finished = true
			res.Summary = finishSummary(*finish)
			return res, nil
		}
	}
	res.Summary = fmt.Sprintf("turn limit of %d reached before the model called finish (%d tool calls made)", maxTurns, res.ToolCalls)
	return res, nil
}

// orDefault returns n, or def when n is 0 or negative.
func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// maxReplyArgs bounds the arguments of one tool call in ExecResult.LastReply
// (a write_file call carries a whole file).
const maxReplyArgs = 300

// replyText renders a model reply for ExecResult.LastReply.
func replyText(msg openai.ChatCompletionMessage) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(msg.Content))
	for _, call := range msg.ToolCalls {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		args := call.Function.Arguments
		if len(args) > maxReplyArgs {
			args = strings.ToValidUTF8(args[:maxReplyArgs], "") + "…"
		}
		fmt.Fprintf(&b, "→ %s %s", call.Function.Name, args)
	}
	return b.String()
}
