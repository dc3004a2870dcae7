package verifier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
)

// Sandbox confines a Command with bubblewrap (bwrap), whoever runs
// statgraph, root included:
//
//   - the command runs in a user namespace as an unprivileged uid (65534
//     when statgraph runs as root, else the caller's own), with no
//     capabilities (--cap-drop ALL), no_new_privs, no further user
//     namespaces (--disable-userns) and a seccomp filter (proc.SeccompFilter:
//     no mount, ptrace, process_vm_*, keyctl, bpf, kernel module or clock
//     calls);
//   - the filesystem is an allowlist (see sandboxfs.go): the system
//     directories, the toolchains on PATH and the user's Go module cache
//     read-only, with the secrets of /etc and the credential stores under
//     $HOME (CredentialPaths) masked; $HOME is an empty tmpfs at the user's
//     home path; the user's other files, /root, /run and its unix sockets,
//     other tasks and statgraph's state are not there at all;
//   - Workspace, CacheDir and Home are writable; the paths in ReadOnly (such as
//     the workspace's .git) are bound read-only on top, so a check cannot
//     plant hooks or rewrite refs;
//   - with Helper, Landlock holds the same allowlist a second time, in the
//     kernel rather than in the mounts (see proc.Init): only what is shown
//     read-only can be read, only the writable places changed, and no
//     abstract unix socket or signal reaches a process outside;
//   - /tmp is a private, empty, size-capped tmpfs and TMPDIR points at it;
//   - /proc shows only the sandbox's own processes, so the caller's process
//     and its environment (/proc/<pid>/environ) are out of reach;
//   - when the command ends, times out or is cancelled, or when the calling
//     process dies (SIGKILL included), every process inside is killed: the
//     namespace's first process dies with bwrap (--die-with-parent, and Run
//     kills it itself after a timeout or cancellation, since bwrap arms that
//     signal late) and the kernel kills the rest of a PID namespace with it.
//     Run returns only once they are all gone (waiting at most 30 s);
//   - without Network, the command has a network namespace of its own;
//   - the process runs in a new session, so it cannot push keystrokes into
//     the caller's terminal.
//
// The parent-death signal is tied to the OS thread that started bwrap: a
// program that ends OS threads (a goroutine that exits while locked with
// runtime.LockOSThread) can end sandboxed commands early; statgraph does
// not. A Sandbox is only read by Run, so one may be shared by concurrent
// commands.
//
// Tool caches go under CacheDir, which statgraph gives each task: Go's build
// cache (GOCACHE, layered over the user's read-only one through GoCacheProg),
// npm's cache (npm_config_cache) and XDG_CACHE_HOME. Go modules come from
// the user's module cache, shown read-only at its own path so that the
// build cache's keys (which hold package directories) match the user's and
// dependencies compiled outside are reused; without one, a private module
// cache under CacheDir is filled from the network. The workspace itself can
// appear at a stable path (Root) and the caches of the tasks a task builds
// on sit read-only under its own (GoCacheLayers), so that a chain of tasks
// compiles each of the repository's packages once. A task therefore cannot
// poison the caches of a task that does not build on it, nor the user's.
type Sandbox struct {
	// Workspace is the directory the command may change. Required.
	Workspace string
	// ReadOnly lists paths bound read-only: parts of the workspace that
	// must not change (its .git), files inside a hidden directory the
	// command must read (a prompt file), and places under /tmp that must
	// stay visible (the user's repository, when it lives there). Paths that
	// do not exist are skipped.
	ReadOnly []string
	// Hide lists paths never shown inside the sandbox, even when inside a
	// visible directory: a directory is shown empty, a file as an empty
	// file (statgraph's state directory: the run store, other tasks'
	// workspaces; a task's "sandbox": {"hide"} paths). Paths that do not
	// exist are skipped.
	//
	// Workspace, CacheDir, ReadOnly and Hide are mounted outermost path
	// first, so each path nested in another keeps its own mode.
	Hide []string
	// CacheDir is a writable directory for the tool caches described
	// above; "" leaves the caches alone (the parent's cache variables, if
	// allowed, point into read-only places, so builds may fail).
	CacheDir string
	// Network keeps the host's network; false gives the command a network
	// namespace of its own (only its own loopback), reaching out only to
	// AllowHosts through statgraph's allowlisting proxy.
	Network bool
	// AllowHosts, without Network, lists the hosts the command may reach
	// over HTTP(S) through the allowlisting proxy ("example.com",
	// "*.example.com"; a port after a colon restricts to it). Empty: no
	// egress at all. It needs Helper.
	AllowHosts []string
	// Helper is the absolute path of a program and its first arguments that
	// run proc.RunInit inside the sandbox (statgraph's hidden sandbox-init
	// command), between bwrap and the command: it puts the command under
	// Landlock, a second filesystem layer independent of the mounts (only
	// what the sandbox shows read-only is readable, only the workspace,
	// /tmp, CacheDir and the home writable; no abstract unix socket or
	// signal reaches outside), and with AllowHosts it carries the proxy
	// into the sandbox's network namespace. Callers name
	// SandboxInitProgram's: the small program BuildSandboxInit builds,
	// which starts faster than statgraph's own binary. Nil: no Landlock
	// layer, and AllowHosts cannot be used.
	Helper []string
	// Limits bounds the command's processes, memory, /tmp, file size and
	// open files; the zero value means proc's defaults.
	Limits proc.Limits
	// Home, if set, is a directory bound writable and given to the command
	// as HOME, with XDG_CONFIG_HOME, XDG_DATA_HOME and XDG_STATE_HOME
	// under it (.config, .local/share, .local/state): a private home for a
	// program that must write its settings (agent CLIs), so that it never
	// writes the user's dotfiles. "" gives the command an empty, private
	// HOME at the user's home path.
	Home string
	// GoCacheProg, if set, is the absolute path of a program and its first
	// arguments that serve gocacheprog.Serve when given more: the upper
	// (private) build cache, then the lower (read-only) ones in search
	// order. With it, and when the user has a build cache, go commands in
	// the sandbox reuse the user's cache read-only and write only
	// CacheDir's; without it a task's first build compiles everything, the
	// standard library included. Callers name GoCacheProgram's: the small
	// program BuildGoCacheProg builds, which starts faster than statgraph's
	// own binary.
	GoCacheProg []string
	// GoCacheLayers lists read-only build caches searched, in order, after
	// CacheDir's and before the user's: the caches of the tasks this one
	// builds on, which compiled its unchanged packages already. They are
	// shown read-only. Used only with GoCacheProg.
	GoCacheLayers []string
	// Root, if set, is where Workspace appears inside the sandbox instead of
	// at its own path. statgraph shows every task's workspace at the user's
	// repository path, so that the go command's build-cache keys, which hold
	// package directories, are the same in every task, in the tasks it
	// builds on and in the user's own builds. The command's directory and
	// the paths of ReadOnly and Hide under Workspace move with it (Inside
	// maps a path the same way); what the host has under Root is not shown.
	// A relative Root, or one that would cover something the sandbox shows
	// or uses (a system directory, a directory on PATH, a ReadOnly path
	// outside Workspace, CacheDir, Home, a Hide path), is ignored: the
	// workspace then stays at its own path.
	Root string

	// noLandlock runs the command through Helper without the Landlock
	// layer: for tests showing what that layer stops, and for measuring
	// what it costs.
	noLandlock bool
}

