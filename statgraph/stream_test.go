package statgraph_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// describe renders an event compactly for order assertions.
func describe(ev statgraph.Event[w1State]) string {
	switch ev.Kind {
	case statgraph.EventStepStart:
		return fmt.Sprintf("step %d %v", ev.Step, ev.Nodes)
	case statgraph.EventNodeStart, statgraph.EventNodeEnd:
		return fmt.Sprintf("%s %s#%d", ev.Kind, ev.Node, ev.Attempt)
	case statgraph.EventRoute:
		return fmt.Sprintf("route %s -%s-> %s", ev.Node, ev.Key, ev.To)
	case statgraph.EventUpdate:
		return fmt.Sprintf("update retry_count=%d", ev.State.RetryCount)
	case statgraph.EventRunEnd:
		return fmt.Sprintf("end history=%d err=%v", len(ev.State.ErrorHistory), ev.Err)
	}
	return string(ev.Kind)
}

func TestStreamEventOrder(t *testing.T) {
	g := mustCompile(t, w1())
	var got []string
	for ev, err := range g.Stream(context.Background(), w1State{MaxRetries: 1}) {
		require.NoError(t, err)
		got = append(got, describe(ev))
	}
	require.Equal(t, []string{
		"run_start",
		"step 1 [planner]", "node_start planner#1", "node_end planner#1", "update retry_count=0",
		"step 2 [executor]", "node_start executor#1", "node_end executor#1", "update retry_count=1",
		"step 3 [verifier]", "node_start verifier#1", "node_end verifier#1", "update retry_count=1", "route verifier -failed-> failed",
		"step 4 [failed]", "node_start failed#1", "node_end failed#1", "update retry_count=1",
		"end history=2 err=<nil>",
	}, got)
}

func TestStreamYieldsTheRunErrorLast(t *testing.T) {
	boom := errors.New("boom")
	g := mustCompile(t, oneNode(func(context.Context, st) (st, error) { return st{}, boom }))
	var last error
	n := 0
	for _, err := range g.Stream(context.Background(), st{}) {
		last = err
		n++
	}
	require.ErrorIs(t, last, boom)
	require.Greater(t, n, 2)
}

func TestStreamBreakCancelsAndLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	sawDone := false
	b := statgraph.New[st]().SetReducer(appendReducer)
	for _, name := range []string{"a", "b"} {
		b.AddNode(name, only(name)).AddEdge(statgraph.Start, name).AddEdge(name, "slow")
	}
	b.AddNode("slow", func(ctx context.Context, s st) (st, error) {
		select {
		case <-ctx.Done():
			sawDone = true
			return s, ctx.Err()
		case <-time.After(10 * time.Second):
			return s, nil
		}
	}).AddEdge("slow", statgraph.End)
	g := mustCompile(t, b)
	var kinds []string
	t0 := time.Now()
	for ev := range g.Stream(context.Background(), st{}) {
		kinds = append(kinds, string(ev.Kind)+":"+ev.Node)
		if ev.Kind == statgraph.EventNodeStart && ev.Node == "b" {
			break
		}
	}
	require.Less(t, time.Since(t0), 5*time.Second)
	require.Equal(t, []string{"run_start:", "step_start:", "node_start:a", "node_start:b"}, kinds)
	require.False(t, sawDone, "the slow node must not start after the break")

	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before)
}

func TestStreamBreakInLongLoop(t *testing.T) {
	g := mustCompile(t, w1())
	seen := 0
	for ev := range g.Stream(context.Background(), w1State{MaxRetries: 1_000_000}, statgraph.WithStepLimit(3_000_000)) {
		if ev.Kind == statgraph.EventNodeEnd {
			seen++
		}
		if seen == 10 {
			break
		}
	}
	require.Equal(t, 10, seen)
}

var durations = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s)\b`)

func TestTraceFormat(t *testing.T) {
	g := mustCompile(t, w1())
	var buf bytes.Buffer
	_, err := g.Invoke(context.Background(), w1State{MaxRetries: 2}, statgraph.WithTrace(&buf))
	require.NoError(t, err)
	got := durations.ReplaceAllString(buf.String(), "<d>")
	got = regexp.MustCompile(`run [0-9a-f]{4} `).ReplaceAllString(got, "run <id> ")
	// Columns are padded to the width of the real durations; compare the
	// words, not the padding.
	got = regexp.MustCompile(` +`).ReplaceAllString(got, " ")
	golden(t, "trace_w1.txt", got)
}

func TestTraceShowsFailuresAndRetries(t *testing.T) {
	calls := 0
	g := mustCompile(t, oneNode(func(context.Context, st) (st, error) {
		calls++
		if calls < 2 {
			return st{}, errors.New("flaky disk")
		}
		return st{}, nil
	}, statgraph.WithRetry(statgraph.RetryPolicy{InitialInterval: time.Millisecond})))
	var buf bytes.Buffer
	_, err := g.Invoke(context.Background(), st{}, statgraph.WithTrace(&buf))
	require.NoError(t, err)
	require.Contains(t, buf.String(), "retry  in 1ms  (try 1 failed: statgraph: node \"n\" attempt 1: flaky disk)")
	require.Contains(t, buf.String(), "try 2")
}

func TestDrawings(t *testing.T) {
	g := mustCompile(t, w1())
	golden(t, "w1.mmd", draw(t, g, "mermaid"))
	golden(t, "w1.dot", draw(t, g, "dot"))
	require.Contains(t, draw(t, g, "mermaid"), "verifier -. retry .-> executor")
	require.Contains(t, draw(t, g, "dot"), `"verifier" -> "executor" [label="retry", style=dashed`)
	g2 := mustCompile(t, w2())
	golden(t, "w2.mmd", draw(t, g2, "mermaid"))
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create the golden file")
	require.Equal(t, strings.TrimSpace(string(want)), strings.TrimSpace(got))
}
