package checkpointtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

// killCaseEnv names, in the environment of the killed process, the
// killCase that KillHelper runs instead of the parallel graph of
// RunDurabilityKill.
const killCaseEnv = "STATGRAPH_KILL_CASE"

// killCase is a graph that the helper process runs until it is killed with
// SIGKILL, and what the run resumed in the test's own process must show.
type killCase struct {
	name string
	mode statgraph.Durability
	// graph builds the case's graph on store. Every node body appends its
	// name to the file runs as it starts (so runs counts executions across
	// both processes); the body of node hang then waits to be killed.
	graph func(store statgraph.Checkpointer, runs, hang string) (*statgraph.Graph[st], error)
	hang  string
	// slowWrite makes the helper's store slow to write the checkpoint that
	// leads to hang (its Next is [hang]): that write lasts until hang starts
	// (and then until the process is killed), or 2 s, whichever is first.
	slowWrite bool
	// stored reports whether the helper's latest checkpoint is the one the
	// kill must find (nil: the kill needs nothing stored); point says what
	// that is, for the failure message.
	stored func(c *statgraph.Checkpoint) bool
	point  string
	log    []string // the final Log of the resumed run
	runs   string   // node bodies run across both processes, sorted
}

// recordNode is a node body of the kill cases: it appends name to the file
// runs, waits to be killed when name is hang, and returns an update adding
// name to the log.
func recordNode(runs, hang, name string) func(context.Context, st) (st, error) {
	return func(ctx context.Context, s st) (st, error) {
		if err := record(runs, name); err != nil {
			return st{}, err
		}
		if name == hang {
			<-ctx.Done() // killed first
			return st{}, ctx.Err()
		}
		return st{Log: []string{name}}, nil
	}
}