// Inside returns the path at which host path p appears inside s: p moved
// under Root when it lies in Workspace (see Root), else p itself.
func (s *Sandbox) Inside(p string) string {
	ws, err := filepath.Abs(s.Workspace)
	if err != nil || s.root(ws) == ws || !within(p, ws) {
		return p
	}
	rel, err := filepath.Rel(ws, p)
	if err != nil {
		return p
	}
	return filepath.Join(s.root(ws), rel)
}

// root is where workspace ws appears inside s: Root when it is usable, else
// ws. Root is not usable when it would cover what the sandbox must show or
// statgraph's own places: a system directory, a directory on PATH, a path
// of ReadOnly outside the workspace (a task reading the repository), Hide,
// CacheDir or Home.
func (s *Sandbox) root(ws string) string {
	r := filepath.Clean(s.Root)
	if s.Root == "" || !filepath.IsAbs(r) || r == ws {
		return ws
	}
	shown := slices.Concat([]string{"/tmp", "/proc", "/dev", s.CacheDir, s.Home}, systemDirs, s.Hide,
		filepath.SplitList(os.Getenv("PATH")))
	for _, p := range s.ReadOnly {
		if p, err := filepath.Abs(p); err == nil && !within(p, ws) {
			shown = append(shown, p)
		}
	}
	for _, d := range shown {
		if d == "" {
			continue
		}
		if d, err := filepath.Abs(d); err == nil && within(d, r) {
			return ws
		}
	}
	return r
}

// ErrSandboxUnavailable is wrapped by the errors of SandboxAvailable and of
// Run for a sandboxed command when bubblewrap is missing or cannot set up
// its namespaces.
var ErrSandboxUnavailable = errors.New("the sandbox (bubblewrap) cannot run here")

