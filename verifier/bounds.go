package verifier

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/statgraph/statgraph/internal/proc"
)

// privateTmp returns the bwrap options mounting the sandbox's private
// /tmp: a tmpfs of l's TmpBytes (its default when zero, unbounded when
// negative).
func privateTmp(l proc.Limits) []string {
	if size := l.Resolved().TmpBytes; size > 0 {
		return []string{"--size", strconv.FormatInt(size, 10), "--tmpfs", "/tmp"}
	}
	return []string{"--tmpfs", "/tmp"}
}

// seccompFile returns a file holding the sandbox's seccomp filter, read
// from its start, for bwrap's --seccomp. The caller closes it.
func seccompFile() (*os.File, error) {
	filter, err := proc.SeccompFilter()
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("statgraph-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("creating a memfd for the seccomp filter: %w", err)
	}
	f := os.NewFile(uintptr(fd), "statgraph-seccomp")
	if _, err := f.Write(filter); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the seccomp filter: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the seccomp filter: %w", err)
	}
	return f, nil
}

// confine waits for bwrap to report the first process of ns, which bwrap
// holds on its --block-fd until a byte arrives on block, puts it under l
// (proc.Confine) and then lets it run. It closes block in every case, so
// a bwrap left waiting sees end of file; the caller must kill bwrap when
// confine fails, since bwrap runs the command on end of file too.
// release removes the command's cgroups once its processes are gone.
func confine(ns *pidNamespace, l proc.Limits, block *os.File) (release func() error, err error) {
	defer block.Close()
	pid := ns.first(nsDrain)
	if pid == 0 {
		return nil, errors.New("bwrap started no sandbox (it exited, or did not name the sandbox's first process within 30 s)")
	}
	if release, err = proc.Confine(pid, l); err != nil {
		return nil, err
	}
	if _, err := block.Write([]byte{1}); err != nil {
		_ = release()
		return nil, fmt.Errorf("letting the sandbox start: %w", err)
	}
	return release, nil
}

// sandboxFiles returns the descriptors bwrap gets (in ExtraFiles order:
// infoFD, blockFD, seccompFD; the caller closes them once bwrap started)
// and the ends Run keeps: the info pipe's read end and the block pipe's
// write end.
func sandboxFiles() (bwrapFiles []*os.File, infoR, blockW *os.File, err error) {
	filter, err := seccompFile()
	if err != nil {
		return nil, nil, nil, err
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		filter.Close()
		return nil, nil, nil, fmt.Errorf("creating the sandbox info pipe: %w", err)
	}
	blockR, blockW, err := os.Pipe()
	if err != nil {
		filter.Close()
		infoR.Close()
		infoW.Close()
		return nil, nil, nil, fmt.Errorf("creating the sandbox block pipe: %w", err)
	}
	return []*os.File{infoW, blockR, filter}, infoR, blockW, nil
}
