package llmtest_test

import (
	"context"
	"errors"
	"io"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// TestStreamedReply: a request with "stream": true gets the scripted reply
// as server-sent events that go-openai's stream reader puts back together:
// the tool calls with their index, the finish reason and the usage.
func TestStreamedReply(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.ToolCalls(40, llmtest.WriteFile("a.txt", "hi"), llmtest.Finish("done")))
	st, err := client(s, "k").CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: llmtest.Model, Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "go"}},
	})
	require.NoError(t, err)
	defer st.Close()
	var calls []openai.ToolCall
	var finish openai.FinishReason
	var usage *openai.Usage
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		for _, c := range chunk.Choices {
			calls = append(calls, c.Delta.ToolCalls...)
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
	}
	require.Len(t, calls, 2)
	assert.Equal(t, 0, *calls[0].Index)
	assert.Equal(t, 1, *calls[1].Index)
	assert.Equal(t, "write_file", calls[0].Function.Name)
	assert.JSONEq(t, `{"path": "a.txt", "content": "hi"}`, calls[0].Function.Arguments)
	assert.Equal(t, openai.FinishReasonToolCalls, finish)
	require.NotNil(t, usage)
	assert.Equal(t, 40, usage.TotalTokens)
	assert.Equal(t, 1, s.Count())
}

// TestModelsListing: GET /v1/models answers an empty list and is not a
// request: it takes no reply and is not counted.
func TestModelsListing(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer(t, llmtest.Text("kept for the chat", 1))
	list, err := client(s, "k").ListModels(context.Background())
	require.NoError(t, err)
	assert.Empty(t, list.Models)
	assert.Zero(t, s.Count())
	resp, err := ask(context.Background(), client(s, "k"), "hello")
	require.NoError(t, err)
	assert.Equal(t, "kept for the chat", resp.Choices[0].Message.Content)
}