// installHint says how to get a working sandbox.
const installHint = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), " +
	"or pass --no-sandbox to run checks and agent CLIs unprotected"

// SandboxAvailable starts `true` in a sandbox once, with every namespace a
// sandboxed Command uses, and returns nil when that works. Otherwise the
// error wraps ErrSandboxUnavailable and says what to install or enable. It
// takes ~15 ms, looks bwrap up on the current PATH each call and is safe
// for concurrent use.
func SandboxAvailable() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("%w: bwrap is not on PATH; %s", ErrSandboxUnavailable, installHint)
	}
	ws, err := os.MkdirTemp("", "statgraph-sandbox-probe-")
	if err != nil {
		return fmt.Errorf("%w: a workspace for the probe: %v", ErrSandboxUnavailable, err)
	}
	defer os.RemoveAll(ws)
	args, _, err := (&Sandbox{Workspace: ws}).wrap([]string{"true"}, ws)
	if err != nil {
		return err
	}
	args = args[1:]
	// Started as Run starts a command: in a group of its own, killed whole
	// when ctx ends, with the environment a check gets.
	cmd := exec.CommandContext(ctx, bwrap, args...)
	cmd.Env = proc.InheritedEnv(nil)
	group := &proc.Group{KillLeftovers: true}
	group.Setup(cmd)
	out, err := cmd.CombinedOutput()
	group.End()
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(string(out))
	hint := installHint
	if strings.Contains(msg, "ermission") || strings.Contains(msg, "namespace") {
		hint = "enable unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later also " +
			"sysctl -w kernel.apparmor_restrict_unprivileged_userns=0), or pass --no-sandbox to run checks and agent CLIs unprotected"
	}
	return fmt.Errorf("%w: %s %s failed: %v: %s; %s", ErrSandboxUnavailable, bwrap, strings.Join(args, " "), err, msg, hint)
}

// sandboxUID is the uid (and gid) a sandboxed command runs as: the caller's
// own, or 65534 (nobody) when the caller is root, so that nothing inside is
// root even in its user namespace.
func sandboxUID() (uid, gid int) {
	if os.Getuid() == 0 {
		return 65534, 65534
	}
	return os.Getuid(), os.Getgid()
}

