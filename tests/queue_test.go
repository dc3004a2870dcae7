//go:build scale

package tests

// End-to-end tests of scale-out: a coordinator (statgraph run --queue) and
// worker processes (statgraph worker) on a real PostgreSQL, with a bare
// git repository as the shared remote. Each worker has its own state root,
// as on its own machine.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/internal/pgtest"
	"github.com/stretchr/testify/require"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// queueSetup is a repository with a tasks file, its bare remote and a
// queue database.
type queueSetup struct {
	repo, remote, log, db string
}

func newQueueSetup(t *testing.T, ts []effectTask) queueSetup {
	t.Helper()
	return newQueueSetupIn(t, ts, pgtest.Database(t))
}

// newQueueSetupIn is newQueueSetup on the queue database db.
func newQueueSetupIn(t *testing.T, ts []effectTask, db string) queueSetup {
	t.Helper()
	log := filepath.Join(t.TempDir(), "effects.log")
	repo := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, log, ts), "README": "base\n"})
	remote := filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, "", "clone", "-q", "--bare", repo, remote)
	return queueSetup{repo: repo, remote: remote, log: log, db: db}
}

// worker is a statgraph worker process.
type worker struct {
	cmd    *exec.Cmd
	stderr string // path of its stderr
	id     string
}

// startWorker starts a worker with its own state root and waits until it
// has said its id.
func startWorker(t *testing.T, s queueSetup, lease string, concurrency int) *worker {
	t.Helper()
	return startWorkerEnv(t, s, lease, concurrency)
}

// startWorkerEnv is startWorker with more environment variables.
func startWorkerEnv(t *testing.T, s queueSetup, lease string, concurrency int, env ...string) *worker {
	t.Helper()
	dir := t.TempDir()
	w := &worker{stderr: filepath.Join(dir, "stderr")}
	errf, err := os.Create(w.stderr)
	require.NoError(t, err)
	defer errf.Close()
	w.cmd = exec.Command(bin, "worker", "--queue", s.db, "--concurrency", fmt.Sprint(concurrency), "--lease", lease, noSandbox)
	w.cmd.Env = childEnv(append([]string{"STATGRAPH_HOME=" + filepath.Join(dir, "home"), "GIT_CONFIG_NOSYSTEM=1"}, env...)...)
	w.cmd.Stderr, w.cmd.Stdout = errf, errf
	require.NoError(t, w.cmd.Start())
	t.Cleanup(func() {
		w.cmd.Process.Signal(syscall.SIGKILL)
		w.cmd.Wait()
		if t.Failed() || testing.Verbose() {
			data, _ := os.ReadFile(w.stderr)
			t.Logf("worker %s stderr:\n%s", w.id, data)
		}
	})
	re := regexp.MustCompile(`worker ([0-9a-f-]{36}): taking tasks`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(w.stderr)
		if m := re.FindSubmatch(data); m != nil {
			w.id = string(m[1])
			return w
		}
	}
	data, _ := os.ReadFile(w.stderr)
	t.Fatalf("worker did not start in 30s:\n%s", data)
	return nil
}

// coordinator starts statgraph run --queue in the repository.
func (s queueSetup) coordinator(ctx context.Context, t *testing.T) (*exec.Cmd, func() result) {
	cmd, stdout, stderr := command(ctx, s.repo, "run", "--queue", s.db, "--remote", s.remote, "--plain", noSandbox, "tasks.json")
	require.NoError(t, cmd.Start())
	return cmd, func() result { return wait(t, cmd.Wait(), stdout, stderr) }
}

