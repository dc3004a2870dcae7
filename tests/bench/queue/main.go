// Command queue measures scale-out: the wall time of a plan of independent
// stand-in units (each sleeps, then passes a trivial test) run by 1, 2, 4
// ... worker processes on one River queue, and the queue's overhead per
// unit from statgraph_units' timestamps.
//
//	go build -o /tmp/statgraph ./cmd/statgraph
//	go run ./tests/bench/queue -bin /tmp/statgraph -pg postgres://... -units 100 -sleep 2s -workers 1,2,4
//
// Each worker takes one unit at a time (--concurrency 1) and has its own
// state root, as on its own machine; every run gets a fresh database (on
// the server -pg names, dropped after) and a fresh repository and remote.
// -budget N gives the coordinator --budget N, so that the run's spend is
// checked in Postgres before every unit and agent CLI start (see
// docs/scale-out.md); compare with -budget 0 for its cost.
// Per run it prints the wall time, units per second, the speed-up over the
// first run, and the medians of enqueue->start and of start->recorded
// minus the unit's sleep (workspace, checks, commit, push, recording).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/statgraph/statgraph/tests/bench/internal/harness"
)

func main() {
	bin := flag.String("bin", "", "the statgraph binary")
	pg := flag.String("pg", os.Getenv("STATGRAPH_TEST_POSTGRES"), "Postgres URL of a server where databases may be created")
	units := flag.Int("units", 100, "units in the plan")
	sleep := flag.Duration("sleep", 2*time.Second, "each unit's own work")
	workers := flag.String("workers", "1,2,4", "comma-separated worker counts")
	budget := flag.Int("budget", 0, "the coordinator's --budget (0: none): with one, every unit start and agent CLI start reads the run's spend in Postgres")
	flag.Parse()
	if *bin == "" || *pg == "" {
		harness.Die("usage: queue -bin STATGRAPH -pg POSTGRES_URL [-units N] [-sleep D] [-workers 1,2,4]", nil)
	}
	var first float64
	for _, s := range strings.Split(*workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			harness.Die("-workers "+*workers, err)
		}
		load0 := harness.LoadAvg()
		wall, enq, over, c := run(*bin, *pg, n, *units, *sleep, *budget)
		if first == 0 {
			first = wall.Seconds()
		}
		per := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(*units) }
		fmt.Printf("budget=%d workers=%d units=%d sleep=%s wall=%.1fs units/s=%.2f speedup=%.2fx enqueue->start(median)=%s start->recorded-minus-sleep(median)=%s\n",
			*budget, n, *units, *sleep, wall.Seconds(), float64(*units)/wall.Seconds(), first/wall.Seconds(), enq.Round(time.Millisecond), over.Round(time.Millisecond))
		fmt.Printf("  cpu ms/unit: workers=%.0f (own %.0f, processes they started %.0f) coordinator=%.0f postgres=%.0f total=%.0f  load average %s -> %s\n",
			per(c.workers), per(c.workerSelf), per(c.workers-c.workerSelf), per(c.coord), per(c.postgres), per(c.workers+c.coord+c.postgres), load0, harness.LoadAvg())
	}
}

// cpu is the CPU time (user + system) a run spent: the worker processes
// and the coordinator with every process they started (their rusage once
// waited for; workerSelf is the worker processes' own share), and the
// Postgres backends serving the run's database.
type cpu struct{ workers, workerSelf, coord, postgres time.Duration }

