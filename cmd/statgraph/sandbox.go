package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/verifier"
)

// sandboxProbeCmd is the hidden command by which the statgraph binary
// attacks the sandbox from inside for `statgraph sandbox check` and for the
// check run makes before it starts.
const sandboxProbeCmd = "sandbox-probe"

// selfProgram returns statgraph's own executable followed by the hidden
// command cmd, or nil when the executable cannot be found.
func selfProgram(cmd string) []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, cmd}
}

// cmdSandbox runs `statgraph sandbox check`: it attacks a sandbox on this
// machine from inside and prints what held. Exit 1 when an attack got
// through, 2 when no sandbox can be started.
func cmdSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 || args[0] != "check" {
		return exitUsage, usagef("usage: statgraph sandbox check   (probe the sandbox from inside on this machine)")
	}
	fs := flag.NewFlagSet("sandbox check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage, errUsage
	}
	probe := selfProgram(sandboxProbeCmd)
	if probe == nil {
		return exitUsage, fmt.Errorf("cannot find statgraph's own executable to probe the sandbox with")
	}
	// The probe runs through the sandbox-init program checks get.
	helper, small := selfProgram(sandboxInitCmd), errors.New("statgraph's state root is unknown")
	if bin, err := workspace.BinDir(); err == nil {
		helper, small = verifier.SandboxInitProgram(bin, helper)
	}
	probes, err := verifier.CheckSandbox(ctx, probe, helper)
	if err != nil {
		return exitUsage, err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tRESULT\tDETAIL")
	broken := 0
	for _, p := range probes {
		verdict := "held"
		detail := p.Detail
		if !p.Held {
			verdict, detail = "BROKEN", p.Detail+"; "+p.Fix
			broken++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, verdict, detail)
	}
	fmt.Fprintln(tw, "\nLAYER\tENFORCED BY\tNOTE")
	for _, l := range append(layers(), initLayer(helper, small)) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l[0], l[1], l[2])
	}
	fmt.Fprintln(tw, "\nBOUND\tENFORCED BY\tNOTE")
	for _, b := range proc.Support() {
		via := b.Via
		if !b.Enforced() {
			via = "not enforced"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Resource, via, b.Note)
	}
	tw.Flush()
	if broken > 0 {
		fmt.Fprintf(stdout, "\n%d of %d probes got through: statgraph run refuses to start until they hold (or pass --no-sandbox knowingly)\n", broken, len(probes))
		return exitFailed, nil
	}
	fmt.Fprintf(stdout, "\nall %d probes held\n", len(probes))
	return exitOK, nil
}

// initLayer returns, for `statgraph sandbox check`, the row saying which
// program runs inside each sandbox before the command (helper, as
// verifier.SandboxInitProgram chose it) and, when statgraph's own binary
// serves, why the small one could not be built (small).
func initLayer(helper []string, small error) [3]string {
	switch {
	case len(helper) == 0:
		return [3]string{"sandbox-init", "none", "statgraph cannot find its own executable: no Landlock layer"}
	case small == nil:
		return [3]string{"sandbox-init", "small program " + filepath.Base(helper[0]), "built from statgraph's source in " + filepath.Dir(helper[0])}
	}
	return [3]string{"sandbox-init", "statgraph's own binary", "slower to start; the small program could not be built: " + small.Error()}
}

// layers returns, for `statgraph sandbox check`, each layer of the
// sandbox with what enforces it on this machine and a note: the user
// namespace, seccomp, Landlock and the network namespace.
func layers() [][3]string {
	uid := "uid 65534 (statgraph runs as root)"
	if os.Getuid() != 0 {
		uid = fmt.Sprintf("uid %d", os.Getuid())
	}
	out := [][3]string{{"privileges", "user namespace, --cap-drop ALL, no_new_privs", uid + ", no capabilities"}}
	if _, err := proc.SeccompFilter(); err != nil {
		out = append(out, [3]string{"system calls", "not enforced", err.Error()})
	} else {
		out = append(out, [3]string{"system calls", "seccomp filter", "no mount, ptrace, bpf, keyctl, module, clock calls or new namespaces"})
	}
	if abi := proc.LandlockABI(); abi > 0 {
		out = append(out, [3]string{"filesystem", fmt.Sprintf("bwrap's mounts and Landlock ABI %d", abi), proc.LandlockScope(abi)})
	} else {
		out = append(out, [3]string{"filesystem", "bwrap's mounts only", "this kernel has no Landlock (Linux 5.13 or later, with landlock among its LSMs, adds it)"})
	}
	return append(out, [3]string{"network", "network namespace", "egress only through statgraph's allowlisting proxy, to the hosts a task names"})
}
