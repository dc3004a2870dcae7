package agents

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/verifier"
)

// sandbox returns the sandbox the agent CLI runs in: a copy of c.Sandbox
// (shared with the checks, which keep the user's HOME, read-only, and only
// the task's hosts) allowing also c.Hosts and the model server each base
// URL variable of env (the agent's environment, KEY=VALUE) names, plus,
// when it has a cache directory, the agent's private home, made and
// seeded on first use.
func (c CommandExecutor) sandbox(env []string) (*verifier.Sandbox, error) {
	if c.Sandbox == nil {
		return nil, nil
	}
	sb := *c.Sandbox
	if !sb.Network {
		sb.AllowHosts = slices.Clone(sb.AllowHosts)
		for _, h := range append(slices.Clone(c.Hosts), baseURLHosts(env)...) {
			if !slices.Contains(sb.AllowHosts, h) {
				sb.AllowHosts = append(sb.AllowHosts, h)
			}
		}
	}
	if sb.CacheDir != "" {
		sb.Home = filepath.Join(sb.CacheDir, "home")
		if err := seedHome(sb.Home, c.HomeConfig); err != nil {
			return nil, fmt.Errorf("command executor: private home for the agent: %w", err)
		}
	}
	return &sb, nil
}

// baseURLHosts returns host:port of each BaseURLVars entry of env that is
// a URL with a host (the port from the scheme when it names none).
func baseURLHosts(env []string) []string {
	var out []string
	for _, e := range env {
		name, val, _ := strings.Cut(e, "=")
		if !slices.Contains(BaseURLVars, name) {
			continue
		}
		u, err := url.Parse(strings.TrimSpace(val))
		if err != nil || u.Hostname() == "" {
			continue
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		if h := net.JoinHostPort(u.Hostname(), port); port != "" && proc.CheckHost(h) == nil && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// seedHome makes home, unless it exists, holding copies of the paths of
// config (relative to the user's HOME; a path under .config or
// .local/share is read from $XDG_CONFIG_HOME or $XDG_DATA_HOME when set)
// that exist: regular files with their mode, directories, symbolic links
// as links; other files are skipped. It builds the copy under a temporary
// name and renames it into place, so an interrupted seed is redone. A home
// that exists is left as the agent left it (its settings and sessions are
// kept across attempts) and never copied back.
func seedHome(home string, config []string) error {
	if _, err := os.Lstat(home); err == nil {
		return nil
	}
	parent := filepath.Dir(home)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".home-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // after the rename, nothing is left under tmp
	if err := os.Chmod(tmp, 0o700); err != nil {
		return err
	}
	userHome, _ := os.UserHomeDir()
	for _, rel := range config {
		rel = filepath.Clean(filepath.FromSlash(rel))
		if filepath.IsAbs(rel) || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("home config path %q is not inside HOME", rel)
		}
		src := userConfigPath(userHome, rel)
		if src == "" {
			continue
		}
		if err := copyTree(src, filepath.Join(tmp, rel)); err != nil {
			return fmt.Errorf("copy %s: %w", src, err)
		}
	}
	if err := os.Rename(tmp, home); err != nil {
		if _, serr := os.Lstat(home); serr == nil {
			return nil // seeded meanwhile
		}
		return err
	}
	return nil
}

// userConfigPath returns where the user's own copy of rel (relative to
// HOME) is, or "" when HOME is unknown.
func userConfigPath(userHome, rel string) string {
	for _, x := range []struct{ dir, env string }{
		{".config", "XDG_CONFIG_HOME"},
		{filepath.Join(".local", "share"), "XDG_DATA_HOME"},
	} {
		if v := os.Getenv(x.env); filepath.IsAbs(v) && (rel == x.dir || strings.HasPrefix(rel, x.dir+string(filepath.Separator))) {
			return filepath.Join(v, strings.TrimPrefix(rel, x.dir))
		}
	}
	if userHome == "" {
		return ""
	}
	return filepath.Join(userHome, rel)
}

// copyTree copies src (following it when it is a link) to dst, creating
// dst's parents; a missing src is not an error.
func copyTree(src, dst string) error {
	st, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return nil
		}
		return copyFile(src, dst, st.Mode().Perm())
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil // what the user cannot read is not needed
			}
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // sockets, pipes, devices
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if errors.Is(err, fs.ErrPermission) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
