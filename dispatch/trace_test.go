package dispatch_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

type spanTree struct {
	t     *testing.T
	spans []sdktrace.ReadOnlySpan
}

func (s spanTree) named(prefix string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.spans {
		if strings.HasPrefix(sp.Name(), prefix) {
			out = append(out, sp)
		}
	}
	return out
}

func (s spanTree) one(name string) sdktrace.ReadOnlySpan {
	s.t.Helper()
	got := s.named(name)
	require.Len(s.t, got, 1, "spans named %q", name)
	return got[0]
}

// parent returns the span's parent among the recorded spans.
func (s spanTree) parent(sp sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	s.t.Helper()
	for _, p := range s.spans {
		if p.SpanContext().SpanID() == sp.Parent().SpanID() {
			return p
		}
	}
	s.t.Fatalf("span %q has no recorded parent", sp.Name())
	return nil
}

func spanAttr(sp sdktrace.ReadOnlySpan, k string) attribute.Value {
	for _, kv := range sp.Attributes() {
		if string(kv.Key) == k {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestDispatcherSpans runs one task through the real Dispatcher, a real git
// repository and the scripted model (the planner's call, then two executor
// turns per attempt; the first attempt's file does not pass the test
// check) with an in-memory span recorder, and checks the tree: run → task →
// planner and attempts 1 and 2 → executor and verifier → model calls and
// checks, with the GenAI attributes and tokens the server returned and the
// checks' command and exit codes.
func TestDispatcherSpans(t *testing.T) {
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{
		"tasks.json": `{"tasks": [{"id": 1, "title": "make fixed", "max_retries": 3,
  "test_cmd": ["test", "-f", "fixed"]}]}`,
	})
	srv := llmtest.NewServer(t,
		llmtest.Text(`{"summary": "s", "steps": ["a"], "files": ["fixed"], "test_strategy": "t"}`, 40),
		llmtest.ToolCalls(8, llmtest.WriteFile("wrong", "x\n")),
		llmtest.ToolCalls(12, llmtest.Finish("wrote wrong")),
		llmtest.ToolCalls(16, llmtest.WriteFile("fixed", "y\n")),
		llmtest.ToolCalls(20, llmtest.Finish("wrote fixed")),
	)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(context.Background())

	f, err := tasks.Load(filepath.Join(dir, "tasks.json"), "")
	require.NoError(t, err)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1, Tracer: tp,
		Model: llm.Config{BaseURL: srv.BaseURL(), Model: llmtest.Model, HTTPClient: srv.Client()}}
	sum, err := d.Run(ctx)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusDone, sum.Units[0].Status, "%+v", sum.Units[0])
	require.Equal(t, 5, srv.Count())

	tree := spanTree{t: t, spans: sr.Ended()}
	run := tree.one("statgraph run")
	require.False(t, run.Parent().IsValid(), "the run's span is the root")
	require.Equal(t, int64(1), spanAttr(run, "statgraph.tasks.done").AsInt64())
	task := tree.one("task 1")
	require.Equal(t, run.SpanContext().SpanID(), task.Parent().SpanID())
	require.Equal(t, "done", spanAttr(task, "statgraph.task.status").AsString())
	require.Equal(t, "make fixed", spanAttr(task, "statgraph.task.title").AsString())

	planner := tree.one("planner")
	require.Equal(t, task.SpanContext().SpanID(), planner.Parent().SpanID(), "the planner runs before any attempt")
	attempts := tree.named("attempt")
	require.Len(t, attempts, 2)
	for i, a := range attempts {
		require.Equal(t, task.SpanContext().SpanID(), a.Parent().SpanID())
		require.Equal(t, int64(i+1), spanAttr(a, "statgraph.attempt").AsInt64())
	}
	for _, node := range []string{"executor", "verifier"} {
		spans := tree.named(node)
		require.Len(t, spans, 2, node)
		for i, sp := range spans {
			require.Equal(t, attempts[i].SpanContext().SpanID(), sp.Parent().SpanID(), "%s of attempt %d", node, i+1)
			require.Equal(t, node, spanAttr(sp, "statgraph.node").AsString())
			require.NotEmpty(t, spanAttr(sp, "statgraph.thread").AsString())
		}
	}
	route := false
	for _, e := range attempts[0].Events() {
		route = route || e.Name == "route"
	}
	require.True(t, route, "the verifier's route back to the executor is an event of attempt 1")

	chats := tree.named("chat ")
	require.Len(t, chats, 5)
	wantParents := []string{"planner", "executor", "executor", "executor", "executor"}
	wantTokens := [][2]int64{{30, 10}, {6, 2}, {9, 3}, {12, 4}, {15, 5}} // llmtest splits 3/4 prompt
	for i, c := range chats {
		require.Equal(t, "chat "+llmtest.Model, c.Name())
		require.Equal(t, wantParents[i], tree.parent(c).Name(), "call %d", i+1)
		require.Equal(t, "chat", spanAttr(c, "gen_ai.operation.name").AsString())
		require.Equal(t, trace.SpanKindClient, c.SpanKind())
		require.Equal(t, llmtest.Model, spanAttr(c, "gen_ai.request.model").AsString())
		require.Equal(t, "openai", spanAttr(c, "gen_ai.provider.name").AsString())
		require.Equal(t, wantTokens[i][0], spanAttr(c, "gen_ai.usage.input_tokens").AsInt64(), "call %d", i+1)
		require.Equal(t, wantTokens[i][1], spanAttr(c, "gen_ai.usage.output_tokens").AsInt64(), "call %d", i+1)
		require.Equal(t, "127.0.0.1", spanAttr(c, "server.address").AsString())
	}
	require.Equal(t, attempts[1].SpanContext().SpanID(), tree.parent(chats[4]).Parent().SpanID(), "the last call is attempt 2's")

	checks := tree.named("check tests")
	require.Len(t, checks, 2)
	for i, c := range checks {
		require.Equal(t, "verifier", tree.parent(c).Name())
		require.Equal(t, "test -f fixed", spanAttr(c, "process.command_line").AsString())
		require.Equal(t, "test", spanAttr(c, "statgraph.check.kind").AsString())
		require.Equal(t, int64(1-i), spanAttr(c, "process.exit.code").AsInt64(), "attempt %d's check", i+1)
		require.Equal(t, i == 1, spanAttr(c, "statgraph.check.passed").AsBool())
		require.Equal(t, codes.Unset, c.Status().Code, "a failing check is a verdict, not an error of the span")
	}
}
