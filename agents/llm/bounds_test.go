package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

func TestChatRefusesAResponseOverTheCap(t *testing.T) {
	huge := llmtest.Text(strings.Repeat("x", 5<<20), 10)
	f := llmtest.NewServer(t, huge, huge)
	c, sleeps := newTestClient(t, f, nil)
	_, err := c.Chat(t.Context(), userRequest("hi"), nil)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrResponseTooLarge), "got %v; want ErrResponseTooLarge", err)
	var tl *ResponseTooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(DefaultMaxResponseBytes), tl.Limit)
	assert.Contains(t, err.Error(), "4.0 MiB")
	assert.Contains(t, err.Error(), "--max-response-bytes")
	assert.Equal(t, 1, f.Count(), "an oversized response is not retried")
	assert.Empty(t, sleeps.Waits())
}

func TestChatAcceptsAResponseUnderASetCap(t *testing.T) {
	f := llmtest.NewServer(t, llmtest.Text(strings.Repeat("x", 3000), 10), llmtest.Text(strings.Repeat("y", 9000), 10))
	c, _ := newTestClient(t, f, func(cfg *Config) { cfg.MaxResponseBytes = 8 << 10 })
	resp, err := c.Chat(t.Context(), userRequest("hi"), nil)
	require.NoError(t, err)
	assert.Len(t, resp.Choices[0].Message.Content, 3000)
	_, err = c.Chat(t.Context(), userRequest("again"), nil)
	assert.ErrorIs(t, err, ErrResponseTooLarge)
	assert.Contains(t, err.Error(), "8.0 KiB")
}

func TestExecuteRunsAtMostTheCapOfToolCallsPerTurn(t *testing.T) {
	calls := make([]llmtest.Call, 2000)
	for i := range calls {
		calls[i] = llmtest.WriteFile(fmt.Sprintf("f%04d.txt", i), "x")
	}
	f := llmtest.NewServer(t, llmtest.ToolCalls(10, calls...), llmtest.ToolCalls(10, llmtest.Finish("done")))
	c, _ := newTestClient(t, f, nil)
	fsys := newFakeFS(nil)
	res, err := c.Execute(t.Context(), fsys, execReq, nil)
	require.NoError(t, err)
	assert.True(t, res.Finished)
	assert.Len(t, fsys.snapshot(), DefaultMaxToolCallsPerTurn, "files written")

	reqs := f.Requests()
	require.Len(t, reqs, 2)
	results := toolMessages(reqs[1])
	require.Len(t, results, 2000, "every call gets a result, as the API requires")
	assert.Equal(t, "wrote 1 bytes to f0063.txt", results[63].Content)
	assert.Equal(t, "error: not run: this reply made 2000 tool calls and at most 64 run per turn, so calls 65 to 2000 were skipped "+
		"(the cap is limits.tool_calls_per_turn in tasks.json). Repeat the calls you still need in later turns, at most 64 at a time.", results[64].Content)
	assert.Equal(t, "error: not run: over the cap of 64 tool calls per turn (see the result of call call_65)", results[1999].Content)
}

func TestExecuteKeepsTheConversationUnderTheCap(t *testing.T) {
	// A model that writes a 512 KiB file every turn: without elision each
	// request carries every earlier turn's arguments (4 MiB by turn 9).
	big := strings.Repeat("y", 512<<10)
	var replies []llmtest.Reply
	for i := range 8 {
		replies = append(replies, llmtest.ToolCalls(10, llmtest.WriteFile(fmt.Sprintf("big%d.txt", i), big)))
	}
	replies = append(replies, llmtest.ToolCalls(10, llmtest.Finish("done")))
	f := llmtest.NewServer(t, replies...)
	c, _ := newTestClient(t, f, nil)
	fsys := newFakeFS(nil)
	res, err := c.Execute(t.Context(), fsys, execReq, nil)
	require.NoError(t, err)
	assert.True(t, res.Finished)
	assert.Len(t, fsys.snapshot(), 8)
	bodies := f.RawBodies()
	require.Len(t, bodies, 9)
	for i, b := range bodies {
		assert.Less(t, len(b), DefaultMaxConversationBytes+600<<10, "request %d is %d bytes", i+1, len(b))
	}
	last := f.Requests()[8]
	assert.Equal(t, "{}", last.Messages[2].ToolCalls[0].Function.Arguments, "the oldest write's arguments are elided")
	assert.Greater(t, len(last.Messages[len(last.Messages)-2].ToolCalls[0].Function.Arguments), len(big), "the last reply is sent whole")
}

func TestTrimConversationElidesOldestToolResultsFirst(t *testing.T) {
	msgs := []struct{ role, content string }{
		{"system", "s"}, {"user", "task"},
		{"assistant", ""}, {"tool", strings.Repeat("a", 1000)},
		{"assistant", ""}, {"tool", strings.Repeat("b", 1000)},
		{"assistant", ""}, {"tool", strings.Repeat("c", 1000)},
	}
	conv := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		conv[i] = openai.ChatCompletionMessage{Role: m.role, Content: m.content}
	}
	trimConversation(conv, 2, 2500)
	assert.True(t, strings.HasPrefix(conv[3].Content, "[elided: 1000 bytes dropped to keep the conversation under 2.4 KiB"), conv[3].Content)
	assert.Equal(t, strings.Repeat("b", 1000), conv[5].Content, "elision stops once under the cap")
	assert.Equal(t, strings.Repeat("c", 1000), conv[7].Content, "the last turn is kept whole")
}

func TestExecuteStopsWritingPastTheCaps(t *testing.T) {
	f := llmtest.NewServer(t,
		llmtest.ToolCalls(10,
			llmtest.WriteFile("a.txt", "12345"),
			llmtest.WriteFile("b.txt", "12345"),
			llmtest.WriteFile("./a.txt", "67890"),
			llmtest.WriteFile("c.txt", "1"),
		),
		llmtest.ToolCalls(10, llmtest.WriteFile("b.txt", strings.Repeat("z", 20))),
		llmtest.ToolCalls(10, llmtest.Finish("done")),
	)
	c, _ := newTestClient(t, f, nil)
	fsys := newFakeFS(nil)
	req := execReq
	req.MaxWriteFiles, req.MaxWriteBytes = 2, 30
	_, err := c.Execute(t.Context(), fsys, req, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a.txt": "67890", "b.txt": "12345"}, fsys.snapshot())
	reqs := f.Requests()
	require.Len(t, reqs, 3)
	res := toolMessages(reqs[1])
	assert.Equal(t, "error: write_file \"c.txt\": not written: this attempt has already written 2 files, the cap per attempt "+
		"(limits.write_files in tasks.json); change the files you have, or call finish", res[3].Content)
	res = toolMessages(reqs[2])
	assert.Equal(t, "error: write_file \"b.txt\": not written: 20 B more would pass the cap of 30 B written per attempt "+
		"(limits.write_bytes in tasks.json; 15 B written so far); make smaller changes, or call finish", res[len(res)-1].Content)
}
