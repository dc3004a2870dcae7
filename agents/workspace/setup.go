package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"

	"github.com/statgraph/statgraph/internal/copypath"
	"github.com/statgraph/statgraph/internal/secret"
)

// setupMarker, inside a workspace's .git, records that Options.CopyFiles
// and Options.Setup were done there.
const setupMarker = "statgraph-setup-done"

// setup copies o.CopyFiles into a workspace and runs o.Setup there, once:
// a workspace that has the marker is left alone, and one that lacks it (new,
// or its setup failed or was killed) gets both again.
func (w *Workspace) setup(ctx context.Context, o Options) error {
	if len(o.CopyFiles) == 0 && o.Setup == nil {
		return nil
	}
	// Every time, also for a workspace set up by an earlier process: the
	// scrubber must know the values before the agent or a check prints one.
	w.registerCopyFiles(o.CopyFiles)
	marker := filepath.Join(w.dir, git.GitDirName, setupMarker)
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	if err := w.copyFiles(o.CopyFiles); err != nil {
		return err
	}
	if o.Setup != nil {
		if err := o.Setup(ctx, w.dir); err != nil {
			return fmt.Errorf("workspace: setup of task %s in %s: %w", w.taskID, w.dir, err)
		}
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	return nil
}

// registerCopyFiles adds the values of the named files of the source that
// look like secrets (see secret.AddCredentials) to the scrubber's set, so
// they are replaced in command output, feedback, the run store, prompts and
// committed files (a commit that held one says so). Files that cannot be
// read are skipped: copyFiles reports them.
func (w *Workspace) registerCopyFiles(paths []string) {
	if len(paths) == 0 {
		return
	}
	src, err := os.OpenRoot(w.source)
	if err != nil {
		return
	}
	defer src.Close()
	for _, p := range paths {
		if copypath.Check(p) != nil {
			continue
		}
		f, err := src.Open(filepath.FromSlash(p))
		if err != nil {
			continue
		}
		data, _ := io.ReadAll(io.LimitReader(f, secret.MaxCredentialFile))
		f.Close()
		secret.AddCredentials(data)
	}
}

// copyFiles copies the named files of the source into the working tree and
// lists them in .git/info/exclude, so no commit records them (they are
// typically secrets such as .env). Paths are opened through os.Root, so a
// path or a symbolic link leading out of either tree is refused, and
// nothing is written through a symbolic link inside the workspace either
// (see checkNoLink).
func (w *Workspace) copyFiles(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	src, err := os.OpenRoot(w.source)
	if err != nil {
		return fmt.Errorf("workspace: copy_files: %w", err)
	}
	defer src.Close()
	dst, err := os.OpenRoot(w.dir)
	if err != nil {
		return fmt.Errorf("workspace: copy_files: %w", err)
	}
	defer dst.Close()
	var exclude strings.Builder
	for _, p := range paths {
		if err := copypath.Check(p); err != nil {
			return fmt.Errorf("workspace: copy_files: %w", err)
		}
		if err := copyOne(src, dst, filepath.FromSlash(p)); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("workspace: copy_files: %s does not exist in %s; create it there or remove it from copy_files", p, w.source)
			}
			return fmt.Errorf("workspace: copy_files: %s: %w", p, err)
		}
		exclude.WriteString("/" + escapeIgnore(filepath.ToSlash(p)) + "\n")
	}
	info := filepath.Join(w.dir, git.GitDirName, "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(info, "exclude"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if _, err := f.WriteString("# copy_files: copied from " + w.source + ", never committed\n" + exclude.String()); err != nil {
		f.Close()
		return fmt.Errorf("workspace: %w", err)
	}
	return f.Close()
}

func copyOne(src, dst *os.Root, p string) error {
	in, err := src.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file; copy_files copies files, not directories")
	}
	if err := checkNoLink(dst, p); err != nil {
		return err
	}
	if dir := filepath.Dir(p); dir != "." {
		if err := dst.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	out, err := dst.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// checkNoLink returns an error when p, or a directory on the way to it,
// is a symbolic link in the workspace root: a committed link (a
// dependency's ".env -> ../src/main.go") would make the copy overwrite
// the file it points to, which is then committed. The workspace is
// statgraph's own while it is set up (no agent or check runs yet), so
// nothing can plant a link between this check and the write.
func checkNoLink(root *os.Root, p string) error {
	parts := strings.Split(p, string(filepath.Separator))
	for i := range parts {
		sub := filepath.Join(parts[:i+1]...)
		fi, err := root.Lstat(sub)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := root.Readlink(sub)
			return fmt.Errorf("%s in the workspace is a symbolic link (to %s) from the branch it starts from; copy_files never writes through a link: "+
				"remove the link from the repository or its dependencies' branches, or drop this path from copy_files", filepath.ToSlash(sub), target)
		}
	}
	return nil
}

// escapeIgnore escapes the characters gitignore patterns treat specially.
func escapeIgnore(p string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`).Replace(p)
}

// Remove closes the workspace and deletes its directory, returning the
// bytes freed. Call it once the branch is published (Finish): commits not
// published are lost. It is safe to call concurrently with the other
// methods, which then return ErrClosed.
func (w *Workspace) Remove() (int64, error) {
	w.Close()
	return removeDir(w.dir)
}

// RemoveDir deletes the workspace of task id under root (as Options.Root
// and Options.TaskID name it) and returns the bytes freed; a workspace that
// does not exist frees 0 bytes and is no error. It must not run while a
// Workspace of that task is in use.
func RemoveDir(root, id string) (int64, error) {
	if err := validateTaskID(id); err != nil {
		return 0, err
	}
	return removeDir(filepath.Join(root, id))
}

func removeDir(dir string) (int64, error) {
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if fi, err := d.Info(); err == nil {
			size += fi.Size()
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("workspace: remove %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return 0, fmt.Errorf("workspace: remove %s: %w", dir, err)
	}
	return size, nil
}
