package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "statgraph-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "runs.db"), sqlite.Durability(sqlite.Full))
	if err != nil {
		panic(err)
	}
	defer store.Close()

	for id := int64(1); id <= 3; id++ {
		cp := &statgraph.Checkpoint{Thread: "task-7", ID: id, Parent: id - 1, Step: int(id), Source: "loop",
			State: fmt.Appendf(nil, `{"RetryCount":%d}`, id), Next: []string{"verifier"}}
		if err := store.Put(ctx, cp); err != nil {
			panic(err)
		}
	}
	latest, err := store.Get(ctx, "task-7", 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(latest.ID, string(latest.State), latest.Next)
	// Output: 3 {"RetryCount":3} [verifier]
}
