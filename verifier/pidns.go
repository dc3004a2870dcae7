package verifier

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// nsDrain bounds how long Run waits, after a sandboxed command ended or was
// stopped, for the kernel to finish killing the processes of its PID
// namespace. SIGKILL cannot be caught, so this is only how long the machine
// may take to schedule their exits; Run returns as soon as they are gone.
const nsDrain = 30 * time.Second

// pidNamespace follows the PID namespace of one sandboxed command: bwrap
// reports the namespace's first process on its --info-fd. When that process
// dies the kernel kills every other process of the namespace, and it exits
// only once they are all gone.
//
// bwrap's --die-with-parent is not enough on its own: the namespace's first
// process asks for its parent-death signal only after it has forked the
// command, so a bwrap killed in that window (a check cancelled just after it
// started, on a loaded machine) leaves the whole namespace running. Run
// therefore kills the first process itself. A pidNamespace is used by one Run.
type pidNamespace struct {
	info *os.File // read end of the --info-fd pipe
	// ready is closed once bwrap's report is read (or bwrap died first);
	// then pid and fd are set and never change.
	ready chan struct{}
	// pid is the namespace's first process, 0 when bwrap reported none.
	pid int
	// fd is a pidfd of that process, or -1 when bwrap reported nothing
	// or the process is gone.
	fd int
}

// The descriptors bwrap is given, in exec.Cmd.ExtraFiles order: it writes
// its info to infoFD, waits for a byte on blockFD before it runs anything
// of the command, and reads the seccomp filter from seccompFD.
const (
	infoFD    = "3"
	blockFD   = "4"
	seccompFD = "5"
)

// withInfoFD returns the bwrap command line argv with bwrap told to write its
// info to infoFD.
func withInfoFD(argv []string) []string {
	return slices.Concat(argv[:1], []string{"--info-fd", infoFD}, argv[1:])
}

// withBounds returns the bwrap command line argv with bwrap told to wait
// on blockFD and to load the seccomp filter from seccompFD.
func withBounds(argv []string) []string {
	return slices.Concat(argv[:1], []string{"--block-fd", blockFD, "--seccomp", seccompFD}, argv[1:])
}

// followNamespace starts reading bwrap's info from r. The pidfd is opened as
// soon as the pid is known, and kept only when, checked while it is open, it
// is the first process of a nested namespace, so it cannot name a reused pid.
func followNamespace(r *os.File) *pidNamespace {
	ns := &pidNamespace{info: r, ready: make(chan struct{}), fd: -1}
	go func() {
		defer close(ns.ready)
		var info struct {
			ChildPid int `json:"child-pid"`
		}
		if json.NewDecoder(r).Decode(&info) == nil && info.ChildPid > 0 {
			if f, err := unix.PidfdOpen(info.ChildPid, 0); err == nil {
				if firstOfNamespace(info.ChildPid) && !exited(f) {
					ns.pid, ns.fd = info.ChildPid, f
				} else {
					unix.Close(f)
				}
			}
		}
	}()
	return ns
}

// first waits at most limit for bwrap's report and returns the pid of the
// namespace's first process, or 0 when bwrap reported none (it failed
// first) or the process is already gone.
func (ns *pidNamespace) first(limit time.Duration) int {
	select {
	case <-ns.ready:
		return ns.pid
	case <-time.After(limit):
		return 0
	}
}

// firstOfNamespace reports whether process pid is the first process (pid 1)
// of a PID namespace nested in this one, which rules out a reused pid.
func firstOfNamespace(pid int) bool {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(status)) {
		if ids, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(ids)
			return len(f) >= 2 && f[len(f)-1] == "1"
		}
	}
	return false
}

// exited reports whether the process of pidfd fd has exited.
func exited(fd int) bool {
	n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
	return err != nil || n > 0
}

// end kills what is left of the namespace once bwrap has exited, and returns
// when every process of it is gone or limit has passed; it reports whether
// they are all gone. After a normal exit the namespace is already empty (bwrap
// waits for its first process) and end returns at once. It closes the info
// pipe.
func (ns *pidNamespace) end(limit time.Duration) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-ns.ready:
	case <-timer.C:
		ns.info.Close() // ends the read
		<-ns.ready
		if ns.fd >= 0 {
			unix.Close(ns.fd)
		}
		return false
	}
	ns.info.Close()
	fd := ns.fd
	if fd < 0 {
		return true
	}
	defer unix.Close(fd)
	// ESRCH: it has exited already (a zombie ignores the signal).
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	deadline := time.Now().Add(limit)
	for {
		ms := int(time.Until(deadline).Milliseconds())
		if ms <= 0 {
			return false
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		if err == nil && n > 0 {
			return true // readable: the process, and so the namespace, is gone
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			return false
		}
	}
}
