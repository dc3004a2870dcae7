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
	// init receives a pidfd of the namespace's first process, or -1 when
	// bwrap reported nothing (it died first) or the process is gone.
	init chan int
}

// infoFD is the descriptor number bwrap writes its info to: the first of
// exec.Cmd.ExtraFiles.
const infoFD = "3"

// withInfoFD returns the bwrap command line argv with bwrap told to write its
// info to infoFD.
func withInfoFD(argv []string) []string {
	return slices.Concat(argv[:1], []string{"--info-fd", infoFD}, argv[1:])
}

// followNamespace starts reading bwrap's info from r. The pidfd is opened as
// soon as the pid is known, and kept only when, checked while it is open, it
// is the first process of a nested namespace, so it cannot name a reused pid.
func followNamespace(r *os.File) *pidNamespace {
	ns := &pidNamespace{info: r, init: make(chan int, 1)}
	go func() {
		var info struct {
			ChildPid int `json:"child-pid"`
		}
		fd := -1
		if json.NewDecoder(r).Decode(&info) == nil && info.ChildPid > 0 {
			if f, err := unix.PidfdOpen(info.ChildPid, 0); err == nil {
				if firstOfNamespace(info.ChildPid) && !exited(f) {
					fd = f
				} else {
					unix.Close(f)
				}
			}
		}
		ns.init <- fd
	}()
	return ns
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
	var fd int
	select {
	case fd = <-ns.init:
	case <-timer.C:
		ns.info.Close() // ends the read
		if fd = <-ns.init; fd >= 0 {
			unix.Close(fd)
		}
		return false
	}
	ns.info.Close()
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
