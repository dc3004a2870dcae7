// Package verifier decides whether a task's work is done: it runs the
// task's test and lint commands safely and turns their output into a
// Verification an orchestrator can route on and an agent can act on.
//
// Run is the command runner for the processes statgraph runs on a task's
// behalf: checks, setup_cmd and agent CLIs (git, today, has runners of its
// own in agents/workspace and queue). A Command is an argv run without a
// shell, or an explicit shell string from the operator's configuration,
// never one built from model output. Each command runs in its own process
// group (proc.Group, as git's runner's): on timeout or cancellation the whole group gets SIGTERM and, after
// a grace period, SIGKILL, and when the main process exits whatever it left
// in its group is killed, so background jobs and grandchildren cannot
// outlive the call or hang it by holding the output pipe. The child sees
// only an allow-listed environment (PATH, HOME, locale, the go tool's
// variables, ...) with anything that looks like a credential (proc.IsSecretName)
// removed unless named in AllowEnv, so the orchestrator's API keys never
// reach code written by a model. Output is captured with a fixed memory
// bound (proc.CapBuffer), keeping its head and tail and saying how many bytes were dropped
// in between, and is scrubbed of every secret statgraph knows and its
// encodings (package internal/secret), since a hostile test may print
// whatever it finds.
//
// A Command with a Sandbox runs inside bubblewrap (bwrap, Debian's
// "bubblewrap" package), for code statgraph did not write: an unprivileged
// uid in a user namespace with no capabilities and a seccomp filter, an
// allowlisted filesystem (system directories and toolchains read-only, the
// workspace, the task's cache directory and an empty private $HOME
// writable, the workspace's .git read-only, a private size-capped /tmp,
// statgraph's state and the user's credentials absent), its own PID
// namespace (the caller's /proc/<pid>/environ is out of reach), bounds on
// processes, memory, files and /tmp, and death with everything it started
// when it ends or when the caller dies, kill -9 included. Its network is
// the host's only when asked for (Sandbox.Network); otherwise it has a
// network namespace of its own, reaching only the hosts in AllowHosts
// through statgraph's allowlisting proxy (package internal/proc). The
// Sandbox type's comment gives the whole list and the tool caches. bwrap
// rather than namespaces set up from Go: it is small, packaged and audited,
// and gets the ordering of user, mount and PID namespace set-up, the
// pivot_root and the parent-death signal right, which a Go process
// (multi-threaded, so unable to unshare its own mount namespace safely)
// cannot do without a re-exec helper of its own. SandboxAvailable tells
// whether bwrap works on this machine, and CheckSandbox attacks a sandbox
// from inside and reports what held (statgraph sandbox check).
//
// Verify runs a set of Checks concurrently. Each check has a Kind (test,
// lint or other; other counts towards TestsPassed) and an enforcement Mode
// (package statgraph/gate's): blocking failures fail the Verification,
// advisory ones become Warnings, informational ones are only recorded. While a check runs, its whole output
// streams through parsers, so findings are not lost to the capture's cap:
//
//   - `go test -json` events give the failing tests with the lines that
//     explain them, and packages that failed to build with their compiler
//     errors;
//   - plain `go test` and `go test -v` output ("--- FAIL: TestX") is the
//     fallback;
//   - otherwise "file:line:col: message" lines from go vet, staticcheck,
//     golangci-lint, gcc, clang or eslint's unix format become Diagnostics;
//   - anything else is judged by its exit code, with its output.
//
// A check passes when it exits 0 in time and its output names no failing
// test, so a test binary that exits 0 despite failures does not pass.
//
// Verification.RenderFeedback renders the result for an agent's next attempt
// within a byte budget: the verdict, failing test names and their key lines
// first, then diagnostics, then the head and tail of unexplained output.
//
// Of statgraph, the package imports only the library's gate (for the
// enforcement modes) and the internal packages proc (the sandbox's parts),
// secret (the scrubber) and obs (tracing hooks).
package verifier
