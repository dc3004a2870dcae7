package proc

import (
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// Group is how a process statgraph starts is kept in a process group of
// its own and ended with it: the one way verifier.Run (checks, setup_cmd,
// agent CLIs) and RunGit do it. Set the fields, call Setup on a command
// made with exec.CommandContext before starting it, and End once it was
// waited for. A Group serves one command.
type Group struct {
	// Grace is how long the group gets between SIGTERM and SIGKILL when
	// the command's context ends; 0 sends SIGKILL at once.
	Grace time.Duration
	// WaitDelay bounds the command's Wait once its context ended (see
	// exec.Cmd.WaitDelay): a leader that ignores its signal is killed and
	// output pipes held by escaped processes are closed; 0 means Grace.
	WaitDelay time.Duration
	// Session makes the group a session of its own, without a
	// controlling terminal, so that nothing in it (git's ssh) can prompt
	// on the user's terminal; false makes a process group only.
	Session bool
	// KillLeftovers makes End kill what is left of the group after its
	// leader exited (background jobs, orphaned grandchildren), so that
	// nothing the command started outlives it. false leaves them: git's
	// helpers (a credential cache, an ssh master) are meant to outlive
	// one git command.
	KillLeftovers bool

	cmd       *exec.Cmd
	signalled atomic.Bool
	kill      *time.Timer // the pending SIGKILL; set by Cancel, read by End after Wait
}

// Setup makes cmd start in the group, signalled as a whole when its
// context ends: it sets cmd's SysProcAttr, Cancel and WaitDelay.
func (g *Group) Setup(cmd *exec.Cmd) {
	g.cmd = cmd
	if g.Session {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	cmd.Cancel = func() error {
		g.signalled.Store(true)
		pgid := cmd.Process.Pid
		if g.Grace <= 0 {
			return syscall.Kill(-pgid, syscall.SIGKILL)
		}
		g.kill = time.AfterFunc(g.Grace, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
		return syscall.Kill(-pgid, syscall.SIGTERM)
	}
	cmd.WaitDelay = g.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = g.Grace
	}
}

// Signalled reports whether the end of the command's context signalled
// the group.
func (g *Group) Signalled() bool { return g.signalled.Load() }

// End finishes the group once its command was waited for: with
// KillLeftovers, what is left of the group is killed (the group's id
// cannot be reused while any member lives, so this reaches only the
// command's own leftovers); a SIGKILL still pending is stopped.
func (g *Group) End() {
	if g.KillLeftovers && g.cmd.Process != nil {
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	}
	if g.kill != nil {
		g.kill.Stop()
	}
}
