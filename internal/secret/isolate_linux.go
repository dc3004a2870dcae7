package secret

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// handoffVar names the file descriptor of the pipe that carries the
// secrets into the re-executed process. Its value is a number, not a
// secret, and it is removed from the environment once read.
const handoffVar = "STATGRAPH_HANDOFF_FD"

// maxHandoff bounds the bytes handed over: what a pipe buffers without a
// reader (64 KiB on Linux), since nothing reads until after the exec.
const maxHandoff = 60 << 10

// Isolate takes the variables of the process environment for which
// isSecret reports true out of the environment, keeping them for [Lookup]
// and [Scrub] (through [Register]), and makes the process non-dumpable
// (prctl PR_SET_DUMPABLE 0), so that other processes of the same user
// cannot read its memory or /proc files.
//
// Unsetting a variable is not enough: /proc/<pid>/environ shows the
// environment the process was started with, whatever it changed since. So
// when such variables are present, Isolate re-executes the running program
// (/proc/self/exe, same pid, arguments, standard streams, terminal and
// process group) with them removed from the environment and written to an
// inherited pipe, which the new image reads here, once, and closes. On
// success that call of Isolate does not return; the new image's call
// returns nil. Call it first thing in main, before any goroutine of one's
// own starts.
//
// If the program cannot be re-executed (no /proc, exec refused), Isolate
// unsets the variables, keeps them for Lookup and returns an error saying
// that /proc/<pid>/environ still shows them; the process can go on with
// that weaker protection. An unreadable handoff pipe is an error as well.
func Isolate(isSecret func(name string) bool) error {
	if fd, ok := os.LookupEnv(handoffVar); ok {
		_ = os.Unsetenv(handoffVar)
		if err := receive(fd); err != nil {
			return err
		}
	}
	var keep, hand []string
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if isSecret(name) {
			hand = append(hand, kv)
			Register(name, value)
			continue
		}
		keep = append(keep, kv)
	}
	if len(hand) > 0 {
		err := reexec(keep, hand)
		// Still here: the exec failed. Fall back to unsetting.
		for _, kv := range hand {
			name, _, _ := strings.Cut(kv, "=")
			_ = os.Unsetenv(name)
		}
		return fmt.Errorf("secret: could not re-execute %s without the secret environment variables (%v): they were removed from the environment, "+
			"but /proc/%d/environ still shows them to processes that may read it; make /proc/self/exe executable to close this", os.Args[0], err, os.Getpid())
	}
	// PR_SET_DUMPABLE is 4. Failure leaves the process as it was.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, 4, 0, 0)
	return nil
}

// reexec replaces the process image with /proc/self/exe, started with the
// environment keep and the entries hand written to an inherited pipe. It
// returns only on failure.
func reexec(keep, hand []string) error {
	payload := strings.Join(hand, "\x00")
	if len(payload) > maxHandoff {
		return fmt.Errorf("the secret-looking environment variables hold %d bytes, more than the %d that can be handed over", len(payload), maxHandoff)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.WriteString(w, payload)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fd := r.Fd() // also makes it blocking, which the new image expects
	// Clear close-on-exec (F_SETFD is 2) so the new image inherits it.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_SETFD, 0); errno != 0 {
		return errno
	}
	env := append(keep, handoffVar+"="+strconv.FormatUint(uint64(fd), 10))
	err = syscall.Exec("/proc/self/exe", os.Args, env)
	runtime.KeepAlive(r)
	return err
}

// receive reads the handed-over entries from the pipe numbered fd and
// registers them.
func receive(fd string) error {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return fmt.Errorf("secret: %s=%q is not a file descriptor this process was given; unset it", handoffVar, fd)
	}
	f := os.NewFile(uintptr(n), "secret handoff")
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return fmt.Errorf("secret: %s=%s does not name an inherited pipe; unset it", handoffVar, fd)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxHandoff+1))
	if err != nil {
		return fmt.Errorf("secret: reading the handed-over environment: %w", err)
	}
	if len(data) > maxHandoff {
		return errors.New("secret: the handed-over environment is larger than expected; start statgraph again")
	}
	for _, kv := range strings.Split(string(data), "\x00") {
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" {
			Register(name, value)
		}
	}
	return nil
}
