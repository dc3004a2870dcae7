package secret

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// isolateChild is set in the environment of the copy of the test binary
// that TestIsolateReexecutes starts; TestMain then runs isolateMain.
const isolateChild = "STATGRAPH_ISOLATE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(isolateChild) == "1" {
		isolateMain()
		return
	}
	os.Exit(m.Run())
}

// isolateMain calls Isolate as statgraph's main does and prints what the
// process then has: its pid, its /proc/self/environ, and what Lookup and
// Scrub give for the secret.
func isolateMain() {
	isSecret := func(name string) bool { return strings.HasSuffix(name, "_TOKEN") }
	if err := Isolate(isSecret); err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		os.Exit(3)
	}
	environ, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		os.Exit(3)
	}
	v, _ := Lookup("ISOLATE_TEST_TOKEN")
	dumpable, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, 3, 0, 0) // PR_GET_DUMPABLE
	os.Stdout.WriteString("pid=" + strconv.Itoa(os.Getpid()) + "\n" +
		"dumpable=" + strconv.Itoa(int(dumpable)) + "\n" +
		"lookup=" + v + "\n" +
		"scrub=" + Scrub("token "+v) + "\n" +
		"getenv=" + os.Getenv("ISOLATE_TEST_TOKEN") + "\n" +
		"environ=" + strings.ReplaceAll(string(environ), "\x00", " ") + "\n")
	os.Exit(7) // the exit code must reach the parent unchanged
}

// TestIsolateReexecutes starts a copy of the test binary with a secret in
// its environment and checks that Isolate re-executed it in place: same
// pid, the secret gone from /proc/self/environ and from os.Getenv, still
// there for Lookup and scrubbed from output, the process not dumpable, and
// the exit code unchanged.
func TestIsolateReexecutes(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), isolateChild+"=1", "ISOLATE_TEST_TOKEN=tok-isolate-canary-42", "ISOLATE_TEST_PLAIN=visible")
	var out strings.Builder
	cmd.Stdout = &out
	err = cmd.Start()
	if err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Fatalf("exit code %d (%v); want 7\n%s", code, err, out.String())
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	for _, c := range []struct{ key, want string }{
		{"pid", strconv.Itoa(pid)},
		{"lookup", "tok-isolate-canary-42"},
		{"scrub", "token " + Marker},
		{"getenv", ""},
		{"dumpable", "0"},
	} {
		if got[c.key] != c.want {
			t.Errorf("%s = %q; want %q\n%s", c.key, got[c.key], c.want, out.String())
		}
	}
	if env := got["environ"]; strings.Contains(env, "ISOLATE_TEST_TOKEN") || strings.Contains(env, "canary") {
		t.Errorf("/proc/self/environ after Isolate still holds the secret: %s", env)
	} else if !strings.Contains(env, "ISOLATE_TEST_PLAIN=visible") {
		t.Errorf("/proc/self/environ lost the other variables: %s", env)
	}
}

func TestReceiveRejectsWhatIsNotAHandoff(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "not-a-pipe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dup, err := syscall.Dup(int(f.Fd())) // receive closes what it is given
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range []string{"x", "1", strconv.Itoa(dup)} {
		err := receive(fd)
		if err == nil || !strings.Contains(err.Error(), "unset it") {
			t.Errorf("receive(%q) = %v; want an error saying to unset %s", fd, err, handoffVar)
		}
	}
}
