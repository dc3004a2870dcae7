package proc

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM in a sandbox: changing mounts, reading or
// writing other processes' memory, kernel modules and kexec, BPF and perf
// (the kernel's largest attack surfaces), the kernel keyring, joining or
// making namespaces (a nested user namespace hands back every capability),
// the clocks, swap, reboot, accounting, quotas, file handles (which open a
// file by inode, around the mount namespace), userfaultfd (a kernel
// exploitation aid), the kernel log, I/O ports and two obsolete calls.
var deniedSyscalls = []string{
	"mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"ptrace", "process_vm_readv", "process_vm_writev",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open",
	"keyctl", "add_key", "request_key",
	"setns", "unshare",
	"clock_settime", "clock_adjtime", "adjtimex", "settimeofday",
	"swapon", "swapoff", "reboot", "acct", "quotactl",
	"open_by_handle_at", "name_to_handle_at",
	"userfaultfd", "syslog",
	"lookup_dcookie", "uselib",
}

// x86Only are denied where the architecture has them (amd64).
var x86Only = []string{"iopl", "ioperm"}

// namespaceFlags are clone's flags that make new namespaces. CLONE_NEWTIME
// is left out: clone cannot take it (its bit is part of the exit signal).
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// SeccompFilter returns the seccomp filter a sandboxed command runs under,
// as the raw BPF program bwrap's --seccomp takes (struct sock_filter
// entries in native byte order). Every system call is allowed except:
//
//   - those listed in deniedSyscalls, and clone with a namespace flag,
//     which fail with EPERM;
//   - clone3, which fails with ENOSYS so that libc falls back to clone,
//     whose flags a filter can read (clone3 passes them in memory): what
//     Docker and Chrome do;
//   - personality with any persona but the default (0) or the query
//     0xffffffff, since a persona can turn off address randomisation;
//   - ioctl TIOCSTI and TIOCLINUX, which push keystrokes into a terminal,
//     matched on the low 32 bits of the request as the kernel reads it;
//   - any call through another ABI (32-bit x86 on amd64, 32-bit arm on
//     arm64), which fails with ENOSYS: the deny list names the native
//     numbers only.
//
// The program is built with Elastic's go-seccomp-bpf (as Beats do) rather
// than written by hand; it is built once. Architectures other than amd64
// and arm64 get an error saying seccomp is not supported there.
func SeccompFilter() ([]byte, error) { return seccompFilter() }

var seccompFilter = sync.OnceValues(func() ([]byte, error) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return nil, fmt.Errorf("statgraph's seccomp filter is not supported on %s (only amd64 and arm64); run statgraph on one of those", runtime.GOARCH)
	}
	denied := deniedSyscalls
	if runtime.GOARCH == "amd64" {
		denied = append(denied[:len(denied):len(denied)], x86Only...)
	}
	eperm := seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	enosys := seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	// go-seccomp-bpf v1.6.0 compares the next syscall number with the
	// register its argument checks last loaded (clone(135) was taken for
	// personality), so each syscall with conditions gets a program of its
	// own, and the programs run one after another: each starts by loading
	// the syscall number again, and falls through to the next instead of
	// allowing the call.
	groups := []seccomp.SyscallGroup{
		{Action: enosys, Names: []string{"clone3"}},
		{Action: eperm, Names: denied},
	}
	conditional := []seccomp.NameWithConditions{
		{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: namespaceFlags}}},
		{Name: "personality", Conditions: seccomp.ArgumentConditions{
			{Argument: 0, Operation: seccomp.NotEqual, Value: 0},
			{Argument: 0, Operation: seccomp.NotEqual, Value: 0xffffffff},
		}},
		{Name: "ioctl", Conditions: low32Equal(1, unix.TIOCSTI)},
		{Name: "ioctl", Conditions: low32Equal(1, unix.TIOCLINUX)},
	}
	policies := []seccomp.Policy{{DefaultAction: seccomp.ActionAllow, Syscalls: groups}}
	for i, c := range conditional {
		if i > 0 && conditional[i-1].Name == c.Name {
			g := &policies[len(policies)-1].Syscalls[0]
			g.NamesWithCondtions = append(g.NamesWithCondtions, c)
			continue
		}
		policies = append(policies, seccomp.Policy{DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{{Action: eperm, NamesWithCondtions: []seccomp.NameWithConditions{c}}}})
	}
	var prog []bpf.Instruction
	for i, p := range policies {
		part, err := p.Assemble()
		if err != nil {
			return nil, fmt.Errorf("building the seccomp filter: %w", err)
		}
		if i < len(policies)-1 {
			// Its last instruction is the default (allow), where every jump
			// that matched nothing lands: without it they land on the next
			// program's first instruction.
			if last, ok := part[len(part)-1].(bpf.RetConstant); !ok || last.Val != uint32(seccomp.ActionAllow) {
				return nil, fmt.Errorf("building the seccomp filter: program %d ends in %v, not in allow", i, part[len(part)-1])
			}
			part = part[:len(part)-1]
		}
		prog = append(prog, part...)
	}
	// The assembled program sends calls of another ABI to its default
	// action (allow); refuse them before it runs.
	native, err := auditArch()
	if err != nil {
		return nil, err
	}
	prog = append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: native, SkipTrue: 1},
		bpf.RetConstant{Val: uint32(enosys)},
	}, prog...)
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("building the seccomp filter: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, in := range raw {
		out = binary.NativeEndian.AppendUint16(out, in.Op)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out, nil
})

// auditArch is the AUDIT_ARCH value of this program's architecture.
func auditArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("statgraph's seccomp filter is not supported on %s", runtime.GOARCH)
}

// low32Equal matches argument arg whose low 32 bits equal v, whatever its
// high bits (an ioctl request is an unsigned int: the kernel ignores them,
// so a plain 64-bit comparison could be dodged): no bit outside v is set,
// and each bit of v is.
func low32Equal(arg uint32, v uint32) seccomp.ArgumentConditions {
	conds := seccomp.ArgumentConditions{{Argument: arg, Operation: seccomp.BitsNotSet, Value: uint64(^v)}}
	for bit := uint32(1); bit != 0; bit <<= 1 {
		if v&bit != 0 {
			conds = append(conds, seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: uint64(bit)})
		}
	}
	return conds
}
