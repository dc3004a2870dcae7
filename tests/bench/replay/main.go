// Command replay measures what the sandbox costs real work (issue 22,
// "Figures to report"): it replays recent commits of a Go repository (by
// default statgraph's own) as a chained plan, each task's agent a stand-in
// that applies its commit's patch and its checks `go vet` + `go test` of the
// packages the commit touched, and runs the same commands plainly (apply,
// vet, test, commit) in a fresh clone. It prints both wall times, the
// CPU time of the children, their ratio, and the size of statgraph's state
// directory after the run.
//
//	go build -o /tmp/statgraph ./cmd/statgraph
//	go run ./tests/bench/replay -statgraph /tmp/statgraph -n 6 [-repo DIR] [-no-sandbox]
//
// Commits are taken from the first-parent history of HEAD, newest last,
// keeping those that touch Go packages whose tests need nothing from
// outside (no bubblewrap, PostgreSQL or browser: -skip lists the package
// prefixes left out). The plan runs with -j 1, as the plain loop does.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
)

func main() {
	statgraphBin := flag.String("statgraph", "", "statgraph binary (required)")
	repo := flag.String("repo", ".", "git repository whose commits are replayed")
	n := flag.Int("n", 6, "commits to replay")
	skip := flag.String("skip", "tests,verifier,tasks,agents,web,queue,control,mcpserver,cmd,statgraph/checkpoint/postgres",
		"package prefixes left out (their tests need a sandbox, PostgreSQL or a browser)")
	noSandbox := flag.Bool("no-sandbox", false, "also run the plan with --no-sandbox")
	flag.Parse()
	if *statgraphBin == "" {
		fmt.Fprintln(os.Stderr, "replay: -statgraph is required (go build -o /tmp/statgraph ./cmd/statgraph)")
		os.Exit(2)
	}
	err := replay(*statgraphBin, *repo, *n, strings.Split(*skip, ","), *noSandbox)
	if cpuacct != "" { // leave the cgroup and remove it
		os.WriteFile("/sys/fs/cgroup/cpuacct/cgroup.procs", []byte(fmt.Sprint(os.Getpid())), 0o644)
		os.Remove(filepath.Dir(cpuacct))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(1)
	}
}

// step is one replayed commit: its patch and the packages it touched.
type step struct {
	commit string
	pkgs   []string
}

