package proc

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A Group ends its command as one: the context's end signals the whole
// group (SIGTERM first when there is a grace, which a trap sees), and
// End kills a background child the leader left behind only with
// KillLeftovers.
func TestGroupEndsTheWholeGroup(t *testing.T) {
	for _, kill := range []bool{true, false} {
		t.Run("KillLeftovers="+strconv.FormatBool(kill), func(t *testing.T) {
			// The leader leaves a background sleep and exits.
			cmd := exec.CommandContext(context.Background(), "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
			g := &Group{Grace: time.Second, KillLeftovers: kill}
			g.Setup(cmd)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
			if err != nil {
				t.Fatal(err)
			}
			g.End()
			defer syscall.Kill(pid, syscall.SIGKILL)
			// Killed: gone within a generous deadline. Left: still there
			// after a while.
			wait := 30 * time.Second
			if !kill {
				wait = 500 * time.Millisecond
			}
			if alive := waitGone(pid, wait); alive == kill {
				t.Errorf("leftover alive after End: %v; want %v", alive, !kill)
			}
		})
	}
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, "sh", "-c", "trap 'echo TERM; exit 3' TERM; echo up; while :; do sleep 0.1; done")
		g := &Group{Grace: 30 * time.Second, KillLeftovers: true}
		g.Setup(cmd)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 3)
		if _, err := stdout.Read(buf); err != nil || string(buf) != "up\n" {
			t.Fatalf("read %q, %v; want the trap set", buf, err)
		}
		cancel()
		rest := make([]byte, 64)
		n, _ := stdout.Read(rest)
		_ = cmd.Wait()
		g.End()
		if !g.Signalled() || string(rest[:n]) != "TERM\n" {
			t.Errorf("signalled %v, after cancel %q; want true, the trap's TERM", g.Signalled(), rest[:n])
		}
	})
}

// waitGone waits up to d for process pid to be gone (or a zombie), and
// reports whether it is still alive.
func waitGone(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return false
		}
	}
	return true
}
