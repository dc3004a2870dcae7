package durable_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres/postgrestest"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/statgraph/drain"
	"github.com/statgraph/statgraph/statgraph/durable"
)

// counter counts runs by name; safe for concurrent use.
type counter struct {
	mu sync.Mutex // guards n
	n  map[string]int
}

func (c *counter) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// stores opens each checkpointer the functional API must work on;
// Postgres only with STATGRAPH_TEST_POSTGRES (postgrestest).
func stores(t *testing.T) map[string]func(t *testing.T) statgraph.Checkpointer {
	return map[string]func(t *testing.T) statgraph.Checkpointer{
		"memory":         func(*testing.T) statgraph.Checkpointer { return statgraph.NewMemoryCheckpointer(false) },
		"memory-encoded": func(*testing.T) statgraph.Checkpointer { return statgraph.NewMemoryCheckpointer(true) },
		"sqlite": func(t *testing.T) statgraph.Checkpointer {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cp.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(t *testing.T) statgraph.Checkpointer {
			conn := postgrestest.ConnString(t)
			st, err := postgres.Open(context.Background(), conn, postgres.Schema(postgrestest.Schema(t, conn)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
}

// TestInterruptsReplayFinishedTasks: a task that pauses, then the
// entrypoint pausing after it, each answered with Resume. The finished
// tasks run once across the three invocations, the pausing task runs
// again only for the pause it raised, and each answer reaches the
// Interrupt it was given to (a replayed task passes over its interrupt);
// on every checkpointer.
func TestInterruptsReplayFinishedTasks(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			var runs counter
			double := durable.NewTask("double", func(_ context.Context, n int) (int, error) {
				runs.add("double")
				return 2 * n, nil
			})
			approve := durable.NewTask("approve", func(ctx context.Context, n int) (string, error) {
				runs.add("approve")
				return durable.Interrupt[string](ctx, fmt.Sprintf("approve %d?", n))
			})
			w, err := durable.New("flow", open(t), func(ctx context.Context, n int) (string, error) {
				d, err := double.Do(ctx, n)
				if err != nil {
					return "", err
				}
				verdict, err := approve.Do(ctx, d)
				if err != nil {
					return "", err
				}
				note, err := durable.Interrupt[string](ctx, "a note?")
				if err != nil {
					return "", err
				}
				last, err := double.Do(ctx, d)
				return fmt.Sprintf("%d %s %s %d", d, verdict, note, last), err
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_, err = w.Invoke(ctx, "t", 5)
			pause, ok := errors.AsType[interface {
				error
				Interrupts() []statgraph.Interruption
			}](err)
			if !errors.Is(err, statgraph.ErrInterrupted) || !ok || string(pause.Interrupts()[0].Payload) != `"approve 10?"` {
				t.Fatalf("first run: got %v; want the pause inside approve", err)
			}
			if _, err := w.Resume(ctx, "t", "yes"); !errors.Is(err, statgraph.ErrInterrupted) {
				t.Fatalf("first resume: got %v; want the entrypoint's pause", err)
			}
			out, err := w.Resume(ctx, "t", "ok")
			if err != nil {
				t.Fatal(err)
			}
			if out != "10 yes ok 20" {
				t.Errorf("output %q; want %q (each answer where it was given)", out, "10 yes ok 20")
			}
			if got := runs.get("double"); got != 2 {
				t.Errorf("double ran %d times; want 2 (once per call, replayed after)", got)
			}
			if got := runs.get("approve"); got != 2 {
				t.Errorf("approve ran %d times; want 2 (paused, then answered; replayed after)", got)
			}
			// A new run of the finished thread replays nothing of the last.
			if out, err := w.Invoke(ctx, "t", 1); !errors.Is(err, statgraph.ErrInterrupted) || out != "" {
				t.Fatalf("second run: got %q, %v; want approve's pause", out, err)
			}
			if got := runs.get("double"); got != 3 {
				t.Errorf("double ran %d times after a second run; want 3", got)
			}
		})
	}
}

// TestTasksRunInParallel: three tasks started before the entrypoint waits
// are all running at once (each waits for the other two).
func TestTasksRunInParallel(t *testing.T) {
	var (
		mu      sync.Mutex
		running int
		all     = make(chan struct{})
	)
	wait := durable.NewTask("wait", func(ctx context.Context, i int) (int, error) {
		mu.Lock()
		if running++; running == 3 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return i, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	w, err := durable.New("fan", statgraph.NewMemoryCheckpointer(false), func(ctx context.Context, n int) (int, error) {
		fs := make([]*durable.Future[int], n)
		for i := range fs {
			fs[i] = wait.Call(ctx, i)
		}
		sum := 0
		for _, f := range fs {
			v, err := f.Get(ctx)
			if err != nil {
				return 0, err
			}
			sum += v
		}
		return sum, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if sum, err := w.Invoke(ctx, "t", 3); err != nil || sum != 3 {
		t.Fatalf("got %d, %v; want 3 (the three tasks never ran together?)", sum, err)
	}
}

// TestRetryAndRerunAfterFailure: a task retried under its policy until it
// succeeds; the entrypoint then fails, and running the thread again
// replays the finished task instead of retrying it again.
func TestRetryAndRerunAfterFailure(t *testing.T) {
	var runs counter
	flaky := durable.NewTask("flaky", func(_ context.Context, s string) (string, error) {
		runs.add("flaky")
		if runs.get("flaky") < 3 {
			return "", errors.New("transient")
		}
		return s + "!", nil
	}, durable.WithRetry(statgraph.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Millisecond}))
	fail := true
	w, err := durable.New("retry", statgraph.NewMemoryCheckpointer(true), func(ctx context.Context, s string) (string, error) {
		out, err := flaky.Do(ctx, s)
		if err != nil {
			return "", err
		}
		if fail {
			return "", errors.New("entrypoint failed after the task")
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Invoke(context.Background(), "t", "hi"); err == nil || !strings.Contains(err.Error(), "entrypoint failed") {
		t.Fatalf("first run: %v; want the entrypoint's error", err)
	}
	if got := runs.get("flaky"); got != 3 {
		t.Fatalf("flaky ran %d times; want 3 (two failures retried)", got)
	}
	fail = false
	if out, err := w.Invoke(context.Background(), "t", "ignored"); err != nil || out != "hi!" {
		t.Fatalf("second run: %q, %v; want hi! (the unfinished run continued with its input)", out, err)
	}
	if got := runs.get("flaky"); got != 3 {
		t.Errorf("flaky ran %d times after the thread continued; want 3 (replayed)", got)
	}
}

// TestNondeterministicReplay: an entrypoint that calls another task (or
// the same task with another input) where the run it replays called one
// fails with ErrNondeterministic, naming both calls; the records are kept,
// so the original code continues the run.
func TestNondeterministicReplay(t *testing.T) {
	var runs counter
	a := durable.NewTask("a", func(_ context.Context, n int) (int, error) { runs.add("a"); return n + 1, nil })
	b := durable.NewTask("b", func(_ context.Context, n int) (int, error) { runs.add("b"); return n + 2, nil })
	variant := "original"
	w, err := durable.New("order", statgraph.NewMemoryCheckpointer(false), func(ctx context.Context, n int) (int, error) {
		first, second := a, b
		in := n
		switch variant {
		case "swapped":
			first, second = b, a
		case "input":
			in = n + 100
		}
		x, err := first.Do(ctx, in)
		if err != nil {
			return 0, err
		}
		if variant == "original-failing" {
			return 0, errors.New("stop after the first task")
		}
		return second.Do(ctx, x)
	})
	if err != nil {
		t.Fatal(err)
	}
	variant = "original-failing"
	if _, err := w.Invoke(context.Background(), "t", 1); err == nil {
		t.Fatal("the failing run succeeded")
	}
	for _, v := range []string{"swapped", "input"} {
		variant = v
		_, err := w.Invoke(context.Background(), "t", 1)
		if !errors.Is(err, durable.ErrNondeterministic) {
			t.Fatalf("%s: got %v; want ErrNondeterministic", v, err)
		}
		if !strings.Contains(err.Error(), `the run being replayed called task "a"`) {
			t.Errorf("%s: the error does not name the recorded call: %v", v, err)
		}
	}
	variant = "original"
	if out, err := w.Invoke(context.Background(), "t", 1); err != nil || out != 4 {
		t.Fatalf("original code: %d, %v; want 4", out, err)
	}
	if runs.get("a") != 1 || runs.get("b") != 1 {
		t.Errorf("runs a=%d b=%d; want 1 each (nothing run by the refused replays)", runs.get("a"), runs.get("b"))
	}
}

// TestCacheAcrossThreads: a cached task called with the same input on two
// threads runs once; another input runs again.
func TestCacheAcrossThreads(t *testing.T) {
	var runs counter
	slow := durable.NewTask("slow", func(_ context.Context, s string) (int, error) { runs.add(s); return len(s), nil },
		durable.WithCache(time.Hour))
	w, err := durable.New("cached", statgraph.NewMemoryCheckpointer(false), func(ctx context.Context, s string) (int, error) {
		return slow.Do(ctx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, thread := range []string{"t1", "t2"} {
		if n, err := w.Invoke(context.Background(), thread, "abc"); err != nil || n != 3 {
			t.Fatalf("%s: %d, %v", thread, n, err)
		}
	}
	w.Invoke(context.Background(), "t3", "other")
	if runs.get("abc") != 1 || runs.get("other") != 1 {
		t.Errorf("runs %v; want abc once (cached), other once", runs.n)
	}
}

// TestCallsOutsideAWorkflow: a task called without an entrypoint's ctx, or
// from inside another task, fails with a message saying what to do.
func TestCallsOutsideAWorkflow(t *testing.T) {
	inner := durable.NewTask("inner", func(_ context.Context, n int) (int, error) { return n, nil })
	if _, err := inner.Do(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "called outside a workflow") {
		t.Errorf("outside: %v", err)
	}
	outer := durable.NewTask("outer", func(ctx context.Context, n int) (int, error) { return inner.Do(ctx, n) })
	w, err := durable.New("nest", statgraph.NewMemoryCheckpointer(false), func(ctx context.Context, n int) (int, error) { return outer.Do(ctx, n) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Invoke(context.Background(), "t", 1); err == nil || !strings.Contains(err.Error(), "from inside another task") {
		t.Errorf("nested: %v", err)
	}
	if _, err := durable.New[int, int]("none", nil, nil); err == nil {
		t.Error("a workflow without a checkpointer was accepted")
	}
}

// TestDrainStartsNoNewTask: a drain requested while a task runs lets it
// finish and be recorded, starts no further task, and fails the run with
// drain.ErrDrained; running the thread again runs only the rest.
func TestDrainStartsNoNewTask(t *testing.T) {
	var runs counter
	var request func()
	step := durable.NewTask("step", func(_ context.Context, name string) (string, error) {
		runs.add(name)
		if name == "b" && request != nil {
			request()
		}
		return name, nil
	})
	w, err := durable.New("drained", statgraph.NewMemoryCheckpointer(false), func(ctx context.Context, names []string) (string, error) {
		var out []string
		for _, n := range names {
			v, err := step.Do(ctx, n)
			if err != nil {
				return "", err
			}
			out = append(out, v)
		}
		return strings.Join(out, ""), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, req := drain.WithRequest(context.Background())
	request = req
	if _, err := w.Invoke(ctx, "t", []string{"a", "b", "c"}); !errors.Is(err, drain.ErrDrained) {
		t.Fatalf("drained run: got %v; want ErrDrained", err)
	}
	if runs.get("c") != 0 {
		t.Fatal("task c started after the drain was requested")
	}
	request = nil
	if out, err := w.Invoke(context.Background(), "t", nil); err != nil || out != "abc" {
		t.Fatalf("continued run: %q, %v; want abc", out, err)
	}
	for _, n := range []string{"a", "b", "c"} {
		if runs.get(n) != 1 {
			t.Errorf("task %s ran %d times; want 1", n, runs.get(n))
		}
	}
}

// TestTaskTimeoutAndStream: a task with WithTimeout is cancelled at its
// deadline and its call fails with the task named, and the workflow's
// Stream shows the entrypoint node's run, the value it writes and its end
// with the task's error.
func TestTaskTimeoutAndStream(t *testing.T) {
	slow := durable.NewTask("slow", func(ctx context.Context, s string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, durable.WithTimeout(20*time.Millisecond))
	w, err := durable.New("timeout", statgraph.NewMemoryCheckpointer(true), func(ctx context.Context, s string) (string, error) {
		statgraph.RuntimeOf(ctx).Write("calling slow")
		return slow.Do(ctx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []statgraph.EventKind
	var wrote []any
	var runErr error
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // not the task's deadline: a run that ignored it ends here
	defer cancel()
	start := time.Now()
	for ev, err := range w.Stream(ctx, "t", "hi", statgraph.WithEvents(statgraph.EventNodeStart, statgraph.EventCustom, statgraph.EventNodeEnd)) {
		if err != nil {
			runErr = err
			break
		}
		kinds = append(kinds, ev.Kind)
		if ev.Kind == statgraph.EventCustom {
			wrote = append(wrote, ev.Custom)
		}
	}
	if !errors.Is(runErr, context.DeadlineExceeded) || !strings.Contains(runErr.Error(), `node "slow"`) {
		t.Fatalf("the run's error is %v; want the task's deadline, naming it", runErr)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the run took %v; the task's 20ms deadline did not end it", took)
	}
	if len(kinds) == 0 || kinds[0] != statgraph.EventNodeStart {
		t.Errorf("events %v; want the entrypoint node's start first", kinds)
	}
	if len(wrote) != 1 || wrote[0] != "calling slow" {
		t.Errorf("custom values %v; want the entrypoint's one write", wrote)
	}
}
