package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres"
)

// ExampleOpen stores a thread's checkpoints in the database that
// $DATABASE_URL names and reads the latest back. It needs a server, so
// go test compiles it but does not run it; the conformance tests run the
// same calls against a real server.
func ExampleOpen() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"), postgres.Schema("statgraph"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer store.Close()
	for id := int64(1); id <= 3; id++ {
		cp := &statgraph.Checkpoint{Thread: "task-7", ID: id, Parent: id - 1, Step: int(id), Source: "loop",
			State: fmt.Appendf(nil, `{"RetryCount":%d}`, id), Next: []string{"verifier"}}
		if err := store.Put(ctx, cp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
	}
	latest, err := store.Get(ctx, "task-7", 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(latest.ID, string(latest.State), latest.Next)
	// A graph uses the store as it uses any other:
	//
	//	g, err := builder.Compile(statgraph.WithCheckpointer(store))
}
