package verifier

import (
	"fmt"
	"path/filepath"

	"github.com/statgraph/statgraph/internal/proc"
)

// proxyDirInside is where a sandbox sees the directory of its proxy's
// socket. It is under the sandbox's private /tmp, where bwrap can always
// make the mount point, and hidden from a plain ls by its dot.
const proxyDirInside = "/tmp/.statgraph-net"

// network returns bwrap's arguments args with those of s's network added,
// and the proxy's socket as the sandbox sees it ("" when there is none):
//
//   - Network: nothing changes, the command keeps the host's network;
//   - otherwise the sandbox gets a network namespace of its own, holding
//     only its own loopback, so no host service on 127.0.0.1, no abstract
//     unix socket (X11, D-Bus) and no other address is reachable;
//   - with AllowHosts too, the allowlisting proxy for them (proc.ProxySocket,
//     running in this process) has its socket's directory bound at
//     proxyDirInside, and Helper runs the command behind its bridge, which
//     listens on the sandbox's loopback, forwards to the socket, mirrors
//     allowed loopback endpoints and gives the command the proxy variables
//     (proc.ProxyVars: HTTP_PROXY and the rest, NO_PROXY, and
//     NODE_USE_ENV_PROXY). The bridge sets them over whatever the command's
//     environment held, so a user's own proxy variables, unreachable from
//     inside, do not win.
//
// AllowHosts without an absolute Helper, or holding a malformed host, is
// an error saying so.
func (s *Sandbox) network(args []string) ([]string, string, error) {
	if s.Network {
		return args, "", nil
	}
	args = append(args, "--unshare-net")
	if len(s.AllowHosts) == 0 {
		return args, "", nil
	}
	if !s.hasHelper() {
		return nil, "", fmt.Errorf("verifier: the sandbox allows hosts %v, but has no Helper (an absolute path) to carry "+
			"statgraph's proxy into it; set Sandbox.Helper to statgraph's sandbox-init command", s.AllowHosts)
	}
	sock, err := proc.ProxySocket(s.AllowHosts)
	if err != nil {
		return nil, "", fmt.Errorf("verifier: sandbox network: %w", err)
	}
	args = append(args, "--ro-bind", filepath.Dir(sock), proxyDirInside)
	return args, filepath.Join(proxyDirInside, proc.ProxySocketName), nil
}

// hasHelper reports whether s has a Helper to run the command through.
func (s *Sandbox) hasHelper() bool { return len(s.Helper) > 0 && filepath.IsAbs(s.Helper[0]) }
