package verifier

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/internal/secret"
)

func TestRunExitAndOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cmd      Command
		wantCode int
		wantOut  string
	}{
		{"argv true", Command{Argv: []string{"true"}}, 0, ""},
		{"argv false", Command{Argv: []string{"false"}}, 1, ""},
		{"argv echo", Command{Argv: []string{"echo", "a b", "$HOME"}}, 0, "a b $HOME\n"},
		{"shell exit code", Command{Shell: "echo out; echo err >&2; exit 3"}, 3, "out\nerr\n"},
		{"stdin", Command{Argv: []string{"cat"}, Stdin: strings.NewReader("from stdin")}, 0, "from stdin"},
		{"dir", Command{Argv: []string{"pwd"}, Dir: "/"}, 0, "/\n"},
		{"extra env", Command{Shell: `echo "$EXTRA"`, Env: []string{"EXTRA=yes"}}, 0, "yes\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), tc.cmd)
			require.NoError(t, err)
			assert.Equal(t, tc.wantCode, res.ExitCode)
			assert.Equal(t, tc.wantOut, res.Output)
			assert.Zero(t, res.Dropped)
			assert.False(t, res.TimedOut)
			assert.False(t, res.Canceled)
		})
	}
}

func TestRunRejectsBadCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cmd     Command
		wantErr error
		wantMsg string
	}{
		{"empty", Command{}, ErrNoCommand, "neither Argv nor Shell"},
		{"empty argv0", Command{Argv: []string{""}}, ErrNoCommand, "Argv[0] is empty"},
		{"both", Command{Argv: []string{"true"}, Shell: "true"}, ErrTwoCommands, "only one"},
		{"missing program", Command{Argv: []string{"no-such-program-statgraph"}}, nil, `"no-such-program-statgraph"`},
		{"missing dir", Command{Argv: []string{"true"}, Dir: "/no/such/dir"}, nil, "/no/such/dir"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Run(context.Background(), tc.cmd)
			require.Error(t, err)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			}
			assert.Contains(t, err.Error(), tc.wantMsg)
		})
	}
}

// groupMembers returns the pids of live (non-zombie) processes in process
// group pgid, read from /proc.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	var pids []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // The process ended while we looked.
		}
		// Fields after the parenthesised command: state ppid pgrp ...
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestRunTimeoutKillsWholeGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
	}{
		{"obeys SIGTERM", "echo $$; sleep 1000 & sleep 1000"},
		// Ignored signals stay ignored across exec, so only SIGKILL works.
		{"ignores SIGTERM", "trap '' TERM; echo $$; sleep 1000 & sleep 1000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const timeout, grace = time.Second, 500 * time.Millisecond
			start := time.Now()
			res, err := Run(context.Background(), Command{Shell: tc.script, Timeout: timeout, Grace: grace})
			elapsed := time.Since(start)
			require.NoError(t, err)
			assert.True(t, res.TimedOut)
			assert.False(t, res.Canceled)
			assert.Equal(t, -1, res.ExitCode)
			assert.GreaterOrEqual(t, elapsed, timeout)
			assert.Less(t, elapsed, timeout+grace+time.Second)
			pgid, err := strconv.Atoi(strings.TrimSpace(res.Output))
			require.NoError(t, err, "output %q should be the shell's pid", res.Output)
			assert.Empty(t, groupMembers(t, pgid), "processes left in group %d", pgid)
		})
	}
}

func TestRunCancelKillsGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res, err := Run(ctx, Command{Shell: "echo $$; sleep 1000 & sleep 1000", Grace: 300 * time.Millisecond})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.True(t, res.Canceled)
	assert.False(t, res.TimedOut)
	pgid, err := strconv.Atoi(strings.TrimSpace(res.Output))
	require.NoError(t, err)
	assert.Empty(t, groupMembers(t, pgid))
}

func TestRunDoneContextFailsToStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Command{Argv: []string{"true"}})
	require.ErrorIs(t, err, context.Canceled)
}

func TestRunDoesNotWaitForOrphansHoldingOutput(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res, err := Run(context.Background(), Command{Shell: "echo $$; sleep 1000 & exit 0", Grace: 5 * time.Second})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 2*time.Second, "Run waited for the background sleep")
	assert.Equal(t, 0, res.ExitCode)
	assert.False(t, res.TimedOut)
	pgid, err := strconv.Atoi(strings.TrimSpace(res.Output))
	require.NoError(t, err)
	assert.Empty(t, groupMembers(t, pgid))
}

