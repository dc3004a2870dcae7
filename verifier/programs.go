package verifier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/statgraph/statgraph/internal/fsutil"
	"github.com/statgraph/statgraph/internal/gocacheprog"
	"github.com/statgraph/statgraph/internal/proc"
)

// programs.go builds the two small programs a sandbox starts again and
// again (the build cache's GOCACHEPROG, once per go command, and
// sandbox-init, once per sandboxed command) from source embedded in
// statgraph, with the user's go command, into a directory the caller
// names (statgraph's state root's bin, workspace.BinDir). statgraph's own
// binary serves both too (its gocacheprog and sandbox-init commands), but
// it is 50 MB with ~290 package initialisers: about a third of a second to
// start at load, where the small ones take milliseconds.

// BuildGoCacheProg returns the path of the layered build cache's program
// (Sandbox.GoCacheProg, package internal/gocacheprog), building it with
// the go command on PATH into dir the first time: a program of the
// standard library only. The binary's name holds a hash of its source, so
// a later statgraph builds its own; an existing one is reused. The build
// runs outside the sandbox with the user's go toolchain and build cache,
// in a temporary directory under dir, and is renamed into place complete.
// It fails when there is no go command or the build fails; callers then
// use their own binary.
func BuildGoCacheProg(ctx context.Context, dir string) (string, error) {
	files, name := gocacheprog.Source()
	return buildProgram(ctx, dir, "the go cache program", files, name, []string{"GOFLAGS="})
}

// BuildSandboxInit returns the path of the sandbox-init program
// (Sandbox.Helper, proc.InitSource), building it into dir the first time
// as BuildGoCacheProg does. Besides the standard library it needs
// go-landlock and golang.org/x/sys at the versions statgraph was built
// with, which it takes from the user's module cache only (GOPROXY=off:
// the build never downloads), checked against the hashes of statgraph's
// go.sum. It fails when the module cache does not hold them (statgraph
// was not built on this machine) or there is no go command; callers then
// use statgraph's own sandbox-init.
func BuildSandboxInit(ctx context.Context, dir string) (string, error) {
	mod := userModCache()
	if mod == "" {
		return "", errors.New("verifier: build the sandbox-init program: no Go module cache to take go-landlock from " +
			"(GOMODCACHE, else GOPATH's pkg/mod); `go install` statgraph on this machine to fill it")
	}
	files, name := proc.InitSource()
	return buildProgram(ctx, dir, "the sandbox-init program", files, name,
		[]string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOMODCACHE=" + mod})
}

// buildProgram builds the module files into dir/name unless an executable
// is there already, with the go command's environment env over
// statgraph's defaults; what names the program in errors.
func buildProgram(ctx context.Context, dir, what string, files map[string][]byte, name string, env []string) (string, error) {
	bin := filepath.Join(dir, name)
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("verifier: build %s: %w", what, err)
	}
	sweepBuildDirs(dir)
	src, err := os.MkdirTemp(dir, buildDirPrefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return "", fmt.Errorf("verifier: build %s: %w", what, err)
	}
	defer os.RemoveAll(src)
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(src, n), b, 0o644); err != nil {
			return "", fmt.Errorf("verifier: build %s: %w", what, err)
		}
	}
	tmp := filepath.Join(src, name)
	// The go command writes telemetry counters under the user's config
	// directory; pointed at the build directory they go with it, and the
	// user's go env file is named by its path. Without a build cache of
	// the user's, the build's own goes with the build directory too.
	base := []string{"GOWORK=off", "GO111MODULE=on", "CGO_ENABLED=0", "GOTOOLCHAIN=local",
		"XDG_CONFIG_HOME=" + filepath.Join(src, "config"), "GOENV=off", "GOCACHE=" + filepath.Join(src, "cache")}
	if file := goEnvFile(); file != "" {
		base[5] = "GOENV=" + file
	}
	if cache := userGoCache(); cache != "" {
		base[6] = "GOCACHE=" + cache
	}
	res, err := Run(ctx, Command{Argv: []string{"go", "build", "-o", tmp, "."}, Dir: src, Timeout: buildTimeout, Env: append(base, env...)})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("go build exited with %d: %s", res.ExitCode, strings.TrimSpace(res.Output))
	}
	if err != nil {
		return "", fmt.Errorf("verifier: build %s in %s: %w", what, dir, err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("verifier: build %s: %w", what, err)
	}
	return bin, nil
}

// buildDirPrefix starts the names of buildProgram's build directories:
// .build-<pid>-<random>.
const buildDirPrefix = ".build-"

// buildTimeout bounds one program's go build.
const buildTimeout = 5 * time.Minute

// sweepBuildDirs removes the build directories in dir that a build killed
// before it ended left (a kill -9, a crash): those named by a pid no
// longer alive, and those named without one (an older statgraph's) once
// they are older than a build may take. Failures are ignored: a directory
// left behind costs only disk.
func sweepBuildDirs(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), buildDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		if pid, err := strconv.Atoi(pidText); err == nil {
			if fsutil.ProcessAlive(pid) {
				continue
			}
		} else if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < 2*buildTimeout {
			continue
		}
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// built holds each program's build, at most one per program and
// directory in a process: "<program>\x00<dir>" -> func() (string, error).
var built sync.Map

// buildOnce returns build's outcome for dir, building at most once per
// process (with its own deadline, whoever asks first).
func buildOnce(program, dir string, build func(context.Context, string) (string, error)) (string, error) {
	once, _ := built.LoadOrStore(program+"\x00"+dir, sync.OnceValues(func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		return build(ctx, dir)
	}))
	return once.(func() (string, error))()
}

// GoCacheProgram returns the program to name in Sandbox.GoCacheProg:
// BuildGoCacheProg's in binDir (built at most once per process and
// directory), else fallback, which serves the same protocol, only
// starting slower. A nil fallback (no cache program wanted) gives nil, and
// binDir "" builds nothing.
func GoCacheProgram(binDir string, fallback []string) []string {
	if len(fallback) == 0 || binDir == "" {
		return fallback
	}
	bin, err := buildOnce("gocacheprog", binDir, BuildGoCacheProg)
	if err != nil {
		return fallback
	}
	return []string{bin}
}

// SandboxInitProgram returns the program to name in Sandbox.Helper:
// BuildSandboxInit's in binDir (built at most once per process and
// directory), else fallback (statgraph's own sandbox-init, which does the
// same, only starting slower) with the error saying why the small one
// could not be built. A nil fallback (no helper wanted) gives nil, and
// binDir "" builds nothing.
func SandboxInitProgram(binDir string, fallback []string) ([]string, error) {
	switch {
	case len(fallback) == 0:
		return nil, nil
	case binDir == "":
		return fallback, errors.New("verifier: no directory to build the sandbox-init program in")
	}
	bin, err := buildOnce("sandbox-init", binDir, BuildSandboxInit)
	if err != nil {
		return fallback, err
	}
	return []string{bin}, nil
}
