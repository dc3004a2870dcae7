package proc

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkProxyLatency measures what the sandbox's way out adds to one
// request to a server on loopback: "direct" is the request as it is,
// "http" goes through the bridge (a child process, as in a sandbox) and
// the allowlisting proxy as a forwarded plain-HTTP request, "connect" as
// an HTTPS request tunnelled with CONNECT, to compare with "direct-tls",
// the same request without the proxy. "fresh" opens a
// connection per request, "kept" reuses one. Each reports the median
// latency (med-us) and the CPU time of this process (client, server and
// proxy) plus the bridge's, per request (cpu-us); the proxy's share is the
// difference from direct in the same run.
func BenchmarkProxyLatency(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	plain, secure := httptest.NewServer(h), httptest.NewTLSServer(h)
	defer plain.Close()
	defer secure.Close()
	sock, err := ProxySocket([]string{plain.Listener.Addr().String(), secure.Listener.Addr().String()})
	if err != nil {
		b.Fatal(err)
	}
	// The bridge, as in a sandbox, in front of a command that says where
	// it listens and waits.
	br := execBridge(b, sock)
	defer func() { br.Process.Kill(); br.Wait() }()
	proxyURL := br.proxy
	for _, keep := range []bool{false, true} {
		for _, mode := range []string{"direct", "http", "direct-tls", "connect"} {
			name := map[bool]string{false: "fresh", true: "kept"}[keep] + "/" + mode
			b.Run(name, func(b *testing.B) {
				tr := &http.Transport{DisableKeepAlives: !keep, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
				defer tr.CloseIdleConnections()
				target := plain.URL
				if mode == "http" || mode == "connect" {
					u, _ := url.Parse(proxyURL)
					tr.Proxy = http.ProxyURL(u)
				}
				if mode == "direct-tls" || mode == "connect" {
					target = secure.URL
				}
				client := &http.Client{Transport: tr}
				get := func() {
					res, err := client.Get(target + "/")
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Fatalf("status %d", res.StatusCode)
					}
				}
				get() // warm: the handshake of a kept connection is not what is measured
				var lat []time.Duration
				cpu0 := cpuTime(os.Getpid(), true) + cpuTime(br.Process.Pid, false)
				for b.Loop() {
					start := time.Now()
					get()
					lat = append(lat, time.Since(start))
				}
				cpu := cpuTime(os.Getpid(), true) + cpuTime(br.Process.Pid, false) - cpu0
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "med-us")
				b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-us")
			})
		}
	}
}

// bridgeProc is a bridge running in front of a waiting command.
type bridgeProc struct {
	*os.Process
	Wait  func() error
	proxy string // the proxy URL the command was given
}

// execBridge starts this test binary as the bridge to sock, its command
// printing HTTP_PROXY and sleeping.
func execBridge(b *testing.B, sock string) bridgeProc {
	b.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"sandbox-init"}, Init{Proxy: sock}.Args([]string{"sh", "-c", `echo "$HTTP_PROXY"; exec sleep 3600`})...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return bridgeProc{Process: cmd.Process, Wait: cmd.Wait, proxy: strings.TrimSpace(line)}
}

// cpuTime returns the user and system time process pid has used: this
// process's from getrusage (self), another's from /proc/<pid>/stat.
func cpuTime(pid int, self bool) time.Duration {
	if self {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name (in parentheses): utime and stime are
	// the 14th and 15th fields, in clock ticks (100 per second on Linux).
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}
