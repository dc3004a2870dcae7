package agents

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/verifier"
)

// benchAttempts is how many attempts each task of the "attempt" benchmark
// makes: the verifier fails all but the last, so the planner's one call is
// shared by several attempts as in a real retry loop.
const benchAttempts = 5

// instantModel answers at once: the planner with a plan, an executor turn
// with a write_file of new content (so every attempt makes a commit) and the
// turn after it with finish.
func instantModel(b *testing.B) *llmtest.Server {
	m := llmtest.NewServer(b)
	var n atomic.Int64
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		switch {
		case len(req.Tools) == 0:
			return planAnswer()
		case req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool:
			return llmtest.ToolCalls(tokensPerCall, llmtest.Finish("wrote the attempt file"))
		}
		return llmtest.ToolCalls(tokensPerCall, llmtest.WriteFile("bench/attempt.txt", fmt.Sprintf("attempt %d\n", n.Add(1))))
	})
	return m
}

// benchWorkspace prepares a workspace from this repository, or skips the
// benchmark when it is not a git checkout.
func benchWorkspace(b *testing.B, id string) *workspace.Workspace {
	src, err := filepath.Abs("..")
	require.NoError(b, err)
	if _, err := os.Stat(filepath.Join(src, ".git")); err != nil {
		b.Skipf("%s is not a git repository: %v", src, err)
	}
	ws, err := workspace.Prepare(context.Background(), workspace.Options{Source: src, TaskID: id, Root: b.TempDir()})
	require.NoError(b, err)
	b.Cleanup(func() { ws.Close() })
	return ws
}

var trueCheck = []verifier.Check{{Name: "true", Kind: verifier.KindTest, Command: verifier.Command{Argv: []string{"true"}}}}