func run(bin, pg string, workers, units int, sleep time.Duration, budget int) (wall, enqueueToStart, overhead time.Duration, used cpu) {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "statgraph-bench-queue-")
	harness.Must("temp dir", err)
	defer os.RemoveAll(tmp)
	db := createDB(ctx, pg)
	defer dropDB(ctx, pg, db)

	repo := filepath.Join(tmp, "repo")
	harness.Must("mkdir", os.MkdirAll(repo, 0o755))
	type task struct {
		ID       int            `json:"id"`
		Title    string         `json:"title"`
		Executor map[string]any `json:"executor"`
		TestCmd  []string       `json:"test_cmd"`
	}
	var plan struct {
		Tasks []task `json:"tasks"`
	}
	for i := 1; i <= units; i++ {
		plan.Tasks = append(plan.Tasks, task{ID: i, Title: fmt.Sprint("unit ", i),
			Executor: map[string]any{"command": []string{"sh", "-c", fmt.Sprintf(`sleep %g; echo done > "out-$1.txt"`, sleep.Seconds()), "agent", "{task_id}"}},
			TestCmd:  []string{"true"}})
	}
	data, _ := json.MarshalIndent(plan, "", "  ")
	harness.Must("write tasks.json", os.WriteFile(filepath.Join(repo, "tasks.json"), data, 0o644))
	harness.Git(repo, "init", "-q", "-b", "main")
	harness.Git(repo, "add", "-A")
	harness.Git(repo, "-c", "user.name=bench", "-c", "user.email=bench@invalid", "commit", "-qm", "init")
	remote := filepath.Join(tmp, "remote.git")
	harness.Git(tmp, "clone", "-q", "--bare", repo, remote)
	harness.Sh(tmp, bin, "migrate", "--queue", db)

	var procs []*exec.Cmd
	for i := range workers {
		cmd := exec.Command(bin, "worker", "--queue", db, "--concurrency", "1", "--lease", "10m", "--no-sandbox")
		cmd.Env = append(os.Environ(), "STATGRAPH_HOME="+filepath.Join(tmp, fmt.Sprint("w", i)))
		harness.Must("start worker", cmd.Start())
		procs = append(procs, cmd)
	}
	stopWorkers := func() {
		for _, p := range procs {
			if self, ok := procCPU(p.Process.Pid); ok {
				used.workerSelf += self // the Go process alone, before its exit adds its children's
			}
			p.Process.Signal(syscall.SIGTERM)
			p.Wait()
			used.workers += p.ProcessState.UserTime() + p.ProcessState.SystemTime()
		}
		procs = nil
	}
	defer stopWorkers()
	backends := watchBackends(ctx, pg, db)
	start := time.Now()
	coord := exec.Command(bin, "run", "--queue", db, "--remote", remote, "--plain", "--no-sandbox", "--json", "--budget", strconv.Itoa(budget), "tasks.json")
	coord.Dir = repo
	coord.Env = append(os.Environ(), "STATGRAPH_HOME="+filepath.Join(tmp, "coord"))
	out, err := coord.CombinedOutput()
	wall = time.Since(start)
	if err != nil {
		harness.Die("coordinator: "+string(out), err)
	}
	used.coord = coord.ProcessState.UserTime() + coord.ProcessState.SystemTime()
	stopWorkers()
	used.postgres = backends()

	conn, err := pgx.Connect(ctx, db)
	harness.Must("connect", err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT extract(epoch FROM started_at - enqueued_at), extract(epoch FROM finished_at - started_at) FROM statgraph_units`)
	harness.Must("read statgraph_units", err)
	var enq, over []float64
	for rows.Next() {
		var a, b float64
		harness.Must("scan", rows.Scan(&a, &b))
		enq, over = append(enq, a), append(over, b-sleep.Seconds())
	}
	harness.Must("rows", rows.Err())
	if len(enq) != units {
		harness.Die(fmt.Sprintf("%d units recorded, want %d", len(enq), units), nil)
	}
	return wall, secs(harness.Median(enq)), secs(harness.Median(over)), used
}

// watchBackends samples, every 200ms, the CPU time of the Postgres
// backends connected to db (from /proc/<pid>/stat, so the bench must run
// on the server's machine as a user that can read them); the returned
// function stops and returns their sum, each backend counted at its last
// sample. Backends that live less than a sample apart are missed.
func watchBackends(ctx context.Context, pg, db string) func() time.Duration {
	c, err := pgx.Connect(ctx, pg)
	harness.Must("connect to "+pg, err)
	u, _ := url.Parse(db)
	name := strings.TrimPrefix(u.Path, "/")
	last := map[int]time.Duration{}
	sample := func() {
		rows, err := c.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, name)
		if err != nil {
			return
		}
		pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
		for _, pid := range pids {
			if d, ok := procCPU(int(pid)); ok {
				last[int(pid)] = d
			}
		}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			sample()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() time.Duration {
		close(done)
		<-stopped
		c.Close(ctx)
		var sum time.Duration
		for _, d := range last {
			sum += d
		}
		return sum
	}
}

// procCPU returns the user + system time of process pid from
// /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s).
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // after "pid (comm) "
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

func secs(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

func createDB(ctx context.Context, pg string) string {
	c, err := pgx.Connect(ctx, pg)
	harness.Must("connect to "+pg, err)
	defer c.Close(ctx)
	name := fmt.Sprintf("sgbench_%d", time.Now().UnixNano())
	_, err = c.Exec(ctx, "CREATE DATABASE "+name)
	harness.Must("create database", err)
	u, err := url.Parse(pg)
	harness.Must("parse -pg", err)
	u.Path = "/" + name
	return u.String()
}

func dropDB(ctx context.Context, pg, db string) {
	c, err := pgx.Connect(ctx, pg)
	if err != nil {
		return
	}
	defer c.Close(ctx)
	u, _ := url.Parse(db)
	c.Exec(ctx, "DROP DATABASE IF EXISTS "+strings.TrimPrefix(u.Path, "/")+" WITH (FORCE)")
}
