package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/tasks"
)

// A run that Start begins (statgraph serve's and mcp's) is traced with
// Options.Run.Tracer as statgraph run's is: one root "statgraph run" span,
// a "task 1" span under it, and the attempts' spans under the task with
// the executor and verifier nodes under the attempt.
func TestStartedRunIsTraced(t *testing.T) {
	file := controltest.NewPlan(t, `{"tasks": [{"id": 1, "title": "one",
  "executor": {"command": ["sh", "-c", "echo one > one.txt"]}, "test_cmd": "test -f one.txt"}]}`)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(context.Background())
	c, err := control.Open(control.Options{File: file, Run: control.RunOptions{Jobs: 1, Tracer: tp}})
	require.NoError(t, err)
	defer c.Close()

	require.NoError(t, c.Start(bg, control.StartOptions{}))
	ctx, cancel := context.WithTimeout(bg, 90*time.Second)
	defer cancel()
	require.NoError(t, c.Wait(ctx))
	info := c.Run()
	require.Empty(t, info.Error)
	require.Len(t, info.Units, 1)
	require.Equal(t, tasks.StatusDone, info.Units[0].Status, "%+v", info.Units[0])

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range sr.Ended() {
		byName[sp.Name()] = append(byName[sp.Name()], sp)
	}
	require.Len(t, byName["statgraph run"], 1, "the run's span")
	run := byName["statgraph run"][0]
	require.False(t, run.Parent().IsValid(), "the run's span is the root")
	require.Len(t, byName["task 1"], 1)
	task := byName["task 1"][0]
	require.Equal(t, run.SpanContext().SpanID(), task.Parent().SpanID(), "the task is under the run")
	require.Len(t, byName["attempt"], 1)
	attempt := byName["attempt"][0]
	require.Equal(t, task.SpanContext().SpanID(), attempt.Parent().SpanID(), "the attempt is under the task")
	for _, node := range []string{"executor", "verifier"} {
		require.Len(t, byName[node], 1, node)
		require.Equal(t, attempt.SpanContext().SpanID(), byName[node][0].Parent().SpanID(), "%s is under the attempt", node)
	}
}