// checkFinal checks the state every scenario must end in: every unit
// done in tasks.json, its branch on the remote, one recorded result per
// unit, the executor's last run of each unit in its branch, and the
// remote passing git fsck.
func (s queueSetup) checkFinal(t *testing.T, n int) {
	t.Helper()
	got := readTasks(t, filepath.Join(s.repo, "tasks.json"))
	for i := 1; i <= n; i++ {
		require.Equal(t, "done", got[fmt.Sprint(i)].Status, "task %d: %+v", i, got[fmt.Sprint(i)])
	}
	plan := planOf(t, s.repo, "tasks.json", "")
	branches := strings.Fields(gittest.Git(t, s.remote, "for-each-ref", "--format=%(refname:short)", "refs/heads/statgraph/"))
	require.Len(t, branches, n)
	// Each unit's work in progress is deleted once its branch is there.
	require.Empty(t, gittest.Git(t, s.remote, "for-each-ref", "--format=%(refname:short)", "refs/heads/statgraph-wip/"),
		"work-in-progress branches left on the remote")
	// The workers' in-process pushes left the remote as git's would.
	require.Empty(t, gittest.Git(t, s.remote, "fsck", "--strict", "--no-progress", "--no-dangling"), "git fsck on the remote")
	for i := 1; i <= n; i++ {
		b := plan.Branch(fmt.Sprint(i))
		require.Equal(t, "attempt 1", gittest.Git(t, s.remote, "show", b+":work-"+fmt.Sprint(i)+".txt"))
	}
	conn, err := pgx.Connect(context.Background(), s.db)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var rows, results int
	require.NoError(t, conn.QueryRow(context.Background(),
		`SELECT count(*), count(result) FROM statgraph_units`).Scan(&rows, &results))
	require.Equal(t, n, rows, "one generation per unit: none enqueued twice")
	require.Equal(t, n, results)
}

// dagTasks is n units where unit i > 1 depends on unit i/2.
func dagTasks(n int, sleep string) []effectTask {
	var ts []effectTask
	for i := 1; i <= n; i++ {
		e := effectTask{id: i, passOn: 1, execSleep: sleep}
		if i > 1 {
			e.deps = []int{i / 2}
		}
		ts = append(ts, e)
	}
	return ts
}