// record appends name to the file runs.
func record(runs, name string) error {
	f, err := os.OpenFile(runs, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(name + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// nextHas returns a stored func that is true of a checkpoint whose Next
// holds node.
func nextHas(node string) func(*statgraph.Checkpoint) bool {
	return func(c *statgraph.Checkpoint) bool { return slices.Contains(c.Next, node) }
}

// chainGraph is a -> b -> c -> d.
func chainGraph(store statgraph.Checkpointer, runs, hang string) (*statgraph.Graph[st], error) {
	b := statgraph.New[st]().SetReducer(appendReducer).AddEdge(statgraph.Start, "a").
		AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", "d").AddEdge("d", statgraph.End)
	for _, n := range []string{"a", "b", "c", "d"} {
		b.AddNode(n, recordNode(runs, hang, n))
	}
	return b.Compile(statgraph.WithCheckpointer(store))
}

// durabilityChainCases are the crash of each durability mode on a chain of
// single nodes, killed while c runs, where the modes differ: the helper's
// store writes the checkpoint after b slowly (it is still being written
// when c starts, if c can start before it is written). What
// statgraph.Durability documents for each mode:
//   - sync writes each step's checkpoint before the next step starts: the
//     write after b ends (after 2 s) before c starts, so only the
//     running step is lost: c and d run again;
//   - async writes it while the next step runs, and a crash may also lose
//     the last completed step: c starts while the write after b is in
//     flight, the kill loses it, and b, c and d run again;
//   - exit writes nothing, not even the input, until the run stops: the
//     helper is killed with nothing stored, and every node runs again.
func durabilityChainCases() []killCase {
	cases := []killCase{
		{name: "chain-sync", mode: statgraph.DurabilitySync, runs: "a b c c d"},
		{name: "chain-async", mode: statgraph.DurabilityAsync, runs: "a b b c c d"},
		{name: "chain-exit", mode: statgraph.DurabilityExit, runs: "a a b b c c d"},
	}
	// The kill point is c running, whatever is stored by then: what each
	// mode stored is what the test checks, through what runs again.
	for i := range cases {
		cases[i].graph, cases[i].hang, cases[i].slowWrite = chainGraph, "c", true
		cases[i].stored, cases[i].point = func(*statgraph.Checkpoint) bool { return true }, "a checkpoint stored"
		cases[i].log = []string{"a", "b", "c", "d"}
	}
	cases[2].stored, cases[2].point = nil, "nothing required stored"
	return cases
}

// unevenGraph is a -> {b, c1 -> c2 -> c3}, with d after both branches:
// AddJoin([b, c3], d) when deferred is false, b -> d with d WithDefer when
// it is true. d's update names every update it saw.
func unevenGraph(deferred bool) func(store statgraph.Checkpointer, runs, hang string) (*statgraph.Graph[st], error) {
	return func(store statgraph.Checkpointer, runs, hang string) (*statgraph.Graph[st], error) {
		b := statgraph.New[st]().SetReducer(appendReducer)
		for _, n := range []string{"a", "b", "c1", "c2", "c3"} {
			b.AddNode(n, recordNode(runs, hang, n))
		}
		d := func(_ context.Context, s st) (st, error) {
			if err := record(runs, "d"); err != nil {
				return st{}, err
			}
			return st{Log: []string{"d saw " + strings.Join(s.Log, ",")}}, nil
		}
		b.AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("a", "c1").
			AddEdge("c1", "c2").AddEdge("c2", "c3").AddEdge("d", statgraph.End)
		if deferred {
			b.AddNode("d", d, statgraph.WithDefer()).AddEdge("b", "d").AddEdge("c3", statgraph.End)
		} else {
			b.AddNode("d", d).AddJoin([]string{"b", "c3"}, "d")
		}
		return b.Compile(statgraph.WithCheckpointer(store))
	}
}

// handOffGraph is Start -> {alice, slow}, alice being a command node that
// hands off to bob (Goto), and bob and slow leading to End.
func handOffGraph(store statgraph.Checkpointer, runs, hang string) (*statgraph.Graph[st], error) {
	alice := func(_ context.Context, _ st) (statgraph.Command[st], error) {
		if err := record(runs, "alice"); err != nil {
			return statgraph.Command[st]{}, err
		}
		return statgraph.Command[st]{Update: st{Log: []string{"alice"}}, Goto: []string{"bob"}}, nil
	}
	return statgraph.New[st]().SetReducer(appendReducer).
		AddCommandNode("alice", alice, []string{"bob"}).
		AddNode("bob", recordNode(runs, hang, "bob")).AddNode("slow", recordNode(runs, hang, "slow")).
		AddEdge(statgraph.Start, "alice").AddEdge(statgraph.Start, "slow").
		AddEdge("bob", statgraph.End).AddEdge("slow", statgraph.End).
		Compile(statgraph.WithCheckpointer(store))
}

// featureCases are the kills of RunFeatureKill, all under DurabilitySync.
func featureCases() []killCase {
	unevenLog := []string{"a", "b", "c1", "c2", "c3", "d saw a,b,c1,c2,c3"}
	return []killCase{
		{name: "join", graph: unevenGraph(false), hang: "c2", stored: nextHas("c2"),
			point: "b and c1 stored, c2 running", log: unevenLog, runs: "a b c1 c2 c2 c3 d"},
		{name: "defer", graph: unevenGraph(true), hang: "c2", stored: nextHas("c2"),
			point: "b and c1 stored (d held), c2 running", log: unevenLog, runs: "a b c1 c2 c2 c3 d"},
		{name: "command-mid-step", graph: handOffGraph, hang: "slow",
			stored: func(c *statgraph.Checkpoint) bool {
				var names []string
				for _, pw := range c.Pending {
					names = append(names, pw.Node)
				}
				return slices.Contains(names, "alice") && slices.Contains(names, "__goto__:alice")
			},
			point: "alice's update and hand-off stored, slow running",
			log:   []string{"alice", "slow", "bob"}, runs: "alice bob slow slow"},
		{name: "command-next-step", graph: handOffGraph, hang: "bob", stored: nextHas("bob"),
			point: "alice's hand-off to bob stored, bob running",
			log:   []string{"alice", "slow", "bob"}, runs: "alice bob bob slow"},
	}
}

// RunFeatureKill is the crash test of waiting joins, WithDefer nodes and
// Command hand-offs with real processes, under DurabilitySync. For each
// case it runs a graph in the test binary's test helperTest (which calls
// KillHelper), kills that process with SIGKILL at a point where finished
// work is stored, resumes the thread here on a store of its own, and
// checks the final state and how often each node body ran across both
// processes: only the node that was running when the process was killed
// runs again.
//   - join: a -> {b, c1 -> c2 -> c3} with AddJoin([b, c3], d), killed while
//     c2 runs (b has arrived at the join): d runs once, after c3, seeing
//     both branches' updates. Mirrors LangGraph's test_pregel.py
//     test_in_one_fan_out_state_graph_waiting_edge (add_edge([a, b], c))
//     recovered as in test_checkpoint_recovery.
//   - defer: the same with b -> d and d WithDefer. Mirrors
//     test_in_one_fan_out_state_graph_defer_node, recovered likewise.
//   - command-mid-step: alice, a command node, hands off to bob in a step
//     beside slow, and the process is killed while slow runs once alice's
//     update and hand-off are stored: alice does not run again, bob runs
//     once. Mirrors the Command(goto=...) hand-off of
//     test_command_goto_with_static_breakpoints with the put_writes
//     recovery of test_pending_writes_resume.
//   - command-next-step: killed while bob, handed off to, runs: bob runs
//     again, alice does not.
func RunFeatureKill(t *testing.T, helperTest string, ks KillStore) {
	for _, c := range featureCases() {
		t.Run(c.name, func(t *testing.T) { runKillCase(t, helperTest, ks, c) })
	}
}

// runDurabilityChainKill runs the durability chain cases (see
// durabilityChainCases).
func runDurabilityChainKill(t *testing.T, helperTest string, ks KillStore) {
	for _, c := range durabilityChainCases() {
		t.Run(c.name, func(t *testing.T) { runKillCase(t, helperTest, ks, c) })
	}
}

// runKillCase runs c in a helper process, kills it at c's kill point, and
// resumes and checks the thread here.
func runKillCase(t *testing.T, helperTest string, ks KillStore, c killCase) {
	ctx := context.Background()
	place := ks.New(t)
	runs := filepath.Join(t.TempDir(), "runs")
	store, err := ks.Open(ctx, place)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(store)
	killAt(t, helperTest, []string{killPlace + "=" + place, killRuns + "=" + runs, killCaseEnv + "=" + c.name}, runs,
		func() bool {
			if !strings.Contains(readRuns(runs), c.hang+"\n") {
				return false
			}
			if c.stored == nil {
				return true
			}
			latest, err := store.Get(ctx, "killed", 0)
			return err == nil && c.stored(latest)
		}, c.hang+" running, "+c.point)

	g, err := c.graph(store, runs, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("killed"), statgraph.WithDurability(c.mode))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Log, c.log) {
		t.Errorf("final log %q; want %q", out.Log, c.log)
	}
	got := strings.Fields(readRuns(runs))
	slices.Sort(got)
	if strings.Join(got, " ") != c.runs {
		t.Errorf("node bodies run across both processes: %q; want %q", strings.Join(got, " "), c.runs)
	}
}

// helperKillCase is KillHelper's body for the kill case named name: it
// runs the case's graph on store until the process is killed.
func helperKillCase(t *testing.T, store statgraph.Checkpointer, name string) {
	all := append(durabilityChainCases(), featureCases()...)
	k := slices.IndexFunc(all, func(c killCase) bool { return c.name == name })
	if k < 0 {
		t.Fatalf("no kill case %q", name)
	}
	c := all[k]
	runs := os.Getenv(killRuns)
	if c.slowWrite {
		store = slowWrite{Checkpointer: store, runs: runs, node: c.hang}
	}
	g, err := c.graph(store, runs, c.hang)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(context.Background(), st{}, statgraph.WithThread("killed"), statgraph.WithDurability(c.mode))
	t.Fatalf("the run ended (%v); it should have been killed while %s ran", err, c.hang)
}

// slowWrite is a store whose write of the checkpoint that leads to node
// (Next is [node]) is slow: it lasts until node starts (and then until the
// process is killed: the write is in flight at the crash), or 2 s, which
// leaves a loaded machine time to start node when the run does not wait
// for the write.
type slowWrite struct {
	statgraph.Checkpointer
	runs, node string
}

func (s slowWrite) Put(ctx context.Context, cp *statgraph.Checkpoint) error {
	if slices.Equal(cp.Next, []string{s.node}) {
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
			if strings.Contains(readRuns(s.runs), s.node+"\n") {
				select {} // until killed
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return s.Checkpointer.Put(ctx, cp)
}

// killAt runs the test helperTest of the test binary in a new process with
// env added to its environment, waits until ready reports true, and kills
// the process with SIGKILL. It fails t if ready is not true within 60 s,
// saying that the helper never reached point and what it ran (the file
// runs).
func killAt(t *testing.T, helperTest string, env []string, runs string, ready func() bool, point string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+helperTest+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for !ready() {
		if time.Now().After(deadline) {
			t.Fatalf("the helper never reached the kill point (%s); it ran %q", point, readRuns(runs))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
}
