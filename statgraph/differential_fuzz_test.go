package statgraph_test

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// diff compares the model's outcome with the engine's and describes the
// first difference, or returns "".
func diff(want, got outcome) string {
	if w, g := strings.Join(want.trace, "\n"), strings.Join(got.trace, "\n"); w != g {
		return fmt.Sprintf("traces differ:\nmodel:\n%s\nengine:\n%s", w, g)
	}
	if want.err != got.err {
		return fmt.Sprintf("errors differ: model %q, engine %q", want.err, got.err)
	}
	if !slices.Equal(want.state.Log, got.state.Log) || want.state.Sum != got.state.Sum {
		return fmt.Sprintf("final states differ: model %v, engine %v", want.state, got.state)
	}
	if !maps.Equal(want.runs, got.runs) {
		return fmt.Sprintf("node runs differ: model %v, engine %v", want.runs, got.runs)
	}
	nonzero := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range m {
			if v != 0 {
				out[k] = v
			}
		}
		return out
	}
	if w, g := nonzero(want.counters), nonzero(got.counters); !maps.Equal(w, g) {
		return fmt.Sprintf("checkpoint counters differ: model %v, engine %v", w, g)
	}
	return ""
}

// crashDiff compares the model's outcome with that of an engine's run
// whose store failed once: the end state, error and checkpoint counters
// must be those of the uninterrupted run (the trace and the node runs
// differ by the steps run again).
func crashDiff(want, got outcome) string {
	want.trace, got.trace = nil, nil
	want.runs, got.runs = nil, nil
	return diff(want, got)
}

// checkSeed runs the graph generated from seed on the model and on the
// engine and fails t on any difference. It reports whether the graph
// compiled.
func checkSeed(t *testing.T, seed uint64) bool {
	t.Helper()
	compiled, err := checkSeedErr(seed)
	if err != nil {
		t.Fatal(err)
	}
	return compiled
}

// checkSeedErr is checkSeed's comparison: an error describing the first
// difference, and whether the graph compiled.
func checkSeedErr(seed uint64) (compiled bool, err error) {
	g := genFrom(seed)
	got, cp, ok := realRun(g, 0, memoryStore)
	if !ok {
		return false, nil
	}
	want := refRun(g)
	if d := diff(want, got); d != "" {
		return true, fmt.Errorf("seed %d, graph:\n%s%s", seed, g, d)
	}
	// Crash equivalence: the same run with one of its writes failing,
	// then continued, ends as the uninterrupted one.
	if cp.writes == 0 {
		return true, nil
	}
	failAt := 1 + int(seed>>8)%cp.writes
	crashed, _, _ := realRun(g, failAt, memoryStore)
	if !slices.Contains(crashed.trace, "crash") {
		return true, fmt.Errorf("seed %d: write %d of %d failed, and no run reported it; graph:\n%s", seed, failAt, cp.writes, g)
	}
	if d := crashDiff(want, crashed); d != "" {
		return true, fmt.Errorf("seed %d, write %d of %d failing, graph:\n%s%s\ntrace:\n%s", seed, failAt, cp.writes, g, d, strings.Join(crashed.trace, "\n"))
	}
	return true, nil
}

// TestDifferential runs 10,000 generated graphs (seeds 1..10000) on the
// model and the engine, each of them twice on the engine: once as it is,
// once with one write of its store failing and the thread continued
// (crash equivalence). Under the race detector, whose bookkeeping makes
// it several times slower, it runs 1,000 (make test runs the 10,000 in
// its pass without it); -short runs 200. It asserts that every pair of
// the generator's features occurred together in one of the graphs that
// compiled.
func TestDifferential(t *testing.T) {
	n := uint64(10000)
	switch {
	case testing.Short():
		n = 200
	case raceBuild:
		n = 1000
	}
	t0 := time.Now()
	compiled := 0
	pairs := map[[2]string]int{}
	for seed := uint64(1); seed <= n; seed++ {
		if !checkSeed(t, seed) {
			continue
		}
		compiled++
		fs := slices.Sorted(maps.Keys(genFrom(seed).features))
		for i, a := range fs {
			for _, b := range fs[i+1:] {
				pairs[[2]string{a, b}]++
			}
		}
	}
	el := time.Since(t0)
	t.Logf("%d graphs generated, %d compiled and agreed, in %v (%.0f graphs/s)", n, compiled, el.Round(time.Millisecond), float64(n)/el.Seconds())
	if compiled < int(n)/4 {
		t.Errorf("only %d of %d generated graphs compiled: the generator no longer exercises the engine", compiled, n)
	}
	all := slices.Sorted(maps.Keys(allFeatures()))
	covered := 0
	for i, a := range all {
		for _, b := range all[i+1:] {
			if pairs[[2]string{a, b}] > 0 {
				covered++
			} else if !testing.Short() && !exclusive(a, b) {
				t.Errorf("features %q and %q never occurred together in a compiled graph", a, b)
			}
		}
	}
	t.Logf("%d features, %d of their %d pairs covered (pairs of durability modes exclude each other)", len(all), covered, len(all)*(len(all)-1)/2)
}

// allFeatures names every feature the generator draws.
func allFeatures() map[string]bool {
	all := map[string]bool{}
	for seed := uint64(1); seed <= 2000; seed++ {
		maps.Copy(all, genFrom(seed).features)
	}
	return all
}

// exclusive reports whether two features cannot occur in one graph: two
// durability modes.
func exclusive(a, b string) bool {
	return strings.HasPrefix(a, "durability ") && strings.HasPrefix(b, "durability ")
}

// FuzzDifferential compares the model and the engine on the graph
// generated from the fuzzer's seed; its corpus is in
// testdata/fuzz/FuzzDifferential.
func FuzzDifferential(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42} {
		f.Add(binary.LittleEndian.AppendUint64(nil, seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var buf [8]byte
		copy(buf[:], b)
		checkSeed(t, binary.LittleEndian.Uint64(buf[:]))
	})
}