// A coordinator and three workers take 50 units with dependencies to the
// end: every unit done, its branch (stacked on its dependency's) on the
// remote, tasks.json right, each step run exactly once.
func TestQueueThreeWorkersRunAPlan(t *testing.T) {
	const n = 50
	s := newQueueSetup(t, dagTasks(n, "0.05"))
	for range 3 {
		startWorker(t, s, "60s", 2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)
	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	s.checkFinal(t, n)
	counts := countLines(effectLines(t, s.log))
	for i := 1; i <= n; i++ {
		require.Equal(t, 1, counts[fmt.Sprintf("exec_%d_1", i)], "unit %d's executor", i)
		require.Equal(t, 1, counts[fmt.Sprintf("verify_%d_1", i)], "unit %d's tests", i)
	}
	// Stacked: unit 5 starts from unit 2's branch, which starts from 1's.
	plan := planOf(t, s.repo, "tasks.json", "")
	gittest.Git(t, s.remote, "merge-base", "--is-ancestor", plan.Branch("2"), plan.Branch("5"))
	gittest.Git(t, s.remote, "merge-base", "--is-ancestor", plan.Branch("1"), plan.Branch("2"))
	require.Contains(t, r.stdout, "50 done")
}

// unitWorker returns the id of the worker holding unit id now.
func unitWorker(t *testing.T, db, id string) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), db)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var w string
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT worker::text FROM statgraph_units WHERE unit = $1`, id).Scan(&w))
	return w
}

// waitForLine waits until the side-effect log has line.
func waitForLine(t *testing.T, path, line string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		f, err := os.Open(path)
		if err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if strings.ReplaceAll(sc.Text(), " ", "_") == line {
					f.Close()
					return
				}
			}
			f.Close()
		}
	}
	t.Fatalf("%q did not appear in %s within %s", line, path, timeout)
}

// A worker runs a unit with few git processes: none for its two pushes
// to a bare remote on the machine (the executor's commit as work in
// progress, then the branch published and the work in progress deleted
// together), which go in-process; no fetch for a unit without
// dependencies while its clone is at the commit the job names; HEAD is
// read from the workspace's files. (It was 1 fetch, 4 pushes and 6
// rev-parse per unit, then 2 git pushes of about 8 git processes each:
// each git process costs about 16 ms of CPU, which 4 workers on one
// machine share.)
func TestQueueWorkerGitProcessesPerUnit(t *testing.T) {
	const n = 4
	var ts []effectTask
	for i := 1; i <= n; i++ {
		ts = append(ts, effectTask{id: i, passOn: 1})
	}
	s := newQueueSetup(t, ts)
	// A git on PATH that logs its subcommand, then runs the real one.
	realGit, err := exec.LookPath("git")
	require.NoError(t, err)
	wrap := t.TempDir()
	gitLog := filepath.Join(wrap, "git.log")
	require.NoError(t, os.WriteFile(filepath.Join(wrap, "git"),
		[]byte("#!/bin/sh\necho \"$1\" >> '"+gitLog+"'\nexec '"+realGit+"' \"$@\"\n"), 0o755))
	startWorkerEnv(t, s, "60s", 1, "PATH="+wrap+":"+os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)
	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	s.checkFinal(t, n)

	data, err := os.ReadFile(gitLog)
	require.NoError(t, err)
	counts := countLines(strings.Fields(string(data)))
	t.Logf("git processes of the worker for %d units: %v", n, counts)
	require.Zero(t, counts["fetch"], "fetches")
	require.Zero(t, counts["push"], "git push processes")
	require.Zero(t, counts["receive-pack"]+counts["index-pack"]+counts["pack-objects"], "git processes of a push")
	require.Zero(t, counts["rev-parse"], "rev-parse processes")
}

// After a run on workers, status and history on the coordinator's machine
// read the checkpoints the workers kept in the queue's Postgres: with
// --queue, and without it from the queue the run recorded for the plan
// (its password from PGPASSWORD). They read only the local run store
// before, which a queue run leaves empty: no phase, and "no recorded run".
func TestQueueStatusAndHistoryReadTheWorkersCheckpoints(t *testing.T) {
	s := newQueueSetup(t, []effectTask{{id: 1, passOn: 1}, {id: 2, passOn: 1}})
	startWorker(t, s, "60s", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)
	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	u, err := url.Parse(s.db)
	require.NoError(t, err)
	password, _ := u.User.Password()
	cmd, stdout, stderr := command(ctx, s.repo, "status", "--json", "tasks.json")
	cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	st := wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 0, st.code, "stdout:\n%s\nstderr:\n%s", st.stdout, st.stderr)
	require.NotContains(t, st.stderr+st.stdout, password, "the recorded queue URL keeps no password")
	var rows []map[string]any
	dec := json.NewDecoder(strings.NewReader(st.stdout))
	for dec.More() {
		var row map[string]any
		require.NoError(t, dec.Decode(&row))
		rows = append(rows, row)
	}
	require.Len(t, rows, 2)
	for _, row := range rows {
		require.Equal(t, "done", row["status"], "%v", row)
		require.NotEmpty(t, row["phase"], "task %v: the phase of its last checkpoint, from Postgres", row["id"])
	}

	// Without the password, status still shows tasks.json's statuses, and
	// says why phases and tokens are missing.
	nopw := statgraph(t, s.repo, "status", "tasks.json")
	require.Equal(t, 0, nopw.code, "stdout:\n%s\nstderr:\n%s", nopw.stdout, nopw.stderr)
	require.Contains(t, nopw.stderr, "warning: phases and tokens not shown")
	require.Contains(t, nopw.stderr, "PGPASSWORD")
	require.Regexp(t, `(?m)^2\s+done\s`, nopw.stdout)

	h := statgraph(t, s.repo, "history", "--json", "--queue", s.db, "2")
	require.Equal(t, 0, h.code, "stdout:\n%s\nstderr:\n%s", h.stdout, h.stderr)
	var hist struct {
		Attempts []struct {
			Commit string `json:"commit"`
			Passed bool   `json:"passed"`
		} `json:"attempts"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.stdout), &hist), h.stdout)
	require.Len(t, hist.Attempts, 1)
	require.True(t, hist.Attempts[0].Passed)
	plan := planOf(t, s.repo, "tasks.json", "")
	require.Equal(t, gittest.Git(t, s.remote, "rev-parse", plan.Branch("2")), hist.Attempts[0].Commit,
		"the attempt's commit is the one published on the remote")

	// serve and mcp read the same plan through control, as status and
	// history do: the workers' checkpoints, from the recorded queue.
	pw := "PGPASSWORD=" + password
	checkServeReadsWorkers(t, s.repo, pw, hist.Attempts[0].Commit)
	checkMCPReadsWorkers(t, s.repo, pw, hist.Attempts[0].Commit)
}

