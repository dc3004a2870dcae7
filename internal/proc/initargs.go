package proc

import (
	"net"
	"net/netip"
	"slices"
	"strconv"

	"github.com/statgraph/statgraph/internal/hostrule"
)

// initargs.go writes what the sandbox-init program reads (parseInitArgs,
// init.go). It stays outside the small program's source (initprog.go):
// it runs in statgraph, and hostrule is statgraph's.

// Args returns the arguments, after the helper program's own, that make
// RunInit do in and then run argv.
func (in Init) Args(argv []string) []string {
	var args []string
	if in.Landlock {
		args = append(args, "--landlock")
		for _, p := range in.Read {
			args = append(args, "--read", p)
		}
		for _, p := range in.Write {
			args = append(args, "--write", p)
		}
	}
	if in.Proxy != "" {
		args = append(args, "--proxy", in.Proxy)
		for _, m := range loopbackMirrors(in.Allow) {
			args = append(args, "--mirror", m)
		}
	}
	return slices.Concat(args, []string{"--"}, argv)
}

// loopbackMirrors returns the rules of allow that name a loopback address
// (or localhost) with a port, as host:port.
func loopbackMirrors(allow []string) []string {
	var out []string
	for _, s := range allow {
		r, err := hostrule.Parse(s)
		if err != nil || !r.Literal || r.Port == 0 {
			continue
		}
		if ip, err := netip.ParseAddr(r.Host); err == nil && !ip.IsLoopback() {
			continue
		}
		out = append(out, net.JoinHostPort(r.Host, strconv.Itoa(r.Port)))
	}
	return out
}
