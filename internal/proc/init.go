package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// Init is what statgraph's hidden sandbox-init command does inside a
// sandbox, between bwrap and the sandboxed command: put the command under
// Landlock and, for an allowlisted network, carry the proxy in (the
// bridge, see bridge.go). Paths are as the sandbox shows them.
type Init struct {
	// Landlock puts the command under a Landlock domain (see
	// landlockRules) where it may read and execute only Read and change
	// only Write; false leaves Landlock out.
	Landlock bool
	// Read and Write are the directories and files the command may read,
	// and change, under Landlock.
	Read, Write []string
	// Proxy is the unix socket of statgraph's allowlisting proxy; "" runs
	// no bridge, and the command replaces sandbox-init (exec).
	Proxy string
	// Allow is the proxy's allowlist; the bridge mirrors its loopback
	// endpoints (see loopbackMirrors).
	Allow []string
}

// RunInit does what args (made by Init.Args) say and returns the
// command's exit status (128+n when a signal n ended it; 127 when it
// cannot be started or confined, 2 for malformed args), writing what went
// wrong to stderr. Without a proxy it confines itself and execs the
// command, so nothing of statgraph stays in the sandbox. With one it
// starts the bridge, then the command from a thread of its own under
// Landlock, with the proxy variables (ProxyVars) set over the
// environment's; it forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT to the
// command and returns once it has exited (connections still open are the
// caller's to end, by exiting, as statgraph's sandbox-init does).
func RunInit(args []string, stderr io.Writer) int {
	in, mirrors, argv, err := parseInitArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "statgraph sandbox-init: %v; it is run by statgraph inside the sandbox, not by hand\n", err)
		return 2
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "statgraph sandbox-init: cannot run %s: %v\n", argv[0], err)
		return 127
	}
	// confine puts the calling goroutine's thread under Landlock.
	confine := func() error {
		if !in.Landlock {
			return nil
		}
		_, err := restrictThread(in.Read, in.Write)
		return err
	}
	if in.Proxy == "" {
		if err := confine(); err != nil {
			fmt.Fprintf(stderr, "statgraph sandbox-init: %v\n", err)
			return 127
		}
		err := syscall.Exec(path, argv, os.Environ())
		fmt.Fprintf(stderr, "statgraph sandbox-init: cannot run %s: %v\n", argv[0], err)
		return 127
	}
	addr, err := startBridge(in.Proxy, mirrors, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "statgraph sandbox-init: %v\n", err)
		return 127
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = append(os.Environ(), ProxyVars(addr)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	started := make(chan error)
	go func() {
		// Locked to its confined thread and never unlocked: the thread
		// ends with this goroutine, and only the command inherits it.
		if err := confine(); err != nil {
			started <- err
			return
		}
		started <- cmd.Start()
	}()
	if err := <-started; err != nil {
		fmt.Fprintf(stderr, "statgraph sandbox-init: cannot run %s: %v\n", argv[0], err)
		return 127
	}
	waited := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-waited:
				return
			}
		}
	}()
	_ = cmd.Wait() // the status is read from ProcessState
	close(waited)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// parseInitArgs reads what Init.Args writes: --landlock, any number of
// --read PATH and --write PATH, --proxy SOCK, any number of --mirror
// HOST:PORT, then "--" and the command.
func parseInitArgs(args []string) (in Init, mirrors, argv []string, err error) {
	for len(args) > 0 {
		switch a := args[0]; {
		case a == "--":
			if len(args) < 2 || args[1] == "" {
				return Init{}, nil, nil, errors.New("no command after --")
			}
			if len(mirrors) > 0 && in.Proxy == "" {
				return Init{}, nil, nil, errors.New("--mirror without --proxy SOCKET")
			}
			return in, mirrors, args[1:], nil
		case a == "--landlock":
			in.Landlock = true
			args = args[1:]
		case (a == "--proxy" || a == "--mirror" || a == "--read" || a == "--write") && len(args) > 1:
			switch a {
			case "--proxy":
				in.Proxy = args[1]
			case "--mirror":
				mirrors = append(mirrors, args[1])
			case "--read":
				in.Read = append(in.Read, args[1])
			case "--write":
				in.Write = append(in.Write, args[1])
			}
			args = args[2:]
		default:
			return Init{}, nil, nil, fmt.Errorf("unexpected argument %q; want [--landlock [--read PATH]... [--write PATH]...] "+
				"[--proxy SOCKET [--mirror HOST:PORT]...] -- COMMAND...", a)
		}
	}
	return Init{}, nil, nil, errors.New("no -- COMMAND")
}