// checkServeReadsWorkers starts statgraph serve in repo with env and
// checks that its API shows each task's phase and task 2's attempt with
// commit, both only in the workers' checkpoints.
func checkServeReadsWorkers(t *testing.T, repo, env, commit string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--no-token", "--addr", "127.0.0.1:0", noSandbox, "tasks.json")
	cmd.Dir, cmd.Env = repo, append(childEnv(), env)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	base := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(line)
	require.NotEmpty(t, base, line)
	get := func(path string, v any) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s\nstderr:\n%s", path, data, stderr.String())
		require.NoError(t, json.Unmarshal(data, v), "%s: %s", path, data)
	}
	var board struct {
		Tasks []struct {
			ID, Status, Phase string
		} `json:"tasks"`
	}
	get("/api/tasks", &board)
	require.Len(t, board.Tasks, 2)
	for _, tk := range board.Tasks {
		require.Equal(t, "done", tk.Status, "%+v", tk)
		require.NotEmpty(t, tk.Phase, "serve: task %s: the phase of its last checkpoint, from Postgres", tk.ID)
	}
	var h struct {
		Attempts []struct {
			Commit string `json:"commit"`
		} `json:"attempts"`
	}
	get("/api/tasks/2?diff=0", &h)
	require.Len(t, h.Attempts, 1, "serve: task 2's history, from the workers' checkpoints")
	require.Equal(t, commit, h.Attempts[0].Commit)
}

// checkMCPReadsWorkers is checkServeReadsWorkers through statgraph mcp's
// list_tasks and history tools.
func checkMCPReadsWorkers(t *testing.T, repo, env, commit string) {
	t.Helper()
	cs, stderr := mcpSessionEnv(t, repo, []string{env}, noSandbox, "tasks.json")
	defer cs.Close()
	var list struct {
		Tasks []struct {
			ID, Status, Phase string
		} `json:"tasks"`
	}
	mcpCall(t, cs, "list_tasks", map[string]any{}, &list)
	require.Len(t, list.Tasks, 2, "stderr:\n%s", stderr.String())
	for _, tk := range list.Tasks {
		require.NotEmpty(t, tk.Phase, "mcp: task %s: the phase of its last checkpoint, from Postgres", tk.ID)
	}
	var h struct {
		Attempts []struct {
			Commit string `json:"commit"`
		} `json:"attempts"`
	}
	mcpCall(t, cs, "history", map[string]any{"id": "2"}, &h)
	require.Len(t, h.Attempts, 1, "mcp: task 2's history, from the workers' checkpoints")
	require.Equal(t, commit, h.Attempts[0].Commit)
}

// statgraph clean deletes, on the remote the queue run used, the
// work-in-progress branches of finished units: a failed unit's, and a done
// unit's whose published branch is on the remote; a done unit whose
// published branch is not there keeps it (its work would be lost).
func TestQueueCleanDeletesWorkInProgressBranches(t *testing.T) {
	s := newQueueSetup(t, []effectTask{{id: 1, passOn: 1}, {id: 2, passOn: 0, retries: 1}, {id: 3, passOn: 1}})
	startWorker(t, s, "60s", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)
	r := waitRun()
	require.Equal(t, 1, r.code, "unit 2 fails\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	plan := planOf(t, s.repo, "tasks.json", "")
	wip := func(id string) string { return "statgraph-wip/" + plan.Key + "/" + id }
	// Work in progress a worker that died after publishing left behind
	// (unit 1), and one whose unit's published branch is gone (unit 3).
	gittest.Git(t, s.remote, "update-ref", "refs/heads/"+wip("1"), gittest.Git(t, s.remote, "rev-parse", plan.Branch("1")))
	gittest.Git(t, s.remote, "update-ref", "refs/heads/"+wip("3"), gittest.Git(t, s.remote, "rev-parse", plan.Branch("3")))
	gittest.Git(t, s.remote, "update-ref", "-d", "refs/heads/"+plan.Branch("3"))
	if !strings.Contains(gittest.Git(t, s.remote, "for-each-ref", "refs/heads/statgraph-wip/"), wip("2")) {
		// The failed unit published no branch, so its work in progress stays
		// until clean; make sure the case is there either way.
		gittest.Git(t, s.remote, "update-ref", "refs/heads/"+wip("2"), gittest.Git(t, s.remote, "rev-parse", plan.Branch("1")))
	}

	require.Positive(t, queueCheckpointCount(t, s.db, plan.Key), "the workers' checkpoints are in Postgres")
	u, err := url.Parse(s.db)
	require.NoError(t, err)
	password, _ := u.User.Password()
	cmd, stdout, stderr := command(ctx, s.repo, "clean", "tasks.json")
	cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	c := wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 0, c.code, "stdout:\n%s\nstderr:\n%s", c.stdout, c.stderr)
	require.Contains(t, c.stdout, "deleted the work-in-progress branches of 2 finished task(s)")
	// The finished units' checkpoints are deleted in the queue's Postgres,
	// where the workers keep them (clean deleted only the local run
	// store's before, which a queue run leaves empty).
	require.Contains(t, c.stdout, "deleted the checkpoints of 3 finished task(s) in ")
	require.Zero(t, queueCheckpointCount(t, s.db, plan.Key), "checkpoints of the plan left in Postgres")
	require.Equal(t, "refs/heads/"+wip("3"), gittest.Git(t, s.remote, "for-each-ref", "--format=%(refname)", "refs/heads/statgraph-wip/"),
		"only the done unit whose published branch is missing keeps its work in progress")
}

