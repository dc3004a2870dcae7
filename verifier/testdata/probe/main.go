// Command probe tries one thing a sandboxed check should not be able to do
// (or is bounded in) and prints "<what>: ok" or "<what>: <error>"; the
// verifier's sandbox tests run it inside and outside the sandbox.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe mount|umount|ptrace PID|vmread PID|keyctl|spawn N|alloc MiB|write PATH MiB")
		os.Exit(2)
	}
	arg := func(i int) string {
		if len(os.Args) <= i {
			fmt.Fprintf(os.Stderr, "probe %s: missing argument %d\n", os.Args[1], i)
			os.Exit(2)
		}
		return os.Args[i]
	}
	num := func(i int) int {
		n, err := strconv.Atoi(arg(i))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		return n
	}
	var err error
	switch what := os.Args[1]; what {
	case "mount": // make the read-only root writable again
		err = syscall.Mount("", "/", "", syscall.MS_REMOUNT|syscall.MS_BIND, "")
	case "umount": // take away the sandbox's own /proc
		err = syscall.Unmount("/proc", syscall.MNT_DETACH)
	case "ptrace":
		pid := num(2)
		if err = syscall.PtraceAttach(pid); err == nil {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WALL, nil)
			_ = syscall.PtraceDetach(pid)
		}
	case "vmread":
		err = vmread(num(2))
	case "keyctl": // the session keyring, made if missing
		_, err = unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, true)
	case "spawn": // start up to N sleeping processes, count them, end them
		var started []*exec.Cmd
		for range num(2) {
			c := exec.Command("sleep", "30")
			if err := c.Start(); err != nil {
				break
			}
			started = append(started, c)
		}
		for _, c := range started {
			c.Process.Kill()
			c.Wait()
		}
		fmt.Printf("spawned %d\n", len(started))
	case "alloc": // touch MiB of memory
		mem := make([][]byte, num(2))
		for i := range mem {
			mem[i] = make([]byte, 1<<20)
			for j := 0; j < len(mem[i]); j += 4096 {
				mem[i][j] = 1
			}
		}
		fmt.Printf("allocated %d MiB\n", len(mem))
	case "write": // write MiB to PATH, seeing EFBIG rather than dying of SIGXFSZ
		signal.Ignore(syscall.SIGXFSZ)
		err = write(arg(2), num(3))
	default:
		fmt.Fprintf(os.Stderr, "probe: unknown %q\n", what)
		os.Exit(2)
	}
	if err != nil {
		fmt.Printf("%s: %v\n", os.Args[1], err)
	} else {
		fmt.Printf("%s: ok\n", os.Args[1])
	}
}

// vmread reads 16 bytes of process pid's first mapping.
func vmread(pid int) error {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return fmt.Errorf("no mappings")
	}
	start, err := strconv.ParseUint(strings.Split(sc.Text(), "-")[0], 16, 64)
	if err != nil {
		return err
	}
	buf := make([]byte, 16)
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	_, err = unix.ProcessVMReadv(pid, local, []unix.RemoteIovec{{Base: uintptr(start), Len: len(buf)}}, 0)
	return err
}

// write writes mib MiB of zeros to path.
func write(path string, mib int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	chunk := make([]byte, 1<<20)
	for range mib {
		if _, err := f.Write(chunk); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
