package proc

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/statgraph/statgraph/internal/asuser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// landlockAttacks is the attacker of TestLandlockWithoutBwrap, run as
// `proc.test landlock-attack KIND:ARG...`: it prints one line per attack,
// "OK <what it got>" when it worked and "NO <error>" when it was stopped.
func landlockAttacks(args []string) {
	for _, a := range args {
		kind, arg, _ := strings.Cut(a, ":")
		var got string
		var err error
		switch kind {
		case "write":
			got, err = "wrote "+arg, os.WriteFile(arg, []byte("pwned\n"), 0o644)
		case "read":
			var b []byte
			b, err = os.ReadFile(arg)
			got = strings.TrimSpace(string(b))
		case "signal":
			pid, _ := strconv.Atoi(arg)
			got, err = "signalled "+arg, syscall.Kill(pid, 0)
		case "unix", "tcp":
			var c net.Conn
			if c, err = net.Dial(kind, arg); err == nil {
				b, _ := io.ReadAll(c)
				c.Close()
				got = "connected: " + strings.TrimSpace(string(b))
			}
		default:
			err = fmt.Errorf("unknown attack %q", kind)
		}
		if err != nil {
			fmt.Println("NO", err)
		} else {
			fmt.Println("OK", got)
		}
	}
}

// serveOne answers every connection on network/addr with one line until
// the test ends, and returns its address.
func serveOne(t *testing.T, network, addr string) string {
	t.Helper()
	ln, err := net.Listen(network, addr)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "host service\n")
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// TestLandlockWithoutBwrap defeats the mount layer entirely: sandbox-init
// runs on the host, with no bwrap around it, so that every path of the
// machine is there to reach. Under Landlock the command can write only
// where --write says and read only where --read says, cannot connect to an
// abstract unix socket or signal a process outside its domain, and still
// reaches a TCP listener (TCP is left to the network namespace). The
// control runs the same attacks through sandbox-init without --landlock,
// where each works. As root it runs again as uid 65534.
func TestLandlockWithoutBwrap(t *testing.T) {
	abi := LandlockABI()
	if abi == 0 {
		t.Skip("this kernel has no Landlock")
	}
	if os.Geteuid() == 0 && !asuser.Inner() {
		defer asuser.RunTests(t, "^TestLandlockWithoutBwrap$", []string{"TestLandlockWithoutBwrap"})
	}
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "credentials")
	require.NoError(t, os.WriteFile(secret, []byte("CANARY\n"), 0o644))
	abstract := serveOne(t, "unix", fmt.Sprintf("@statgraph-landlock-%d", os.Getpid()))
	tcp := serveOne(t, "tcp", "127.0.0.1:0")
	// A process outside the sandbox, of the same user, to signal.
	victim := exec.Command("sleep", "60")
	require.NoError(t, victim.Start())
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })

	rows := []struct {
		name, attack string
		held         bool // whether Landlock stops it
		minABI       int
	}{
		{"write in the workspace", "write:" + filepath.Join(ws, "f"), false, 1},
		{"write outside", "write:" + filepath.Join(outside, "planted"), true, 1},
		{"read a credential outside", "read:" + secret, true, 1},
		{"tcp to a loopback listener", "tcp:" + tcp, false, 1},
		{"abstract unix socket outside", "unix:" + abstract, true, 6},
		{"signal a process outside", "signal:" + strconv.Itoa(victim.Process.Pid), true, 6},
	}
	attacks := []string{"landlock-attack"}
	for _, r := range rows {
		attacks = append(attacks, r.attack)
	}
	run := func(landlock bool) []string {
		in := Init{Landlock: landlock, Read: []string{"/usr", "/lib", "/lib64", "/etc", self}, Write: []string{ws}}
		cmd := exec.Command(self, append([]string{"sandbox-init"}, in.Args(append([]string{self}, attacks...))...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Len(t, lines, len(rows), "%s", out)
		return lines
	}
	confined, control := run(true), run(false)
	for i, r := range rows {
		assert.True(t, strings.HasPrefix(control[i], "OK "), "%s works without Landlock: %s", r.name, control[i])
		if r.held && abi >= r.minABI {
			assert.True(t, strings.HasPrefix(confined[i], "NO "), "%s is stopped by Landlock: %s", r.name, confined[i])
		} else {
			assert.True(t, strings.HasPrefix(confined[i], "OK "), "%s still works under Landlock: %s", r.name, confined[i])
		}
	}
	b, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "CANARY\n", string(b))
}

// TestInitArgs: what Init.Args writes, parseInitArgs reads back; malformed
// arguments are refused.
func TestInitArgs(t *testing.T) {
	in := Init{Landlock: true, Read: []string{"/usr", "/etc"}, Write: []string{"/ws"}, Proxy: "/tmp/p.sock", Allow: []string{"127.0.0.1:8080", "example.com"}}
	got, mirrors, argv, err := parseInitArgs(in.Args([]string{"go", "test", "--", "-x"}))
	require.NoError(t, err)
	assert.Equal(t, Init{Landlock: true, Read: in.Read, Write: in.Write, Proxy: in.Proxy}, got)
	assert.Equal(t, []string{"127.0.0.1:8080"}, mirrors)
	assert.Equal(t, []string{"go", "test", "--", "-x"}, argv)
	for _, bad := range [][]string{{"--"}, {"--read"}, {"--mirror", "a:1", "--", "x"}, {"--bogus", "--", "x"}, {"x"}} {
		_, _, _, err := parseInitArgs(bad)
		assert.Error(t, err, "%q", bad)
	}
	_, _, _, err = parseInitArgs(nil)
	assert.EqualError(t, err, "no -- COMMAND")
}
