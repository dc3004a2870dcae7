package verifier

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
)

// probe.go checks the sandbox from inside, on this machine: statgraph
// plants what an attacker would go for (a file in $HOME, a listener on
// the host's loopback, a path and an abstract unix socket, a secret in a
// host process's environment), starts its own binary in a sandbox as the attacker, and
// reads back which attacks were stopped. `statgraph sandbox check` prints
// the result; `run` refuses to start when an attack gets through.

// Probe is one attack made from inside the sandbox and its outcome.
type Probe struct {
	// Name says what was tried, e.g. "cannot read a file in $HOME".
	Name string
	// Held reports that the sandbox stopped the attack.
	Held bool
	// Detail is what the attack got, or the error that stopped it.
	Detail string
	// Fix says what to install or enable when the attack got through.
	Fix string
}

// ProbeAttack makes one attack from inside a sandbox: kind names it and arg
// is its target (a path, an address). It returns what the attack got, or
// the error that stopped it. The kinds: "caps" (the effective capability
// set), "uid0", "read", "write", "remount" and "umount" (of a mount point),
// "userns" (a nested user namespace), "unix" and "tcp" (a connection and
// the line the server sends), "dial" (a TCP connection alone, for servers
// that wait for the client, as PostgreSQL does) and "environ" (a process
// whose environment holds arg).
func ProbeAttack(kind, arg string) (string, error) {
	switch kind {
	case "caps":
		st, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return "", err
		}
		for line := range strings.Lines(string(st)) {
			if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
				if v = strings.TrimSpace(v); strings.Trim(v, "0") != "" {
					return "CapEff " + v, nil
				}
				return "", fmt.Errorf("no capabilities (CapEff %s)", v)
			}
		}
		return "", errors.New("no CapEff line in /proc/self/status")
	case "uid0":
		if os.Getuid() == 0 {
			return "uid 0", nil
		}
		return "", fmt.Errorf("uid %d", os.Getuid())
	case "read":
		b, err := os.ReadFile(arg)
		return strings.TrimSpace(string(b)), err
	case "write":
		return "wrote " + arg, os.WriteFile(arg, []byte("pwned\n"), 0o644)
	case "remount":
		return "remounted " + arg + " read-write", syscall.Mount("none", arg, "", syscall.MS_REMOUNT|syscall.MS_BIND, "")
	case "umount":
		return "unmounted " + arg, syscall.Unmount(arg, syscall.MNT_DETACH)
	case "userns":
		return "made a user namespace", syscall.Unshare(syscall.CLONE_NEWUSER)
	case "dial":
		c, err := net.DialTimeout("tcp", arg, 2*time.Second)
		if err != nil {
			return "", err
		}
		c.Close()
		return "connected to " + arg, nil
	case "unix", "tcp":
		c, err := net.DialTimeout(kind, arg, 2*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(2 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		return "connected: " + strings.TrimSpace(line), err
	case "environ":
		procs, _ := filepath.Glob("/proc/[0-9]*/environ")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), arg) {
				return "found in " + p, nil
			}
		}
		return "", fmt.Errorf("no visible process holds it (%d processes)", len(procs))
	}
	return "", fmt.Errorf("unknown attack %q", kind)
}

// ServeSandboxProbe runs the attacks named in args ("kind:arg" each) and
// writes one line per attack to w: "OK <what it got>" or "NO <error>". It is
// the program CheckSandbox starts inside the sandbox (statgraph's hidden
// sandbox-probe command).
func ServeSandboxProbe(w io.Writer, args []string) {
	for _, a := range args {
		kind, arg, _ := strings.Cut(a, ":")
		got, err := ProbeAttack(kind, arg)
		if err != nil {
			fmt.Fprintln(w, "NO", oneLine(err.Error()))
		} else {
			fmt.Fprintln(w, "OK", oneLine(got))
		}
	}
}

// oneLine returns s on one line, cut to 200 bytes.
func oneLine(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// serveOneLine answers every connection on ln with one line until ln is
// closed.
func serveOneLine(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.WriteString(c, "host service\n")
		c.Close()
	}
}