func replay(bin, repo string, n int, skip []string, noSandbox bool) error {
	steps, base, err := pickCommits(repo, n, skip)
	if err != nil {
		return err
	}
	fmt.Printf("replaying %d commits on %s (base %s)\n", len(steps), repo, base[:12])
	work, err := os.MkdirTemp("", "statgraph-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	plain := filepath.Join(work, "plain")
	if err := prepare(repo, base, steps, plain, false); err != nil {
		return err
	}
	start, cpu0 := time.Now(), childCPU()
	for i, s := range steps {
		if _, err := git(plain, "apply", fmt.Sprintf(".replay/%d.patch", i+1)); err != nil {
			return fmt.Errorf("plain loop, commit %s: %w", s.commit[:12], err)
		}
		if out, err := sh(plain, "sh", "-c", checkCmd(s.pkgs)); err != nil {
			return fmt.Errorf("plain loop, checks of commit %s: %w\n%s", s.commit[:12], err, out)
		}
		if _, err := git(plain, "commit", "-qam", "replay "+s.commit[:12]); err != nil {
			return err
		}
	}
	plainWall, plainCPU := time.Since(start), childCPU()-cpu0
	fmt.Printf("plain loop:  wall %6.1f s  cpu %6.1f s\n", plainWall.Seconds(), plainCPU.Seconds())

	modes := []string{"sandbox"}
	if noSandbox {
		modes = append(modes, "no-sandbox")
	}
	for _, mode := range modes {
		dir := filepath.Join(work, mode)
		if err := prepare(repo, base, steps, dir, true); err != nil {
			return err
		}
		state := filepath.Join(work, mode+"-state")
		args := []string{"run", "-j", "1", "--plain", "tasks.json"}
		if mode == "no-sandbox" {
			args = append(args[:1], append([]string{"--no-sandbox"}, args[1:]...)...)
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "STATGRAPH_HOME="+state)
		start, cpu0 := time.Now(), childCPU()
		out, err := cmd.CombinedOutput() // exit 0 only when every task is done
		wall, cpu := time.Since(start), childCPU()-cpu0
		if err != nil {
			return fmt.Errorf("statgraph run (%s): %w\n%s", mode, err, out)
		}
		fmt.Printf("statgraph (%s): wall %6.1f s  cpu %6.1f s  wall ratio %.2fx  cpu ratio %.2fx  state dir %s\n",
			mode, wall.Seconds(), cpu.Seconds(), wall.Seconds()/plainWall.Seconds(), cpu.Seconds()/plainCPU.Seconds(), du(state))
		caches, _ := filepath.Glob(filepath.Join(state, "*", "cache", "*"))
		fmt.Printf("  per-task caches left: %d\n", len(caches))
	}
	return nil
}

// checkCmd is the checks of a commit touching pkgs: go vet and go test.
func checkCmd(pkgs []string) string {
	list := strings.Join(pkgs, " ")
	return "go vet " + list + " && go test -count=1 " + list
}

// pickCommits returns the last n first-parent commits of repo's HEAD that
// touch Go packages outside skip, oldest first, and the parent of the first.
func pickCommits(repo string, n int, skip []string) ([]step, string, error) {
	out, err := git(repo, "rev-list", "--first-parent", "--no-merges", "-n", "200", "HEAD")
	if err != nil {
		return nil, "", err
	}
	var steps []step
	for _, c := range strings.Fields(out) {
		files, err := git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", c)
		if err != nil {
			return nil, "", err
		}
		var pkgs []string
		ok := true
		for _, f := range strings.Fields(files) {
			if !strings.HasSuffix(f, ".go") {
				continue
			}
			pkg := "./" + filepath.Dir(f)
			for _, s := range skip {
				if s != "" && (strings.TrimPrefix(pkg, "./") == s || strings.HasPrefix(strings.TrimPrefix(pkg, "./"), s+"/")) {
					ok = false
				}
			}
			if !slices.Contains(pkgs, pkg) {
				pkgs = append(pkgs, pkg)
			}
		}
		if !ok || len(pkgs) == 0 {
			continue
		}
		steps = append(steps, step{commit: c, pkgs: pkgs})
		if len(steps) == n {
			break
		}
	}
	if len(steps) == 0 {
		return nil, "", fmt.Errorf("no commit in the last 200 of %s touches a Go package outside %v", repo, skip)
	}
	slices.Reverse(steps)
	base, err := git(repo, "rev-parse", steps[0].commit+"^")
	return steps, strings.TrimSpace(base), err
}

// prepare clones repo at base into dir, commits each step's patch under
// .replay/ (the patch of a skipped commit in between is folded into the
// next step's, so that every patch applies) and, for a plan, a tasks.json
// chaining the steps.
func prepare(repo, base string, steps []step, dir string, plan bool) error {
	if _, err := git("", "clone", "-q", "--no-checkout", repo, dir); err != nil {
		return err
	}
	if _, err := git(dir, "checkout", "-q", "-b", "replay", base); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".replay"), 0o755); err != nil {
		return err
	}
	prev := base
	type task struct {
		ID           int            `json:"id"`
		Title        string         `json:"title"`
		Dependencies []int          `json:"dependencies,omitempty"`
		Executor     map[string]any `json:"executor"`
		TestCmd      string         `json:"test_cmd"`
		MaxRetries   int            `json:"max_retries"`
	}
	var tasks []task
	for i, s := range steps {
		patch, err := git(repo, "diff", "--binary", prev, s.commit, "--", ".", ":!.replay")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, ".replay", fmt.Sprintf("%d.patch", i+1)), []byte(patch), 0o644); err != nil {
			return err
		}
		t := task{ID: i + 1, Title: "replay " + s.commit[:12], TestCmd: checkCmd(s.pkgs), MaxRetries: 0,
			Executor: map[string]any{"command": []string{"git", "apply", fmt.Sprintf(".replay/%d.patch", i+1)}}}
		if i > 0 {
			t.Dependencies = []int{i}
		}
		tasks = append(tasks, t)
		prev = s.commit
	}
	if plan {
		b, err := json.MarshalIndent(map[string]any{"tasks": tasks}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "tasks.json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if _, err := git(dir, "add", "-A"); err != nil {
		return err
	}
	_, err := git(dir, "commit", "-qm", "replay patches")
	return err
}

// git runs git with args in dir through statgraph's one git runner
// (proc.RunGit), as the replay's author, and returns its output.
func git(dir string, args ...string) (string, error) {
	out, err := proc.RunGit(context.Background(), proc.Git{Dir: dir, Env: []string{"GIT_AUTHOR_NAME=replay", "GIT_AUTHOR_EMAIL=replay@statgraph.invalid",
		"GIT_COMMITTER_NAME=replay", "GIT_COMMITTER_EMAIL=replay@statgraph.invalid"}}, args...)
	return string(out), err
}

// sh runs a command in dir and returns its output.
func sh(dir string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// cpuacct is the usage file of a cgroup v1 cpuacct group this process
// moved itself into, or "" when it could not: a sandboxed command's CPU
// does not reach getrusage's children total (bwrap's PID namespace init is
// not waited for by bwrap), so it is counted by the cgroup.
var cpuacct = func() string {
	dir := fmt.Sprintf("/sys/fs/cgroup/cpuacct/statgraph-replay-%d", os.Getpid())
	if err := os.Mkdir(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "replay: no cpuacct cgroup, CPU counts waited-for children only (sandboxed processes are missed):", err)
		return ""
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "replay: cannot join the cpuacct cgroup:", err)
		return ""
	}
	return filepath.Join(dir, "cpuacct.usage")
}()

// childCPU is the CPU time used so far by this process's descendants (and,
// with a cpuacct cgroup, by this process too, which is negligible).
func childCPU() time.Duration {
	if cpuacct != "" {
		if b, err := os.ReadFile(cpuacct); err == nil {
			var ns int64
			fmt.Sscan(string(b), &ns)
			return time.Duration(ns)
		}
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// du is the disk usage of dir, as du -sh prints it.
func du(dir string) string {
	out, err := exec.Command("du", "-sh", dir).Output()
	if err != nil {
		return "?"
	}
	return strings.Fields(string(out))[0]
}