// Not parallel: it measures the allocations of the whole process, where
// goroutines an earlier test left (a proxy serving a tunnel, say) may
// allocate too; the least of three runs is Run's own (a Run that kept the
// stream would allocate 50 MB every time).
func TestRunLargeOutputKeepsMemoryBounded(t *testing.T) {
	const size = 50 << 20
	script := "yes 0123456789abcdef | head -c " + strconv.Itoa(size) + "; echo; echo TAIL-CANARY"
	secret.Add("sk-runner-memory-test-0123456789abcdef") // statgraph always knows a key: the output is scrubbed
	var res Result
	allocated := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := Run(context.Background(), Command{Shell: script})
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		res, allocated = r, min(allocated, after.TotalAlloc-before.TotalAlloc)
	}
	assert.Less(t, allocated, uint64(8<<20), "Run allocated %d bytes for a %d-byte stream", allocated, size)
	assert.LessOrEqual(t, len(res.Output), DefaultMaxOutput+100)
	assert.True(t, strings.HasPrefix(res.Output, "0123456789abcdef\n"))
	assert.True(t, strings.HasSuffix(res.Output, "TAIL-CANARY\n"))
	assert.Contains(t, res.Output, "bytes of output dropped")
	assert.Contains(t, res.Output, "["+"... "+strconv.FormatInt(res.Dropped, 10)+" bytes")
	kept := int64(len(res.Output) - len(proc.DropMarker(res.Dropped)))
	assert.Equal(t, int64(size+len("\nTAIL-CANARY\n")), kept+res.Dropped)
}

func TestRunTeeSeesEverything(t *testing.T) {
	t.Parallel()
	var tee bytes.Buffer
	res, err := Run(context.Background(), Command{Shell: "seq 1 10000", MaxOutput: 100, Tee: &tee})
	require.NoError(t, err)
	assert.Positive(t, res.Dropped)
	lines := strings.Split(strings.TrimSpace(tee.String()), "\n")
	require.Len(t, lines, 10000)
	assert.Equal(t, "10000", lines[9999])
	assert.True(t, strings.HasSuffix(res.Output, "10000\n"))
	assert.True(t, strings.HasPrefix(res.Output, "1\n2\n"))
}

// Not parallel: t.Setenv changes the process environment.
func TestRunHidesSecretsFromChild(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "canary-openai-0xdeadbeef")
	t.Setenv("FOO_TOKEN", "canary-foo-token")
	t.Setenv("MY_DB_PASSWORD", "canary-password")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "canary-credentials")
	t.Setenv("UNLISTED_VAR", "canary-unlisted")
	t.Setenv("GOFLAGS", "-mod=mod")

	tests := []struct {
		name    string
		allow   []string
		visible []string
		hidden  []string
	}{
		{
			name:    "default",
			visible: []string{"GOFLAGS=-mod=mod", "PATH="},
			hidden:  []string{"canary-openai", "canary-foo-token", "canary-password", "canary-credentials", "canary-unlisted"},
		},
		{
			name:    "allowed by name",
			allow:   []string{"FOO_TOKEN", "UNLISTED_VAR"},
			visible: []string{"FOO_TOKEN=canary-foo-token", "UNLISTED_VAR=canary-unlisted"},
			hidden:  []string{"canary-openai", "canary-password"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), Command{Argv: []string{"env"}, AllowEnv: tc.allow})
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitCode)
			for _, v := range tc.visible {
				assert.Contains(t, res.Output, v)
			}
			for _, h := range tc.hidden {
				assert.NotContains(t, res.Output, h)
			}
		})
	}
}

func TestGroupMembersSeesLiveGroup(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	assert.Equal(t, []int{cmd.Process.Pid}, groupMembers(t, cmd.Process.Pid))
}

func TestRunStopsReadingFromProcessThatLeftTheGroup(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	start := time.Now()
	// setsid puts the sleep in a new session, out of reach of the group
	// kill, while it keeps the output pipe open.
	ready := filepath.Join(t.TempDir(), "ready")
	script := "setsid sh -c 'echo $$; echo > " + ready + "; exec sleep 1000' & while [ ! -s " + ready + " ]; do sleep 0.01; done"
	res, err := Run(context.Background(), Command{Shell: script, Grace: grace})
	elapsed := time.Since(start)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(res.Output))
	require.NoError(t, err, "output %q should be the escaped pid", res.Output)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	require.NoError(t, syscall.Kill(pid, 0), "the escaped process should still run")
	assert.GreaterOrEqual(t, elapsed, grace)
	assert.Less(t, elapsed, grace+time.Second)
}