// Two repositories whose tasks files have the same path share one queue
// and one worker: each run's units run in its own repository and publish
// to its own remote, and each plan's checkpoints are its own. The plans'
// checkpoint threads were named by the tasks file's path and tag alone,
// so the second repository's units took up the first one's finished
// threads and the first one's history showed the second's commits.
func TestQueueTwoRepositoriesShareAQueue(t *testing.T) {
	ts := []effectTask{{id: 1, passOn: 1}, {id: 2, passOn: 1, deps: []int{1}}}
	a := newQueueSetup(t, ts)
	b := newQueueSetupIn(t, ts, a.db)
	startWorker(t, a, "60s", 2) // a worker takes the units of every plan on the queue
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, s := range []queueSetup{a, b} {
		_, waitRun := s.coordinator(ctx, t)
		r := waitRun()
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	for name, s := range map[string]queueSetup{"first": a, "second": b} {
		got := readTasks(t, filepath.Join(s.repo, "tasks.json"))
		counts := countLines(effectLines(t, s.log))
		plan := planOf(t, s.repo, "tasks.json", "")
		for _, id := range []string{"1", "2"} {
			require.Equal(t, "done", got[id].Status, "%s repository, task %s", name, id)
			require.Equal(t, 1, counts["exec_"+id+"_1"], "%s repository: unit %s's executor ran in its own run", name, id)
			h := statgraph(t, s.repo, "history", "--json", "--queue", s.db, id)
			require.Equal(t, 0, h.code, "stdout:\n%s\nstderr:\n%s", h.stdout, h.stderr)
			var hist struct {
				Attempts []struct {
					Commit string `json:"commit"`
				} `json:"attempts"`
			}
			require.NoError(t, json.Unmarshal([]byte(h.stdout), &hist), h.stdout)
			require.Len(t, hist.Attempts, 1, "%s repository, unit %s: its own checkpoints only", name, id)
			require.Equal(t, gittest.Git(t, s.remote, "rev-parse", plan.Branch(id)), hist.Attempts[0].Commit,
				"%s repository, unit %s: the attempt in its history is the one published on its remote", name, id)
		}
	}
}

// queueCheckpointCount counts the checkpoints in the queue's Postgres of
// the threads of the plan whose key is key.
func queueCheckpointCount(t *testing.T, db, key string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), db)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM statgraph.checkpoints c
		JOIN statgraph.threads t USING (tid) WHERE t.name LIKE '%' || $1 || '/task-%'`, key).Scan(&n))
	return n
}

// statgraph worker is traced as run is, from the OTEL_* variables: the
// unit it runs is a "task" span with its attempt and nodes, and the spans
// reach the collector by the time the worker has stopped (SIGTERM). It
// made no spans before.
func TestQueueWorkerExportsOTLP(t *testing.T) {
	recv := newOTLPReceiver(t)
	s := newQueueSetup(t, []effectTask{{id: 1, passOn: 1}})
	w := startWorkerEnv(t, s, "60s", 1, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL, "OTEL_SERVICE_NAME=statgraph-worker-e2e")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)
	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
	w.cmd.Wait()
	data, err := os.ReadFile(w.stderr)
	require.NoError(t, err)
	require.NotContains(t, string(data), "warning: cannot export traces")

	spans, services, _ := recv.got()
	require.NotEmpty(t, spans, "the worker's spans were flushed before it exited")
	for _, svc := range services {
		require.Equal(t, "statgraph-worker-e2e", svc)
	}
	named := map[string][]*tracepb.Span{}
	byID := map[string]*tracepb.Span{}
	for _, sp := range spans {
		named[sp.Name] = append(named[sp.Name], sp)
		byID[string(sp.SpanId)] = sp
	}
	require.Len(t, named["task 1"], 1)
	require.Len(t, named["attempt"], 1)
	require.Equal(t, "task 1", byID[string(named["attempt"][0].ParentSpanId)].GetName())
	require.Len(t, named["check tests"], 1)
	require.Equal(t, int64(0), intAttr(named["check tests"][0].Attributes, "process.exit.code"))
}
