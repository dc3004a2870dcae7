package statgraph_test

import (
	"context"
	"fmt"

	"github.com/statgraph/statgraph/statgraph"
)

// A deferred node: "write" is triggered after the one-step web search, but
// it waits until the three-step paper search is done too, and runs once,
// without naming the branches it waits for (compare AddJoin).
func ExampleWithDefer() {
	b := statgraph.New[Research]().SetReducer(mergeResearch).
		AddNode("web", finding("web")).
		AddNode("find", finding("paper found")).
		AddNode("read", finding("paper read")).
		AddNode("cite", finding("paper cited")).
		AddNode("write", func(_ context.Context, r Research) (Research, error) {
			return Research{Summary: fmt.Sprintf("%d findings", len(r.Findings))}, nil
		}, statgraph.WithDefer()).
		AddEdge(statgraph.Start, "web").AddEdge(statgraph.Start, "find").
		AddEdge("find", "read").AddEdge("read", "cite").
		AddEdge("web", "write").AddEdge("cite", "write").
		AddEdge("write", statgraph.End)
	g, err := b.Compile()
	if err != nil {
		panic(err)
	}
	out, _ := g.Invoke(context.Background(), Research{})
	fmt.Println(out.Summary)
	// Output: 4 findings
}
