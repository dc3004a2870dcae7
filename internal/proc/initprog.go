package proc

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"slices"
)

// initprog.go gives the source of the small sandbox-init program: RunInit
// (init.go) with Landlock (landlock.go) and the bridge (bridge.go,
// splice.go) as a module of its own, built once with the user's go
// command (verifier.BuildSandboxInit) so that every sandboxed command
// starts a 2 MB program before it runs instead of statgraph's 50 MB binary
// with its ~290 package initialisers. Those four files import only the
// standard library, go-landlock and golang.org/x/sys; TestInitSource
// builds them on their own.

var (
	//go:embed init.go
	initGo []byte
	//go:embed landlock.go
	landlockGo []byte
	//go:embed bridge.go
	bridgeGo []byte
	//go:embed splice.go
	spliceGo []byte
)

// initModules are the modules the sandbox-init program needs beyond the
// standard library, at the versions statgraph's go.mod requires (with
// go.sum's hashes, so that the build verifies them against the module
// cache it reads, and asks nothing of the network). TestInitSource holds
// them equal to go.mod and go.sum.
var initModules = []struct{ Path, Version, Sum, ModSum string }{
	{"github.com/landlock-lsm/go-landlock", "v0.11.2",
		"h1:QS17AXv0o19V55BJFPpKhU/s6KC71nXvJZkjIvCyTYg=", "h1:3AwAZcTiexERgrATGcYh6E8qebWYxE3C2VyU3HkWzJE="},
	{"golang.org/x/sys", "v0.49.0",
		"h1:XbzkgYJHdqh/8m2Uu0W/dQv8nktxx4BFHp1M0gROTXA=", "h1:hNLxWAXmnKAxqDtdwIYC4bM9oQPEecfsnNMuSxOs3og="},
	{"kernel.org/pub/linux/libs/security/libcap/psx", "v1.2.78",
		"h1:PC3yNs51cX5LZ7U57a7xielBcoXB3xnV+rXD8V0H0DQ=", "h1:+l6Ee2F59XiJ2I6WR5ObpC1utCQJZ/VLsEbQCD8RG24="},
}

// initMain is the program's main: `sandbox-init ARGS` as Init.Args writes
// them.
const initMain = `package main

import "os"

func main() { os.Exit(RunInit(os.Args[1:], os.Stderr)) }
`

// InitSource returns the files of the sandbox-init program as a module of
// its own (go.mod, go.sum, main.go and this package's init.go,
// landlock.go, bridge.go and splice.go as package main) and a name for
// its binary that changes with them, "sandbox-init-<hash>", so that a
// program built from an older statgraph is never taken for this one's.
func InitSource() (files map[string][]byte, name string) {
	var mod, sum bytes.Buffer
	mod.WriteString("module statgraph.invalid/sandboxinit\n\ngo 1.26.0\n\nrequire (\n")
	for _, m := range initModules {
		mod.WriteString("\t" + m.Path + " " + m.Version + "\n")
		sum.WriteString(m.Path + " " + m.Version + " " + m.Sum + "\n")
		sum.WriteString(m.Path + " " + m.Version + "/go.mod " + m.ModSum + "\n")
	}
	mod.WriteString(")\n")
	files = map[string][]byte{"go.mod": mod.Bytes(), "go.sum": sum.Bytes(), "main.go": []byte(initMain)}
	for n, src := range map[string][]byte{"init.go": initGo, "landlock.go": landlockGo, "bridge.go": bridgeGo, "splice.go": spliceGo} {
		files[n] = asMain(src)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n + "\x00"))
		h.Write(files[n])
		h.Write([]byte{0})
	}
	return files, "sandbox-init-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// asMain returns the Go source src of package proc as package main.
func asMain(src []byte) []byte {
	if rest, ok := bytes.CutPrefix(src, []byte("package proc\n")); ok {
		return append([]byte("package main\n"), rest...)
	}
	return bytes.Replace(src, []byte("\npackage proc\n"), []byte("\npackage main\n"), 1)
}