// baseArgs are the namespaces and the privileges every sandbox starts from.
func baseArgs(network bool) []string {
	uid, gid := sandboxUID()
	args := []string{"--die-with-parent", "--unshare-user", "--uid", strconv.Itoa(uid), "--gid", strconv.Itoa(gid),
		"--disable-userns", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup-try", "--new-session"}
	if !network {
		args = append(args, "--unshare-net")
	}
	// The private /tmp (privateTmp) comes right after, before any mount
	// under it.
	return append(args, "--dev", "/dev", "--proc", "/proc")
}

// wrap returns the bwrap command line that runs argv in dir inside s, and
// the environment entries the sandbox sets (TMPDIR, HOME and the tool
// caches).
func (s *Sandbox) wrap(argv []string, dir string) ([]string, []string, error) {
	if s.Workspace == "" {
		return nil, nil, errors.New("verifier: sandbox has no Workspace; set the directory the command may change")
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, nil, fmt.Errorf("verifier: %w: bwrap is not on PATH; %s", ErrSandboxUnavailable, installHint)
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, nil, fmt.Errorf("verifier: sandbox working directory: %w", err)
		}
	}
	abs := func(p string) (string, bool) {
		p, err := filepath.Abs(p)
		if err != nil {
			return "", false
		}
		_, err = os.Lstat(p)
		return p, err == nil
	}
	ws, ok := abs(s.Workspace)
	if !ok {
		return nil, nil, fmt.Errorf("verifier: sandbox workspace %s does not exist", s.Workspace)
	}
	root := s.root(ws)
	var mounts []mount
	for _, m := range hostFS(os.Getenv("PATH"), s.Limits.Resolved().TmpBytes) {
		if root == ws || !within(m.path, root) { // a toolchain root in the repository
			mounts = append(mounts, m)
		}
	}
	env := []string{"TMPDIR=/tmp"}
	if home, _ := os.UserHomeDir(); home != "" && s.Home == "" {
		env = append(env, "HOME="+home)
	}
	if s.CacheDir != "" {
		cache, err := filepath.Abs(s.CacheDir)
		if err != nil {
			return nil, nil, fmt.Errorf("verifier: sandbox cache directory: %w", err)
		}
		cenv, visible := s.cacheEnv(cache)
		env = append(env, cenv...)
		for _, p := range visible {
			mounts = append(mounts, mount{op: "--ro-bind", path: p})
		}
		genv, gfile := goEnvInside()
		env = append(env, genv...)
		for _, p := range gfile {
			mounts = append(mounts, mount{op: "--ro-bind", path: p})
		}
		for _, sub := range []string{"go-build", "gomod", "npm", "xdg"} {
			if err := os.MkdirAll(filepath.Join(cache, sub), 0o755); err != nil {
				return nil, nil, fmt.Errorf("verifier: sandbox cache directory: %w", err)
			}
		}
		mounts = append(mounts, mount{op: "--bind", path: cache})
	}
	for _, r := range s.ReadOnly {
		if p, ok := abs(r); ok {
			mounts = append(mounts, mount{op: "--ro-bind", src: p, path: s.Inside(p)})
		}
	}
	// Masks go over what is visible so far: the system directories, the
	// toolchains and the read paths; the workspace, caches and home are
	// statgraph's own and hold no user credentials.
	mounts = append(mounts, masks(mounts, nil)...)
	for _, h := range s.Hide {
		if p, ok := abs(h); ok {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				mounts = append(mounts, mount{op: "--ro-bind", src: "/dev/null", path: s.Inside(p)})
			} else {
				mounts = append(mounts, mount{op: "--tmpfs", path: s.Inside(p)})
			}
		}
	}
	mounts = append(mounts, mount{op: "--bind", src: ws, path: root})
	if s.Home != "" {
		home, ok := abs(s.Home)
		if !ok {
			return nil, nil, fmt.Errorf("verifier: sandbox home %s does not exist", s.Home)
		}
		mounts = append(mounts, mount{op: "--bind", path: home})
		env = append(env, "HOME="+home,
			"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
			"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
	}
	sortMounts(mounts)
	args := slices.Concat([]string{bwrap}, baseArgs(s.Network), privateTmp(s.Limits))
	for _, m := range mounts {
		args = append(args, m.args()...)
	}
	args, proxy, err := s.network(args)
	if err != nil {
		return nil, nil, err
	}
	if s.hasHelper() {
		read, write := landlockPaths(mounts)
		read = append(read, s.Helper[0])
		if proxy != "" {
			read = append(read, proxyDirInside)
		}
		in := proc.Init{Landlock: !s.noLandlock, Read: read, Write: append(write, "/tmp"), Proxy: proxy, Allow: s.AllowHosts}
		args = append(args, "--ro-bind", s.Helper[0], s.Helper[0])
		argv = append(slices.Clone(s.Helper), in.Args(argv)...)
	}
	if d, err := filepath.Abs(dir); err == nil {
		dir = s.Inside(d)
	}
	args = append(args, "--chdir", dir, "--")
	return append(args, argv...), env, nil
}

// cacheEnv returns the tool-cache variables for a sandbox whose cache
// directory is cache, and the paths outside it the caches read (the user's
// module cache, the cache program and the user's build cache).
func (s *Sandbox) cacheEnv(cache string) ([]string, []string) {
	var visible []string
	env := []string{
		"GOCACHE=" + filepath.Join(cache, "go-build"),
		"npm_config_cache=" + filepath.Join(cache, "npm"),
		"XDG_CACHE_HOME=" + filepath.Join(cache, "xdg"),
		// -modcacherw keeps a private module cache removable by statgraph.
		"GOFLAGS=" + strings.TrimSpace(goSetting("GOFLAGS")+" -modcacherw"),
	}
	if mod := userModCache(); mod != "" {
		// At its own path, so that packages keep the directories the
		// user's build cache was keyed with.
		env = append(env, "GOMODCACHE="+mod)
		visible = append(visible, mod)
	} else {
		env = append(env, "GOMODCACHE="+filepath.Join(cache, "gomod"))
	}
	lowers := slices.Clone(s.GoCacheLayers)
	if lower := userGoCache(); lower != "" {
		lowers = append(lowers, lower)
	}
	if len(lowers) > 0 && len(s.GoCacheProg) > 0 && filepath.IsAbs(s.GoCacheProg[0]) {
		prog := s.GoCacheProg
		args := slices.Concat(prog, []string{filepath.Join(cache, "go-build")}, lowers)
		for i, a := range args {
			if strings.ContainsAny(a, " \t\n'\"") {
				args[i] = "'" + a + "'"
			}
		}
		env = append(env, "GOCACHEPROG="+strings.Join(args, " "))
		visible = append(visible, prog[0])
		visible = append(visible, lowers...)
	}
	return env, visible
}
