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

	"github.com/statgraph/statgraph/internal/fsutil"
	"github.com/statgraph/statgraph/internal/hostrule"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/verifier"
)

// sandbox returns the sandbox the agent CLI runs attempt n in, and a
// function that removes what it made for the attempt, to call once the
// command has ended: c.Sandbox (shared with the checks) with promptDir
// bound read-only, c.Hosts and the model server each base URL variable
// of the agent's environment names allowed besides the task's hosts, and, when HomeDir is set, a fresh private home (see
// newHome) as HOME. With no Sandbox it returns nil and a no-op. Without a
// private home, the credentials of the user's own HomeConfig paths are
// registered with the scrubber instead of the copies'.
func (c CommandExecutor) sandbox(promptDir string, n int) (*verifier.Sandbox, func() error, error) {
	none := func() error { return nil }
	if c.Sandbox == nil || c.HomeDir == "" {
		// The agent reads its login from the user's HOME itself.
		userHome, _ := os.UserHomeDir()
		for _, rel := range c.HomeConfig {
			if rel = filepath.Clean(filepath.FromSlash(rel)); filepath.IsLocal(rel) {
				if src := userConfigPath(userHome, rel); src != "" {
					registerCredentials(src)
				}
			}
		}
	}
	if c.Sandbox == nil {
		return nil, none, nil
	}
	sb := *c.Sandbox
	sb.ReadOnly = append(slices.Clone(sb.ReadOnly), promptDir)
	if !sb.Network {
		sb.AllowHosts = slices.Clone(sb.AllowHosts)
		for _, h := range append(slices.Clone(c.Hosts), baseURLHosts(c.environ())...) {
			if !slices.Contains(sb.AllowHosts, h) {
				sb.AllowHosts = append(sb.AllowHosts, h)
			}
		}
	}
	if c.HomeDir == "" {
		return &sb, none, nil
	}
	h, err := newHome(c.HomeDir, n, c.HomeConfig)
	if err != nil {
		return nil, none, fmt.Errorf("command executor: private home for the agent: %w", err)
	}
	sb.Home = h.dir
	return &sb, h.remove, nil
}

// home is one attempt's private home, locked (see lockDir) while in use so
// that RemoveStaleHomes leaves it alone.
type home struct {
	dir  string
	lock *os.File
}

// newHome makes a new directory under parent for attempt n, holding copies
// of the paths of config (relative to the user's HOME; a path under
// .config or .local/share is read from $XDG_CONFIG_HOME or $XDG_DATA_HOME
// when set) that exist: regular files with their mode, directories,
// symbolic links as links; other files are skipped. The values in the
// copies that look like credentials are added to the scrubber's set (see
// registerCredentials). Nothing in it is ever copied back.
func newHome(parent string, n int, config []string) (*home, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, err
	}
	var h *home
	for h == nil {
		dir, err := os.MkdirTemp(parent, fmt.Sprintf("attempt-%d-*", n))
		if err != nil {
			return nil, err
		}
		lock, err := lockDir(dir, false)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a sweep of stale homes took it before the lock
		}
		if err != nil {
			return nil, err
		}
		if st, err := os.Lstat(dir); err == nil {
			if lst, err := lock.Stat(); err == nil && os.SameFile(st, lst) {
				h = &home{dir: dir, lock: lock}
				break
			}
		}
		lock.Close() // removed (and perhaps made again) between MkdirTemp and the lock
	}
	if err := h.seed(config); err != nil {
		return nil, errors.Join(err, h.remove())
	}
	return h, nil
}

func (h *home) seed(config []string) error {
	userHome, _ := os.UserHomeDir()
	for _, rel := range config {
		rel = filepath.Clean(filepath.FromSlash(rel))
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("home config path %q is not inside HOME", rel)
		}
		src := userConfigPath(userHome, rel)
		if src == "" {
			continue
		}
		if err := copyTree(src, filepath.Join(h.dir, rel)); err != nil {
			return fmt.Errorf("copy %s: %w", src, err)
		}
	}
	registerCredentials(h.dir)
	return nil
}

// remove deletes the home and releases its lock.
func (h *home) remove() error {
	err := removeTree(h.dir)
	h.lock.Close()
	if err != nil {
		return fmt.Errorf("command executor: remove the agent's private home (it holds copies of its credentials): %w", err)
	}
	return nil
}

// RemoveStaleHomes deletes the private homes under dir (a CommandExecutor's
// HomeDir, or a directory of them, one level up) that no attempt holds:
// those a killed statgraph left behind. Homes in use by another process
// are left alone. A dir that does not exist is no error.
func RemoveStaleHomes(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove stale agent homes: %w", err)
	}
	var errs []error
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			continue
		}
		if !strings.HasPrefix(e.Name(), "attempt-") {
			errs = append(errs, RemoveStaleHomes(p))
			os.Remove(p) // the task's directory, once empty
			continue
		}
		lock, err := lockDir(p, true)
		if err != nil {
			continue // in use, or gone meanwhile
		}
		if err := removeTree(p); err != nil {
			errs = append(errs, fmt.Errorf("remove stale agent home: %w", err))
		}
		lock.Close()
	}
	return errors.Join(errs...)
}

// removeTree removes dir and everything in it, also what the agent made
// unwritable (a directory of mode 0500).
func removeTree(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// credentialNames are the extensions of the files of a private home whose
// values registerCredentials reads ("" for files without one).
var credentialNames = []string{"", ".json", ".yml", ".yaml", ".toml", ".ini", ".conf", ".cfg", ".env", ".netrc"}

// maxCredentialFiles bounds the files registerCredentials reads in a home.
const maxCredentialFiles = 200

// registerCredentials adds the values of dir's configuration files that
// look like credentials (see secret.AddCredentials) to the scrubber's set,
// so that what the agent CLI prints of its tokens, or copies into the
// workspace, is removed from outputs, feedback, the run store, prompts and
// commits. It reads the first 1 MiB of files with a configuration file's
// extension or a name saying auth, cred, token, secret or key, at most
// maxCredentialFiles of them.
func registerCredentials(dir string) {
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || n >= maxCredentialFiles {
			return nil
		}
		name := strings.ToLower(d.Name())
		if !slices.Contains(credentialNames, filepath.Ext(name)) && !containsAny(name, "auth", "cred", "token", "secret", "key") {
			return nil
		}
		n++
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		data, _ := io.ReadAll(io.LimitReader(f, secret.MaxCredentialFile))
		secret.AddCredentials(data)
		return nil
	})
}

func containsAny(s string, subs ...string) bool {
	return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
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
		if src, err = filepath.EvalSymlinks(src); err != nil {
			return err
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

// copyFile copies the regular file src to dst with mode perm|0o600
// (fsutil.CopyFile: never through a link); a file the user cannot read is
// skipped, as it is not needed.
func copyFile(src, dst string, perm fs.FileMode) error {
	err := fsutil.CopyFile(src, dst, perm|0o600)
	if pe, ok := errors.AsType[*fs.PathError](err); ok && pe.Path == src && errors.Is(err, fs.ErrPermission) {
		return nil
	}
	return err
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
		if h := net.JoinHostPort(u.Hostname(), port); port != "" && hostrule.Check(h) == nil && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}
