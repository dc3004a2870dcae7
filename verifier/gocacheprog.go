package verifier

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/statgraph/statgraph/internal/fsutil"
	"github.com/statgraph/statgraph/internal/gocacheprog"
)

// BuildGoCacheProg returns the path of the layered build cache's program
// (Sandbox.GoCacheProg, package internal/gocacheprog), building it with
// the go command on PATH into dir the first time: a small program of the
// standard library only, which starts in milliseconds where statgraph's
// own binary (whose `gocacheprog` command serves the same protocol) takes
// a third of a second, paid by every go command in the sandbox. The
// binary's name holds a hash of its source, so a later statgraph builds
// its own; an existing one is reused. The build runs outside the sandbox
// with the user's go toolchain and build cache, in a temporary directory
// under dir, and is renamed into place complete, so a build killed at any
// moment leaves no program at its name; the build directories such a
// build leaves are removed by the next call (see sweepBuildDirs). It fails
// when there is no go command or the build fails; callers then use their
// own binary.
func BuildGoCacheProg(ctx context.Context, dir string) (string, error) {
	files, name := gocacheprog.Source()
	bin := filepath.Join(dir, name)
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("verifier: build the go cache program: %w", err)
	}
	sweepBuildDirs(dir)
	src, err := os.MkdirTemp(dir, buildDirPrefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return "", fmt.Errorf("verifier: build the go cache program: %w", err)
	}
	defer os.RemoveAll(src)
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(src, n), b, 0o644); err != nil {
			return "", fmt.Errorf("verifier: build the go cache program: %w", err)
		}
	}
	tmp := filepath.Join(src, name)
	// The go command writes telemetry counters under the user's config
	// directory; pointed at the build directory they go with it, and the
	// user's go env file is named by its own path.
	env := []string{"GOFLAGS=", "GOWORK=off", "GO111MODULE=on", "CGO_ENABLED=0", "GOTOOLCHAIN=local",
		"XDG_CONFIG_HOME=" + filepath.Join(src, "config"), "GOENV=off"}
	if file := goEnvFile(); file != "" {
		env[len(env)-1] = "GOENV=" + file
	}
	if cache := userGoCache(); cache != "" {
		env = append(env, "GOCACHE="+cache)
	}
	res, err := Run(ctx, Command{Argv: []string{"go", "build", "-o", tmp, "."}, Dir: src, Timeout: buildTimeout, Env: env})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("go build exited with %d: %s", res.ExitCode, strings.TrimSpace(res.Output))
	}
	if err != nil {
		return "", fmt.Errorf("verifier: build the go cache program in %s: %w", dir, err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("verifier: build the go cache program: %w", err)
	}
	return bin, nil
}

// buildDirPrefix starts the names of BuildGoCacheProg's build directories:
// .build-<pid>-<random>.
const buildDirPrefix = ".build-"

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

// buildTimeout bounds the cache program's go build.
const buildTimeout = 5 * time.Minute

// fastGoCacheProg is BuildGoCacheProg's program under $STATGRAPH_HOME/bin
// when STATGRAPH_HOME is set, else under the user's cache directory, built
// at most once per process ("" when it could not be).
var fastGoCacheProg func() string

func init() { fastGoCacheProg = sync.OnceValue(buildFastGoCacheProg) }

// buildFastGoCacheProg builds fastGoCacheProg's program.
func buildFastGoCacheProg() string {
	dir := ""
	if home := os.Getenv("STATGRAPH_HOME"); home != "" {
		dir = filepath.Join(home, "bin") // statgraph's state root, when one is named
	} else if base, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(base, "statgraph")
	}
	if !filepath.IsAbs(dir) {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	bin, err := BuildGoCacheProg(ctx, dir)
	if err != nil {
		return ""
	}
	return bin
}

// goCacheProgram returns the program and first arguments to name in
// GOCACHEPROG: fastGoCacheProg's when it builds, else prog (which serves
// the same protocol, only starting slower).
func goCacheProgram(prog []string) []string {
	if bin := fastGoCacheProg(); bin != "" {
		return []string{bin}
	}
	return prog
}
