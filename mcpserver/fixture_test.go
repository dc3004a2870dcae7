package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/mcpserver"
)

// connect opens a Control on o and returns an SDK client session talking
// to the server over an in-memory pipe; both end with the test.
func connect(t *testing.T, o control.Options) *mcp.ClientSession {
	t.Helper()
	ctl, err := control.Open(o)
	require.NoError(t, err)
	t.Cleanup(func() { ctl.Close() })
	return serve(t, ctl)
}

// serve serves ctl to an SDK client over an in-memory pipe until the test
// ends, and returns the client's session.
func serve(t testing.TB, ctl *control.Control) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpserver.New(ctl, "test").Run(ctx, st) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls tool with args, requires it to succeed, and decodes its
// structured result into a T.
func call[T any](t *testing.T, cs *mcp.ClientSession, tool string, args any) T {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, "%s: protocol error", tool)
	require.False(t, res.IsError, "%s(%v) failed: %s", tool, args, text(res))
	var out T
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &out), "%s: structured content %s", tool, data)
	return out
}

// refused calls tool with args, requires a tool error (IsError, not a
// protocol error) and returns its text.
func refused(t *testing.T, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, "%s: protocol error", tool)
	require.True(t, res.IsError, "%s(%v) should fail; got %s", tool, args, text(res))
	t.Logf("%s(%v) refused: %s", tool, args, text(res))
	return text(res)
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

// eventually polls status until ok holds, failing after d.
func eventually(t *testing.T, cs *mcp.ClientSession, d time.Duration, what string, ok func(mcpserver.Status) bool) mcpserver.Status {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := call[mcpserver.Status](t, cs, "status", nil)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed %s within %s; last: %+v", what, d, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
