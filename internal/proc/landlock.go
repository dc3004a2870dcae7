package proc

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlock.go is the sandbox's second filesystem layer, independent of
// bwrap's mounts: statgraph's sandbox-init puts the command under a
// Landlock domain just before it runs it, so that even where a mount shows
// something (the sandbox's own root and /dev are writable tmpfs; a mount
// could be undone), the kernel lets the command read and execute only the
// paths the sandbox meant to show and change only the writable ones.
//
// It is built with go-landlock (maintained by Landlock's kernel
// developers) rather than raw syscalls: its rule types, its per-ABI
// access sets and its best-effort downgrade on older kernels are the
// parts that are easy to get wrong.

// landlockConfig is what statgraph asks of Landlock: every filesystem
// right up to ABI 7 (reads, writes, truncation, device ioctls,
// reparenting) and both IPC scopes of ABI 6 (an abstract unix socket or a
// signal reaching a process outside the sandbox), downgraded to what the
// kernel offers (BestEffort). TCP is left alone: Landlock's TCP rules name
// ports, not addresses, so they cannot tell the sandbox's own loopback
// (which tests use: httptest, a database on 127.0.0.1) from anything
// else, and the sandbox's network namespace already holds the network.
var landlockConfig = landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS, Scoped: landlock.V7.Scoped}.BestEffort()

// Access rights beyond go-landlock's RODirs and RWDirs.
const (
	fsRead    = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	fsUseFile = ll.AccessFSWriteFile | ll.AccessFSTruncate
)

// LandlockABI returns the Landlock ABI version this kernel offers, 0 when
// it has none (too old, or Landlock is not among the enabled LSMs). It is
// safe for concurrent use.
func LandlockABI() int { return landlockABI() }

var landlockABI = sync.OnceValue(func() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
})

// LandlockScope says what Landlock enforces at ABI version abi under
// statgraph's configuration, for `statgraph sandbox check`; "" when it
// enforces nothing.
func LandlockScope(abi int) string {
	switch {
	case abi <= 0:
		return ""
	case abi < 6:
		return "read-only except the workspace, /tmp, the caches and the private home"
	}
	return "read-only except the workspace, /tmp, the caches and the private home; " +
		"no abstract unix socket or signal reaches outside"
}

// landlockRules returns the rules of a sandbox whose command may read
// (and execute) under read and change under write, paths as the sandbox
// shows them: besides those, /dev's files may be written and their
// ioctls used (a terminal, /dev/null) but nothing made there, /dev/shm is
// writable (POSIX shared memory), and /proc is readable and its files
// writable (a process's own settings). A path that does not exist is
// skipped; a file gets the file rights of its kind.
func landlockRules(read, write []string) []landlock.Rule {
	rules := []landlock.Rule{
		landlock.PathAccess(fsRead|fsUseFile|ll.AccessFSIoctlDev, "/dev").IgnoreIfMissing(),
		landlock.RWDirs("/dev/shm").WithRefer().IgnoreIfMissing(),
		landlock.PathAccess(fsRead|fsUseFile, "/proc").IgnoreIfMissing(),
	}
	for _, p := range read {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			rules = append(rules, landlock.RODirs(p))
		} else if err == nil {
			rules = append(rules, landlock.ROFiles(p))
		}
	}
	for _, p := range write {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			// Refer: moving a file between writable directories (git's
			// objects, the go command's caches) is a rename across them.
			rules = append(rules, landlock.RWDirs(p).WithRefer())
		} else if err == nil {
			rules = append(rules, landlock.RWFiles(p))
		}
	}
	return rules
}

// restrictThread puts the calling goroutine's OS thread under a Landlock
// domain where only read and write (see landlockRules) are reachable, and
// keeps the goroutine locked to it: the caller must exec or start the
// command from this goroutine and never unlock it, so that the Go runtime
// ends the thread rather than reuse it. Only this thread and what it
// starts are confined (statgraph's bridge keeps its own threads, which
// need nothing Landlock holds back). On a kernel without Landlock it does
// nothing and returns 0; otherwise it returns the ABI enforced.
func restrictThread(read, write []string) (int, error) {
	fd, flags, err := landlockConfig.NewRulesetFD(landlockRules(read, write)...)
	if err != nil {
		return 0, fmt.Errorf("building the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return 0, nil
	}
	defer unix.Close(fd)
	runtime.LockOSThread()
	// bwrap sets no_new_privs already; it is what lets an unprivileged
	// process restrict itself, so make sure.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return 0, fmt.Errorf("enforcing the Landlock ruleset: %w", err)
	}
	return LandlockABI(), nil
}
