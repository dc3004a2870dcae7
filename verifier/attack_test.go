package verifier

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/asuser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// attack_test.go attacks the sandbox as a model-written check would, from
// statgraph running as root (as CI does) and, through a copy of this test
// binary re-executed as uid 65534, from statgraph running as a user. Each
// attack is also made inside today's bwrap invocation before this round
// (oldSandboxArgs), where it must work: that is what shows the test can fail.

// oldSandboxArgs is the bwrap invocation statgraph used before the sandbox
// dropped root and the whole-/ view (commit 9d8edc4): the control every
// attack must succeed in.
func oldSandboxArgs(ws, self string) []string {
	return []string{"--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--new-session",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", ws, ws, "--ro-bind", self, self}
}

// TestSandboxProbeHelper is the attacker inside the sandbox: with
// $SANDBOX_PROBE set it makes one attack and prints "OK <what it got>" when
// the attack worked, "NO <error>" when it was stopped. It does nothing in a
// normal test run.
func TestSandboxProbeHelper(t *testing.T) {
	probe := os.Getenv("SANDBOX_PROBE")
	if probe == "" {
		return
	}
	kind, arg, _ := strings.Cut(probe, ":")
	got, err := ProbeAttack(kind, arg)
	if kind == "list" { // a directory listing: worked when it names .ssh
		ents, lerr := os.ReadDir(arg)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		got, err = strings.Join(names, " "), lerr
		if err == nil && !slices.Contains(names, ".ssh") {
			err = fmt.Errorf("no .ssh among %v", names)
		}
	}
	if err != nil {
		fmt.Println("NO", err)
	} else {
		fmt.Println("OK", got)
	}
	os.Exit(0)
}

// attack is one row: a probe and whether it must be stopped in the new
// sandbox (it always works in the old one, except where noted).
type attack struct {
	name, probe string
	oldWorks    bool // false: the old sandbox stopped it too (or it needs root outside)
}

// serveLine listens on network/addr and answers every connection with one
// line, until the test ends.
func serveLine(t *testing.T, network, addr string) string {
	t.Helper()
	ln, err := net.Listen(network, addr)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go serveOneLine(ln)
	return ln.Addr().String()
}

// attackRows sets up what the attacks aim at — credentials in a home of
// the test's own (HOME is pointed at it), a user repository, a path and an
// abstract unix socket, a loopback listener, and the PostgreSQL server of
// STATGRAPH_TEST_POSTGRES when it listens on loopback — and returns the
// rows.
func attackRows(t *testing.T, home string) []attack {
	t.Helper()
	creds := map[string]string{
		".ssh/id_ed25519":           "CANARY-ssh",
		".aws/credentials":          "CANARY-aws",
		".netrc":                    "CANARY-netrc",
		".config/gh/hosts.yml":      "CANARY-gh",
		".docker/config.json":       "CANARY-docker",
		".git-credentials":          "CANARY-gitcred",
		".pgpass":                   "CANARY-pgpass",
		".cargo/credentials.toml":   "CANARY-cargo",
		".claude.json":              "CANARY-claude",
		".bashrc":                   "CANARY-bashrc",
		"project/.git/config":       "CANARY-repo-config",
		".local/share/keyrings/x.k": "CANARY-keyring",
	}
	var rows []attack
	for rel, canary := range creds {
		p := filepath.Join(home, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(canary+"\n"), 0o600))
		rows = append(rows, attack{"read ~/" + rel, "read:" + p, true})
	}
	// ~/.cargo is a toolchain root the sandbox shows: its token is masked.
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".cargo", "bin"), 0o755))
	sockDir, err := os.MkdirTemp(home, "run-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(sockDir, 0o755))
	pathSock := serveLine(t, "unix", filepath.Join(sockDir, "bus.sock"))
	abstract := serveLine(t, "unix", fmt.Sprintf("@statgraph-attack-%d", os.Getpid()))
	tcp := serveLine(t, "tcp", "127.0.0.1:0")
	rows = append(rows,
		attack{"capabilities", "caps:", os.Getuid() == 0},
		attack{"uid 0", "uid0:", os.Getuid() == 0},
		attack{"remount / read-write", "remount:/", os.Getuid() == 0},
		attack{"unmount the private /tmp", "umount:/tmp", os.Getuid() == 0},
		attack{"list $HOME", "list:" + home, true},
		attack{"append to ~/.bashrc", "write:" + filepath.Join(home, ".bashrc"), false},
		attack{"path unix socket", "unix:" + pathSock, true},
		attack{"abstract unix socket", "unix:" + abstract, false},
		attack{"host loopback listener", "tcp:" + tcp, false},
	)
	if pg := os.Getenv("STATGRAPH_TEST_POSTGRES"); pg != "" {
		// The queue's database on the host's loopback (CI has one):
		// the way a check reached the worker fleet's tables with ~/.pgpass.
		u, err := url.Parse(pg)
		require.NoError(t, err)
		if h, _, _ := net.SplitHostPort(u.Host); net.ParseIP(h).IsLoopback() {
			rows = append(rows, attack{"host Postgres", "dial:" + u.Host, true})
		}
	}
	if os.Getuid() == 0 {
		// Root's own home, whatever HOME says.
		canary := fmt.Sprintf("/root/.statgraph-attack-%d", os.Getpid())
		require.NoError(t, os.WriteFile(canary, []byte("CANARY-root\n"), 0o600))
		t.Cleanup(func() { os.Remove(canary) })
		rows = append(rows,
			attack{"read /etc/shadow", "read:/etc/shadow", true},
			attack{"read a file under /root", "read:" + canary, true},
		)
	}
	return rows
}

