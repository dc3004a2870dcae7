// Command bestofn measures best-of-N (tasks.json "attempts"/"candidates")
// on the built binary with stand-in agents:
//
//   - wall: the wall time of one task whose stand-in agent works for
//     -work (a sleep, then the file the test wants), run as a single
//     attempt and as -attempts candidates side by side, alternating rep by
//     rep in one process; medians and their ratio. Every candidate gets an
//     advisory warning, so none wins outright and all run to their end
//     (the worst case: a zero-warning pass stops the rest at once).
//
//   - flaky: the pass rate of -tasks tasks whose stand-in "flaky agent"
//     passes with probability -p, as decided beforehand for each (task,
//     candidate) by a generator seeded with -seed, for N = 1, 3, 5
//     candidates, beside the rate the seeded draws predict (a task passes
//     when one of its N draws does) and the formula 1 - (1-p)^N.
//
//     go build -o /tmp/statgraph ./cmd/statgraph
//     go run ./tests/bench/bestofn -bin /tmp/statgraph [-reps 5] [-work 2s] [-attempts 3] [-p 0.3] [-tasks 40] [-seed 1]
//
// Each run has a fresh repository and STATGRAPH_HOME. -no-sandbox runs
// the checks and agents without bubblewrap.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/statgraph/statgraph/tests/bench/internal/harness"
)

func main() {
	bin := flag.String("bin", "", "the statgraph binary")
	reps := flag.Int("reps", 5, "wall: runs of each kind")
	work := flag.Duration("work", 2*time.Second, "wall: the stand-in agent's work per attempt")
	attempts := flag.Int("attempts", 3, "wall: candidates against one attempt")
	p := flag.Float64("p", 0.3, "flaky: probability that one candidate passes")
	ntasks := flag.Int("tasks", 40, "flaky: tasks per N")
	seed := flag.Uint64("seed", 1, "flaky: seed of the pass/fail draws")
	noSandbox := flag.Bool("no-sandbox", false, "run checks and agents without the sandbox")
	flag.Parse()
	if *bin == "" {
		harness.Die("give the statgraph binary with -bin (go build -o /tmp/statgraph ./cmd/statgraph)", nil)
	}
	extra := []string{}
	if *noSandbox {
		extra = append(extra, "--no-sandbox")
	}
	fmt.Printf("best-of-N bench, load %s\n", harness.LoadAvg())

	agent := fmt.Sprintf("sleep %g; echo ok > ok.txt", work.Seconds())
	var one, many []float64
	for r := 0; r < *reps; r++ {
		one = append(one, wall(*bin, extra, agent, 1))
		many = append(many, wall(*bin, extra, agent, *attempts))
	}
	m1, mn := harness.Median(one), harness.Median(many)
	fmt.Printf("wall: 1 attempt %.2fs, %d candidates %.2fs (medians of %d), ratio %.2f, stand-in work %s\n", m1, *attempts, mn, *reps, mn/m1, work)

	rng := rand.New(rand.NewPCG(*seed, *seed))
	var table strings.Builder
	pass := map[[2]int]bool{}
	for id := 1; id <= *ntasks; id++ {
		for k := 1; k <= 5; k++ {
			if rng.Float64() < *p {
				pass[[2]int{id, k}] = true
				fmt.Fprintf(&table, "%d %d\n", id, k)
			}
		}
	}
	for _, n := range []int{1, 3, 5} {
		predicted := 0
		for id := 1; id <= *ntasks; id++ {
			for k := 1; k <= n; k++ {
				if pass[[2]int{id, k}] {
					predicted++
					break
				}
			}
		}
		got := flaky(*bin, extra, table.String(), *ntasks, n)
		fmt.Printf("flaky p=%.2f N=%d: pass rate %.3f (%d/%d tasks), seeded draws predict %.3f, 1-(1-p)^N = %.3f\n",
			*p, n, float64(got)/float64(*ntasks), got, *ntasks, float64(predicted)/float64(*ntasks), 1-math.Pow(1-*p, float64(n)))
	}
}

// wall runs one task of n candidates whose agent runs script, and returns
// the run's wall time in seconds.
func wall(bin string, extra []string, script string, n int) float64 {
	cands := make([]string, n)
	for i := range cands {
		cands[i] = `{"executor": {"command": ["sh", "-c", ` + quote(script) + `]}}`
	}
	tasks := `{"tasks": [{"id": 1, "title": "write ok.txt", "max_retries": 1, "test_cmd": "test -f ok.txt",
		"checks": [{"name": "style", "cmd": "false", "mode": "advisory"}], "candidates": [` + strings.Join(cands, ", ") + `]}]}`
	dir := repo(map[string]string{"tasks.json": tasks})
	defer os.RemoveAll(filepath.Dir(dir))
	start := time.Now()
	run(bin, dir, extra)
	return time.Since(start).Seconds()
}

// flaky runs ntasks independent tasks of n candidates each; candidate k of
// task id passes when table has the line "id k". It returns how many tasks
// ended done.
func flaky(bin string, extra []string, table string, ntasks, n int) int {
	var list []string
	for id := 1; id <= ntasks; id++ {
		cands := make([]string, n)
		for k := range cands {
			cands[k] = fmt.Sprintf(`{"executor": {"command": ["sh", "./agent.sh", "{task_id}", "%d"]}}`, k+1)
		}
		list = append(list, fmt.Sprintf(`{"id": %d, "title": "flaky %d", "candidates": [%s]}`, id, id, strings.Join(cands, ", ")))
	}
	tasks := `{"defaults": {"max_retries": 1, "test_cmd": "test -f ok.txt"}, "tasks": [` + strings.Join(list, ", ") + `]}`
	dir := repo(map[string]string{"tasks.json": tasks, "flaky.table": table,
		"agent.sh": "#!/bin/sh\nif grep -qx \"$1 $2\" flaky.table; then echo ok > ok.txt; else echo no > no.txt; fi\n"})
	defer os.RemoveAll(filepath.Dir(dir))
	run(bin, dir, append([]string{"--json"}, extra...))
	data, err := os.ReadFile(filepath.Join(dir, "tasks.json"))
	harness.Must("read tasks.json", err)
	var doc struct {
		Tasks []struct {
			Status string `json:"status"`
		} `json:"tasks"`
	}
	harness.Must("parse tasks.json", json.Unmarshal(data, &doc))
	done := 0
	for _, t := range doc.Tasks {
		if t.Status == "done" {
			done++
		}
	}
	return done
}

// run runs statgraph run in dir with its own state root; exit 1 (a task
// failed) is expected of the flaky runs.
func run(bin, dir string, args []string) {
	cmd := exec.Command(bin, append([]string{"run"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STATGRAPH_HOME="+filepath.Join(filepath.Dir(dir), "home"))
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return
	}
	harness.Must(fmt.Sprintf("statgraph run: %s", out), err)
}

// repo makes a git repository holding files and returns its path.
func repo(files map[string]string) string {
	base, err := os.MkdirTemp("", "bestofn-bench-")
	harness.Must("temp dir", err)
	dir := filepath.Join(base, "repo")
	for name, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		harness.Must("mkdir", os.MkdirAll(dir, 0o755))
		harness.Must("write "+name, os.WriteFile(filepath.Join(dir, name), []byte(content), mode))
	}
	harness.Git(dir, "init", "-q")
	harness.Git(dir, "add", "-A")
	harness.Git(dir, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "init")
	return dir
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
