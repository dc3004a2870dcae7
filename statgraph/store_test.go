package statgraph_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/store"
)

// Profile is the state of the store example: a user and a greeting.
type Profile struct {
	User, Lang, Greeting string
}

// A node reads and writes the graph's long-term store through RuntimeOf:
// the language a user chose in one run is there in the next, whatever the
// thread.
func ExampleWithStore() {
	mem := store.NewMemory()
	g, err := statgraph.New[Profile]().
		AddNode("greet", func(ctx context.Context, p Profile) (Profile, error) {
			st := statgraph.RuntimeOf(ctx).Store
			ns := []string{"users", p.User}
			if p.Lang != "" {
				if err := st.Put(ctx, store.Item{Namespace: ns, Key: "prefs", Value: map[string]any{"lang": p.Lang}}); err != nil {
					return p, err
				}
			}
			it, err := st.Get(ctx, ns, "prefs")
			switch {
			case errors.Is(err, store.ErrNotFound):
				p.Greeting = "hello (no language chosen)"
			case err != nil:
				return p, err
			case it.Value["lang"] == "fr":
				p.Greeting = "bonjour"
			default:
				p.Greeting = "hello"
			}
			return p, nil
		}).
		AddEdge(statgraph.Start, "greet").AddEdge("greet", statgraph.End).
		Compile(statgraph.WithStore(mem))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, in := range []Profile{{User: "ada"}, {User: "ada", Lang: "fr"}, {User: "ada"}, {User: "bob"}} {
		out, err := g.Invoke(ctx, in)
		fmt.Println(in.User, out.Greeting, err)
	}
	// Output:
	// ada hello (no language chosen) <nil>
	// ada bonjour <nil>
	// ada bonjour <nil>
	// bob hello (no language chosen) <nil>
}

// TestStoreReachesNodesRoutersAndSubgraphs: the graph's store is what a
// node, a router and a subgraph's node (without a store of its own) find
// in RuntimeOf; a subgraph compiled with its own store finds that one;
// a graph without a store, and code outside a node, find nil.
func TestStoreReachesNodesRoutersAndSubgraphs(t *testing.T) {
	parentStore, childStore := store.NewMemory(), store.NewMemory()
	seen := map[string]store.Store{}
	record := func(name string) func(context.Context, Profile) (Profile, error) {
		return func(ctx context.Context, p Profile) (Profile, error) {
			seen[name] = statgraph.RuntimeOf(ctx).Store
			return p, nil
		}
	}
	child := func(opts ...statgraph.CompileOption) *statgraph.Graph[Profile] {
		g, err := statgraph.New[Profile]().AddNode("inner", record("inner")).
			AddEdge(statgraph.Start, "inner").AddEdge("inner", statgraph.End).Compile(opts...)
		require.NoError(t, err)
		return g
	}
	inherit, own := child(), child(statgraph.WithStore(childStore))
	keep := func(p, _ Profile) Profile { return p }
	same := func(p Profile) Profile { return p }
	b := statgraph.New[Profile]().AddNode("outer", record("outer")).
		AddConditionalEdges("outer", func(ctx context.Context, p Profile) string {
			seen["router"] = statgraph.RuntimeOf(ctx).Store
			return "go"
		}, map[string]string{"go": "sub"})
	b = statgraph.AddSubgraph(b, "sub", inherit, same, keep)
	g, err := b.AddEdge(statgraph.Start, "outer").AddEdge("sub", statgraph.End).Compile(statgraph.WithStore(parentStore))
	require.NoError(t, err)
	_, err = g.Invoke(t.Context(), Profile{})
	require.NoError(t, err)
	require.Same(t, parentStore, seen["outer"].(*store.Memory), "node")
	require.Same(t, parentStore, seen["router"].(*store.Memory), "router")
	require.Same(t, parentStore, seen["inner"].(*store.Memory), "a subgraph without a store of its own gets its parent's")

	b2 := statgraph.AddSubgraph(statgraph.New[Profile](), "sub", own, same, keep)
	g2, err := b2.AddEdge(statgraph.Start, "sub").AddEdge("sub", statgraph.End).Compile(statgraph.WithStore(parentStore))
	require.NoError(t, err)
	_, err = g2.Invoke(t.Context(), Profile{})
	require.NoError(t, err)
	require.Same(t, childStore, seen["inner"].(*store.Memory), "a subgraph's own store wins")

	_, err = child().Invoke(t.Context(), Profile{})
	require.NoError(t, err)
	require.Nil(t, seen["inner"], "a graph without a store")
	require.Nil(t, statgraph.RuntimeOf(context.Background()).Store, "outside a node")
}