// BenchmarkAttemptOverhead measures the orchestration cost of one attempt
// on a workspace of this repository with a model that answers instantly
// and a check that is `true`. "attempt" is the whole graph (reported as
// ms/attempt, the planner's call shared by benchAttempts attempts, and as
// cpu-ms/attempt, the CPU time of this process, which leaves out the check's
// own process and the load of other programs); the
// other sub-benchmarks are its parts: the commit, the tree hash, prompt
// building, the checkpoints of a one-node run, the model round trips of an attempt, the `true`
// check and the planner.
func BenchmarkAttemptOverhead(b *testing.B) {
	ctx := context.Background()
	s := &llmtest.SleepRecorder{}

	b.Run("attempt", func(b *testing.B) {
		ws := benchWorkspace(b, "bench-attempt")
		c := newClient(b, instantModel(b), s, nil)
		checks := ChecksVerifier{Checks: trueCheck, Workdir: ws.Dir()}
		// The verifier runs the real check, then fails all but the last
		// attempt so the loop goes round.
		v := VerifierFunc(func(ctx context.Context, st TaskState) (verifier.Verification, error) {
			out, err := checks.Verify(ctx, st)
			if st.RetryCount+1 < benchAttempts {
				out.TestsPassed, out.Errors, out.Feedback = false, []string{"bench: not yet"}, strings.Repeat("feedback line\n", 500)
			}
			return out, err
		})
		cp := statgraph.NewMemoryCheckpointer(true)
		g, err := NewGraph(Config{
			Planner:   LLMPlanner{Client: c, Workdir: ws.Dir()},
			Executor:  LLMExecutor{Client: c, FS: ws.FS()},
			Verifier:  v,
			Workspace: ws,
		}, statgraph.WithCheckpointer(cp))
		require.NoError(b, err)
		b.ResetTimer()
		cpu := processCPU()
		for i := range b.N {
			out, err := g.Invoke(ctx, TaskState{Task: task("bench"), MaxRetries: benchAttempts}, statgraph.WithThread(fmt.Sprint("bench-", i)))
			if err != nil || out.Phase != PhaseDone || out.RetryCount != benchAttempts {
				b.Fatalf("run %d: phase %q after %d attempts: %v", i, out.Phase, out.RetryCount, err)
			}
		}
		attempts := float64(b.N * benchAttempts)
		b.ReportMetric(float64(b.Elapsed())/1e6/attempts, "ms/attempt")
		b.ReportMetric(float64(processCPU()-cpu)/1e6/attempts, "cpu-ms/attempt")
	})

	b.Run("commit", func(b *testing.B) {
		ws := benchWorkspace(b, "bench-commit")
		fsys := ws.FS()
		b.ResetTimer()
		for i := range b.N {
			if err := fsys.WriteFile("bench/attempt.txt", fmt.Sprintf("attempt %d\n", i)); err != nil {
				b.Fatal(err)
			}
			if _, changed, err := ws.Commit(ctx, i+1, "bench"); err != nil || !changed {
				b.Fatalf("commit %d: changed %v, %v", i, changed, err)
			}
		}
	})

	b.Run("treehash", func(b *testing.B) {
		ws := benchWorkspace(b, "bench-tree")
		b.ResetTimer()
		for range b.N {
			if _, err := ws.TreeHash(); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("prompts", func(b *testing.B) {
		ws := benchWorkspace(b, "bench-prompts")
		req := llm.ExecRequest{
			Task: task("bench").Info(), Attempt: 2, MaxAttempts: 3,
			Plan:     Plan{Summary: "s", Steps: []string{"a", "b"}, Files: []string{"x.go"}, TestStrategy: "go test"},
			Feedback: strings.Repeat("--- FAIL: TestX (0.00s)\n", verifier.DefaultFeedbackBytes/24),
		}
		b.ResetTimer()
		for range b.N {
			if _, err := llm.RepoView(ws.Dir(), 300); err != nil {
				b.Fatal(err)
			}
			if p := llm.BuildExecutorPrompt(req); len(p) < verifier.DefaultFeedbackBytes {
				b.Fatalf("prompt of %d bytes lacks the feedback", len(p))
			}
		}
	})

	b.Run("checkpoint", func(b *testing.B) {
		// A one-node run on a thread, with the default codec and a store
		// that keeps encoded states: its input is saved in full and the
		// node's step as a delta (one more attempt), as the engine stores a
		// step of the task graph.
		prev, cur := benchState(4), benchState(5)
		g, err := statgraph.New[TaskState]().
			AddNode("verify", func(context.Context, TaskState) (TaskState, error) { return cur, nil }).
			AddEdge(statgraph.Start, "verify").AddEdge("verify", statgraph.End).
			Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
		require.NoError(b, err)
		b.ResetTimer()
		for i := range b.N {
			if _, err := g.Invoke(ctx, prev, statgraph.WithThread(fmt.Sprintf("bench-%d", i))); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("model round trips", func(b *testing.B) {
		ws := benchWorkspace(b, "bench-model")
		e := LLMExecutor{Client: newClient(b, instantModel(b), s, nil), FS: ws.FS()}
		st := TaskState{Task: task("bench"), MaxRetries: 3}
		b.ResetTimer()
		for range b.N {
			if _, err := e.Execute(ctx, st); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("true check", func(b *testing.B) {
		v := ChecksVerifier{Checks: trueCheck, Workdir: b.TempDir()}
		b.ResetTimer()
		for range b.N {
			if out, err := v.Verify(ctx, TaskState{}); err != nil || !out.Passed() {
				b.Fatalf("true failed: %+v %v", out, err)
			}
		}
	})

	b.Run("planner", func(b *testing.B) {
		ws := benchWorkspace(b, "bench-plan")
		p := LLMPlanner{Client: newClient(b, instantModel(b), s, nil), Workdir: ws.Dir()}
		b.ResetTimer()
		for range b.N {
			if _, err := p.Plan(ctx, TaskState{Task: task("bench")}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchState is a task state after n failed attempts, each with 8 KiB of
// feedback, as the checkpoint after an attempt holds.
func benchState(n int) TaskState {
	s := TaskState{Task: task("bench"), MaxRetries: 10, RetryCount: n, Phase: PhaseVerify}
	for k := range n {
		fb := strings.Repeat("--- FAIL: TestX (0.00s)\n", verifier.DefaultFeedbackBytes/24)
		s.ErrorHistory = append(s.ErrorHistory, fmt.Sprintf("Retry %d: tests: 1 failed (TestX)", k))
		s.Attempts = append(s.Attempts, Attempt{N: k + 1, Summary: "try", Commit: strings.Repeat("a", 40), Tree: strings.Repeat("b", 40), Feedback: fb, Started: time.Unix(0, 0)})
	}
	s.Verification = verifier.Verification{Errors: []string{"tests: 1 failed (TestX)"}, Feedback: s.Attempts[n-1].Feedback}
	return s
}