// CheckSandbox attacks a sandbox on this machine from inside and reports
// each attack. probe is the absolute path of a program and its first
// arguments that run ServeSandboxProbe with the attacks as further
// arguments (statgraph's `statgraph sandbox-probe`); helper, when set, is
// the sandbox's Helper (statgraph's sandbox-init), so that the probe runs
// under the Landlock layer as checks do, and one more attack (writing the
// sandbox's own root, which only Landlock refuses) shows that layer holds
// where the kernel has Landlock. It tries to read a file of $HOME (a
// canary it makes and removes only when $HOME holds none, restoring
// $HOME's modification and access times), and plants a listener on
// 127.0.0.1, a unix socket in $XDG_RUNTIME_DIR (else /var/tmp) and an
// abstract one, and a host process holding a canary in its environment,
// all removed before it returns. The error is non-nil only when the
// sandbox cannot be started at all (it wraps ErrSandboxUnavailable) or the
// probe could not be set up.
func CheckSandbox(ctx context.Context, probe, helper []string) ([]Probe, error) {
	if err := SandboxAvailable(); err != nil {
		return nil, err
	}
	if len(probe) == 0 || !filepath.IsAbs(probe[0]) {
		return nil, fmt.Errorf("verifier: the sandbox probe needs the absolute path of its program, got %q", probe)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("verifier: sandbox probe: %w", err)
	}
	token := make([]byte, 12)
	rand.Read(token)
	secret := "statgraph-probe-" + hex.EncodeToString(token)
	// The sockets go where a user's services keep theirs (D-Bus in
	// $XDG_RUNTIME_DIR), else beside /tmp, never in $HOME.
	bait, err := os.MkdirTemp(runtimeDir(), ".statgraph-probe-")
	if err != nil {
		return nil, fmt.Errorf("verifier: sandbox probe: a directory for its sockets: %w", err)
	}
	defer os.RemoveAll(bait)
	// A file of $HOME the sandbox must not show; one is made (and removed)
	// only when $HOME holds none.
	canary := homeFile(home, probe[0])
	if canary == "" {
		restore, err := keepTimes(home)
		if err != nil {
			return nil, fmt.Errorf("verifier: sandbox probe: %w", err)
		}
		dir, err := os.MkdirTemp(home, ".statgraph-probe-")
		if err != nil {
			return nil, fmt.Errorf("verifier: sandbox probe: a canary under $HOME: %w", err)
		}
		defer restore()
		defer os.RemoveAll(dir)
		canary = filepath.Join(dir, "credentials")
		if err := os.WriteFile(canary, []byte(secret+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("verifier: sandbox probe: %w", err)
		}
	}
	var listeners []net.Listener
	defer func() {
		for _, ln := range listeners {
			ln.Close()
		}
	}()
	listen := func(network, addr string) (string, error) {
		ln, err := net.Listen(network, addr)
		if err != nil {
			return "", fmt.Errorf("verifier: sandbox probe: listen on %s: %w", addr, err)
		}
		listeners = append(listeners, ln)
		go serveOneLine(ln)
		return ln.Addr().String(), nil
	}
	tcp, err := listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sock, err := listen("unix", filepath.Join(bait, "bus.sock"))
	if err != nil {
		return nil, err
	}
	abstract, err := listen("unix", fmt.Sprintf("@statgraph-probe-%d-%x", os.Getpid(), token[:4]))
	if err != nil {
		return nil, err
	}
	// A host process holding a secret in its environment, as statgraph
	// holds the model's API key.
	holder := exec.Command("sleep", "120")
	holder.Env = []string{"STATGRAPH_SANDBOX_PROBE_CANARY=" + secret}
	if err := holder.Start(); err != nil {
		return nil, fmt.Errorf("verifier: sandbox probe: a process holding a canary: %w", err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()

	userns := "enable user namespaces (sysctl -w user.max_user_namespaces=15000) and use bubblewrap 0.8 or later"
	rows := []struct{ name, attack, fix string }{
		{"no capabilities", "caps:", userns},
		{"not uid 0", "uid0:", userns},
		{"cannot remount / read-write", "remount:/", userns},
		{"cannot unmount the private /tmp", "umount:/tmp", userns},
		{"no nested user namespace", "userns:", "use bubblewrap 0.8 or later (--disable-userns)"},
		{"cannot read a file in $HOME", "read:" + canary, "report it: statgraph's filesystem allowlist showed $HOME"},
		{"cannot read /etc/shadow", "read:/etc/shadow", "report it: /etc/shadow was not masked"},
		{"cannot reach the host's loopback", "tcp:" + tcp, "report it: the sandbox kept the host's network"},
		{"cannot reach a unix socket outside", "unix:" + sock, "report it: the socket's directory was visible"},
		{"cannot reach a host abstract socket", "unix:" + abstract, "report it: the sandbox kept the host's network namespace"},
		{"cannot read statgraph's environment", "environ:" + secret, "report it: /proc showed the host's processes"},
	}
	sb := &Sandbox{ReadOnly: []string{probe[0]}}
	if len(helper) > 0 {
		sb.Helper = helper
		if abi := proc.LandlockABI(); abi > 0 {
			rows = append(rows, struct{ name, attack, fix string }{fmt.Sprintf("cannot write the sandbox's root (Landlock ABI %d)", abi),
				"write:/.statgraph-probe", "report it: the Landlock layer was not applied"})
		}
	}
	argv := append([]string{}, probe...)
	for _, r := range rows {
		argv = append(argv, r.attack)
	}
	ws, err := os.MkdirTemp("", "statgraph-probe-ws-")
	if err != nil {
		return nil, fmt.Errorf("verifier: sandbox probe: %w", err)
	}
	defer os.RemoveAll(ws)
	sb.Workspace = ws
	res, err := Run(ctx, Command{Argv: argv, Dir: ws, Timeout: time.Minute, Sandbox: sb})
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	if res.ExitCode != 0 || len(lines) != len(rows) {
		return nil, fmt.Errorf("verifier: the sandbox probe %s exited %d with %d lines for %d attacks: %s",
			probe[0], res.ExitCode, len(lines), len(rows), res.Output)
	}
	out := make([]Probe, len(rows))
	for i, r := range rows {
		verdict, detail, _ := strings.Cut(lines[i], " ")
		out[i] = Probe{Name: r.name, Held: verdict == "NO", Detail: detail}
		if !out[i].Held {
			out[i].Fix = r.fix
		}
	}
	return out, nil
}

// runtimeDir returns $XDG_RUNTIME_DIR when it is a directory, else /var/tmp
// when it is one, else the temporary directory.
func runtimeDir() string {
	for _, d := range []string{os.Getenv("XDG_RUNTIME_DIR"), "/var/tmp"} {
		if fi, err := os.Stat(d); d != "" && err == nil && fi.IsDir() {
			return d
		}
	}
	return os.TempDir()
}

// homeFile returns a regular file under home other than skip (the first
// found, at most two directories deep and 500 entries in), or "" when
// there is none.
func homeFile(home, skip string) string {
	found, seen := "", 0
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		seen++
		switch {
		case err != nil && d != nil && d.IsDir():
			return fs.SkipDir
		case found != "" || seen > 500:
			return fs.SkipAll
		case d.Type().IsRegular() && p != skip:
			found = p
			return fs.SkipAll
		case d.IsDir() && strings.Count(strings.TrimPrefix(p, home), string(filepath.Separator)) >= 2:
			return fs.SkipDir
		}
		return nil
	})
	return found
}

// keepTimes records dir's access and modification times and returns a
// function that sets them back, so that a canary made and removed in it
// leaves no trace but its change time.
func keepTimes(dir string) (func(), error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return nil, err
	}
	atime, mtime := time.Unix(st.Atim.Unix()), time.Unix(st.Mtim.Unix())
	return func() { _ = os.Chtimes(dir, atime, mtime) }, nil
}
