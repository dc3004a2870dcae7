package tests

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// floatAttr returns the float attribute key of kvs and whether it is set.
func floatAttr(kvs []*commonpb.KeyValue, key string) (float64, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.GetValue().GetDoubleValue(), true
		}
	}
	return 0, false
}

// TestRunExportsCost: with a price for the model (--prices), every model
// call's span carries gen_ai.usage.cost, its own tokens at that price, and
// the task's span the sum of its calls'; without one, no span carries a
// cost (unknown, never $0), while the tokens are still there.
func TestRunExportsCost(t *testing.T) {
	t.Parallel()
	const in, out = 1000.0, 3000.0 // dollars per million tokens
	for _, priced := range []bool{true, false} {
		name := "unpriced"
		if priced {
			name = "priced"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			recv := newOTLPReceiver(t)
			m := newTokenModel(t)
			dir := newRepo(t, map[string]string{"tasks.json": tokenTasks})
			args := []string{"run", "--model", "scripted"}
			if priced {
				p := filepath.Join(t.TempDir(), "prices.json")
				require.NoError(t, os.WriteFile(p, []byte(`{"scripted": {"input": 1000, "cached_input": 1000, "output": 3000}}`), 0o644))
				args = append(args, "--prices", p)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd, stdout, stderr := command(ctx, dir, append(args, "tasks.json")...)
			cmd.Env = append(cmd.Env, m.env()...)
			cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL, "OTEL_SERVICE_NAME=statgraph-e2e")
			r := wait(t, cmd.Run(), stdout, stderr)
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

			spans, _, _ := recv.got()
			named := map[string][]*tracepb.Span{}
			for _, s := range spans {
				named[s.Name] = append(named[s.Name], s)
			}
			chats := named["chat scripted"]
			require.Len(t, chats, 5, "a plan and two calls per attempt")
			total := 0.0
			for _, c := range chats {
				i, o := intAttr(c.Attributes, "gen_ai.usage.input_tokens"), intAttr(c.Attributes, "gen_ai.usage.output_tokens")
				require.Positive(t, i+o)
				cost, ok := floatAttr(c.Attributes, "gen_ai.usage.cost")
				if !priced {
					assert.False(t, ok, "an unknown cost is not exported (got %v)", cost)
					continue
				}
				require.True(t, ok, "gen_ai.usage.cost on a priced call")
				want := (float64(i)*in + float64(o)*out) / 1e6
				assert.InDelta(t, want, cost, 1e-12, "a call's cost is its tokens at the price")
				total += want
			}
			require.Len(t, named["task 1"], 1)
			cost, ok := floatAttr(named["task 1"][0].Attributes, "gen_ai.usage.cost")
			if !priced {
				assert.False(t, ok, "the task's unknown cost is not exported")
				return
			}
			require.True(t, ok, "gen_ai.usage.cost on the task's span")
			assert.InDelta(t, total, cost, 1e-12, "the task's cost is its calls'")
		})
	}
}