// runAttacks makes every attack of attackRows in the sandbox and, as the
// control, in the old one.
func runAttacks(t *testing.T) {
	requireSandbox(t)
	// Outside /tmp, which the old sandbox hid too.
	home, err := os.MkdirTemp("/var/tmp", "statgraph-attack-home-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	require.NoError(t, os.Chmod(home, 0o755))
	t.Setenv("HOME", home)
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	bwrap, err := exec.LookPath("bwrap")
	require.NoError(t, err)
	for _, a := range attackRows(t, home) {
		t.Run(a.name, func(t *testing.T) {
			ws := t.TempDir()
			probe := []string{self, "-test.run", "^TestSandboxProbeHelper$"}
			res, err := Run(context.Background(), Command{
				Argv: probe, Dir: ws, Timeout: time.Minute, Env: []string{"SANDBOX_PROBE=" + a.probe},
				Sandbox: &Sandbox{Workspace: ws, ReadOnly: []string{self}},
			})
			require.NoError(t, err)
			if target, ok := strings.CutPrefix(a.probe, "write:"); ok {
				// The write may land in the sandbox's private $HOME; the host's file must not change.
				b, err := os.ReadFile(target)
				require.NoError(t, err)
				assert.NotContains(t, string(b), "pwned", "the sandbox wrote the host's %s", target)
			} else {
				assert.Contains(t, res.Output, "NO ", "the sandbox let the attack through: %s", res.Output)
			}
			assert.NotContains(t, res.Output, "CANARY")
			old := exec.Command(bwrap, append(append(oldSandboxArgs(ws, self), "--"), probe...)...)
			old.Env, old.Dir = append(os.Environ(), "SANDBOX_PROBE="+a.probe), ws
			out, _ := old.CombinedOutput()
			if a.oldWorks {
				assert.Contains(t, string(out), "OK ", "the attack must work in the old sandbox, or this row proves nothing: %s", out)
			}
		})
	}
}

// TestSandboxAttacksAsRoot: statgraph run by root (as in CI and containers).
func TestSandboxAttacksAsRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root; TestSandboxAttacksAsUser covers a user's run")
	}
	runAttacks(t)
}

// TestSandboxAttacksAsUser: statgraph run by an unprivileged user. As root
// the test re-executes a copy of its binary as uid 65534; as a user it runs
// the attacks directly.
func TestSandboxAttacksAsUser(t *testing.T) {
	if os.Getuid() != 0 {
		runAttacks(t)
		return
	}
	requireSandbox(t)
	out := asuser.RunTests(t, "^TestSandboxAttacksAsUser$", []string{"TestSandboxAttacksAsUser"}, "TMPDIR="+os.TempDir())
	assert.NotContains(t, out, "--- FAIL")
}
