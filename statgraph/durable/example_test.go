package durable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/durable"
)

// A workflow that drafts two sections in parallel, then asks a person to
// approve: the drafts are not written again when the run resumes.
func Example() {
	var drafts atomic.Int32
	draft := durable.NewTask("draft", func(_ context.Context, topic string) (string, error) {
		drafts.Add(1) // the drafts run at once
		return "on " + topic, nil
	}, durable.WithRetry(statgraph.RetryPolicy{MaxAttempts: 3}))

	w, err := durable.New("report", statgraph.NewMemoryCheckpointer(false), func(ctx context.Context, topics []string) (string, error) {
		futures := make([]*durable.Future[string], len(topics))
		for i, t := range topics {
			futures[i] = draft.Call(ctx, t) // started together
		}
		var parts []string
		for _, f := range futures {
			s, err := f.Get(ctx)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		ok, err := durable.Interrupt[bool](ctx, "publish "+strings.Join(parts, ", ")+"?")
		if err != nil {
			return "", err
		}
		if !ok {
			return "withdrawn", nil
		}
		return strings.Join(parts, "; "), nil
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = w.Invoke(ctx, "report-1", []string{"speed", "cost"})
	fmt.Println(errors.Is(err, statgraph.ErrInterrupted))
	out, err := w.Resume(ctx, "report-1", true)
	fmt.Println(out, err)
	fmt.Println("drafts written:", drafts.Load())
	// Output:
	// true
	// on speed; on cost <nil>
	// drafts written: 2
}
