package verifier

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// sandboxfs.go decides what of the host's filesystem a sandbox shows: an
// allowlist, not the whole of / read-only. Visible, read-only: the system
// directories (systemDirs), the toolchains a command finds on PATH, the
// user's Go module cache at its own path and the layered build cache's lower
// half. Writable: the workspace (its .git read-only), a private /tmp and an
// empty $HOME at the user's home path, the task's cache directory and, for an
// agent CLI, its private home. Masked wherever they would otherwise show:
// the secrets of /etc (secretPaths) and the credential stores under $HOME
// (CredentialPaths), plus whatever a task names in "sandbox": {"hide"}.

// systemDirs are shown read-only when they exist; a symbolic link among them
// (/bin -> usr/bin on merged-/usr systems) is recreated as a link.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys", "/nix/store"}

// secretPaths are masked (an empty file or directory in their place) even
// though their directory is shown: as root the command runs as the files'
// owner, so their modes do not protect them.
var secretPaths = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
	"/etc/security/opasswd", "/etc/ssl/private", "/etc/pki/tls/private", "/etc/krb5.keytab",
	"/etc/NetworkManager/system-connections", "/etc/wireguard", "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
	"/etc/docker/key.json", "/etc/postgresql-common/pg_service.conf",
	"/sys/kernel/debug", "/sys/kernel/tracing", "/sys/kernel/security", "/sys/firmware",
}

// CredentialPaths are the credential stores under $HOME that no sandbox ever
// shows, even when a task makes a directory holding one visible ("sandbox":
// {"read": [...]}): statgraph's documented deny list, extended per task by
// "sandbox": {"hide": [...]}. The sandbox's $HOME is empty anyway; the list
// matters where a toolchain directory or a read path holds one (cargo's
// registry token under ~/.cargo).
var CredentialPaths = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub", ".docker",
	".kube", ".netrc", ".git-credentials", ".config/git/credentials", ".pgpass", ".my.cnf",
	".npmrc", ".yarnrc", ".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml",
	".terraform.d/credentials.tfrc.json", ".vault-token", ".password-store", ".local/share/keyrings",
	".config/rclone", ".s3cfg", ".boto", ".claude", ".claude.json", ".codex", ".gemini", ".qwen",
	".config/opencode", ".local/share/opencode", ".aider.conf.yml", ".env", ".bash_history", ".zsh_history",
	".python_history", ".psql_history", ".mysql_history", ".lesshst", ".viminfo",
}

// toolchainRoots are directories under $HOME that language toolchains and
// version managers install into; they are shown read-only when present, so
// `cargo`, `pyenv` shims or a Go toolchain under ~/sdk work in a check.
var toolchainRoots = []string{".cargo", ".rustup", ".pyenv", ".nvm", ".volta", ".sdkman", ".asdf", ".bun", ".deno", "sdk", ".local/bin", "go/bin"}

// mount is one bwrap operation on path: a bind of src (path itself when
// empty), a tmpfs (of at most size bytes when size > 0; writable under
// Landlock when home), or a symbolic link to src.
type mount struct {
	op, src, path string
	size          int64
	home          bool
}

// args returns m as bwrap arguments.
func (m mount) args() []string {
	switch m.op {
	case "--tmpfs", "--dir":
		if m.size > 0 {
			return []string{"--size", strconv.FormatInt(m.size, 10), m.op, m.path}
		}
		return []string{m.op, m.path}
	case "--symlink":
		return []string{m.op, m.src, m.path}
	}
	src := m.src
	if src == "" {
		src = m.path
	}
	return []string{m.op, src, m.path}
}

// hostFS builds the mounts of the allowlisted filesystem for a command
// whose PATH is path: system directories, the user's empty home (a tmpfs of
// at most homeBytes) and the toolchains in it. Writable and hidden parts are
// added by the caller.
func hostFS(path string, homeBytes int64) []mount {
	var ms []mount
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				ms = append(ms, mount{op: "--symlink", src: target, path: d})
			}
		case fi.IsDir():
			ms = append(ms, mount{op: "--ro-bind", path: d})
		}
	}
	home, _ := os.UserHomeDir()
	if home != "" && home != "/" {
		ms = append(ms, mount{op: "--tmpfs", path: home, size: homeBytes, home: true})
		for _, r := range toolchainRoots {
			ms = appendVisible(ms, filepath.Join(home, r))
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) || visibleAlready(ms, dir) {
			continue
		}
		// npm's node_modules/.bin holds links into node_modules.
		if filepath.Base(dir) == ".bin" && filepath.Base(filepath.Dir(dir)) == "node_modules" {
			dir = filepath.Dir(dir)
		}
		ms = appendVisible(ms, dir)
	}
	return ms
}

// appendVisible adds a read-only bind of p when it exists.
func appendVisible(ms []mount, p string) []mount {
	if _, err := os.Stat(p); err != nil {
		return ms
	}
	return append(ms, mount{op: "--ro-bind", path: p})
}

// visibleAlready reports whether p lies inside a directory ms binds.
func visibleAlready(ms []mount, p string) bool {
	for _, m := range ms {
		if m.op != "--tmpfs" && m.op != "--symlink" && within(p, m.path) {
			return true
		}
	}
	return false
}

// masks returns the mounts that blank each secret path (secretPaths, the
// credential stores under $HOME and extra) lying inside something ms makes
// visible: an empty read-only file over a file, an empty tmpfs over a
// directory. Paths that do not exist need nothing.
func masks(ms []mount, extra []string) []mount {
	home, _ := os.UserHomeDir()
	paths := slices.Clone(secretPaths)
	if home != "" {
		for _, c := range CredentialPaths {
			paths = append(paths, filepath.Join(home, c))
		}
	}
	for _, e := range extra {
		if p, err := filepath.Abs(e); err == nil {
			paths = append(paths, p)
		}
	}
	var out []mount
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || !visibleAlready(ms, p) {
			continue
		}
		if fi.IsDir() {
			out = append(out, mount{op: "--tmpfs", path: p})
		} else {
			out = append(out, mount{op: "--ro-bind", src: "/dev/null", path: p})
		}
	}
	return out
}

// sortMounts orders ms outermost path first (stable), so that each path
// nested in another keeps its own mode: the workspace's .git inside the
// workspace, a mask inside /etc, a toolchain inside the empty $HOME.
func sortMounts(ms []mount) {
	slices.SortStableFunc(ms, func(a, b mount) int {
		return strings.Count(a.path, string(filepath.Separator)) - strings.Count(b.path, string(filepath.Separator))
	})
}

// landlockPaths returns the paths of ms, as the sandbox shows them, that
// its Landlock layer lets the command read (the read-only binds) and
// change (the writable binds and the tmpfs of the empty home). Masks
// and hidden paths get no rule of their own: they lie in what is read.
func landlockPaths(ms []mount) (read, write []string) {
	for _, m := range ms {
		switch {
		case m.op == "--ro-bind" && m.src != "/dev/null":
			read = append(read, m.path)
		case m.op == "--bind", m.home:
			write = append(write, m.path)
		}
	}
	return read, write
}
