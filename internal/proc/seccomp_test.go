package proc

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// filterVM loads SeccompFilter into x/net/bpf's interpreter. Its loads
// read big-endian words, so call packs seccomp_data for it word by word
// in the layout the filter expects of this (little-endian) machine.
func filterVM(t *testing.T) *bpf.VM {
	t.Helper()
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		_, err := SeccompFilter()
		require.ErrorContains(t, err, "not supported on "+runtime.GOARCH)
		t.Skip("no seccomp filter on " + runtime.GOARCH)
	}
	b, err := SeccompFilter()
	require.NoError(t, err)
	require.Zero(t, len(b)%8, "a sock_filter entry is 8 bytes")
	var raw []bpf.RawInstruction
	for i := 0; i < len(b); i += 8 {
		raw = append(raw, bpf.RawInstruction{Op: binary.NativeEndian.Uint16(b[i:]), Jt: b[i+2], Jf: b[i+3], K: binary.NativeEndian.Uint32(b[i+4:])})
	}
	prog, ok := bpf.Disassemble(raw)
	require.True(t, ok, "the filter disassembles")
	vm, err := bpf.NewVM(prog)
	require.NoError(t, err)
	return vm
}

// call returns the filter's verdict on system call nr of architecture
// arch with args.
func call(t *testing.T, vm *bpf.VM, arch uint32, nr int, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[0:], uint32(nr))
	binary.BigEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(data[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(data[16+8*i+4:], uint32(a>>32))
	}
	v, err := vm.Run(data)
	require.NoError(t, err)
	return uint32(v)
}

const (
	allow  = unix.SECCOMP_RET_ALLOW
	eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// TestSeccompFilterVerdicts checks the filter's verdict on calls that
// must pass and calls that must not, including the cases a careless
// filter gets wrong: clone whose flags equal another denied call's number
// (go-seccomp-bpf v1.6.0 compares the next syscall number with the last
// argument it loaded, which denied it), an ioctl request with high bits
// set, and a call through the 32-bit ABI.
func TestSeccompFilterVerdicts(t *testing.T) {
	vm := filterVM(t)
	native, err := auditArch()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		nr   int
		args []uint64
		want uint32
	}{
		{"read", unix.SYS_READ, nil, allow},
		{"mount", unix.SYS_MOUNT, nil, eperm},
		{"umount2", unix.SYS_UMOUNT2, nil, eperm},
		{"ptrace", unix.SYS_PTRACE, nil, eperm},
		{"process_vm_readv", unix.SYS_PROCESS_VM_READV, nil, eperm},
		{"keyctl", unix.SYS_KEYCTL, nil, eperm},
		{"unshare", unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWUSER}, eperm},
		{"setns", unix.SYS_SETNS, nil, eperm},
		{"bpf", unix.SYS_BPF, nil, eperm},
		{"clone3", unix.SYS_CLONE3, nil, enosys},
		{"clone fork", unix.SYS_CLONE, []uint64{uint64(unix.SIGCHLD)}, allow},
		{"clone thread", unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}, allow},
		{"clone flags equal to personality's number", unix.SYS_CLONE, []uint64{unix.SYS_PERSONALITY}, allow},
		{"clone flags equal to ioctl's number", unix.SYS_CLONE, []uint64{unix.SYS_IOCTL}, allow},
		{"clone new user namespace", unix.SYS_CLONE, []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, eperm},
		{"clone new mount namespace", unix.SYS_CLONE, []uint64{unix.CLONE_NEWNS}, eperm},
		{"personality default", unix.SYS_PERSONALITY, []uint64{0}, allow},
		{"personality query", unix.SYS_PERSONALITY, []uint64{0xffffffff}, allow},
		{"personality ADDR_NO_RANDOMIZE", unix.SYS_PERSONALITY, []uint64{0x0040000}, eperm},
		{"personality default with high bits", unix.SYS_PERSONALITY, []uint64{1 << 32}, eperm},
		{"ioctl TCGETS", unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, allow},
		{"ioctl TIOCSTI", unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, eperm},
		{"ioctl TIOCSTI with high bits", unix.SYS_IOCTL, []uint64{0, 1<<32 | unix.TIOCSTI}, eperm},
		{"ioctl TIOCLINUX", unix.SYS_IOCTL, []uint64{0, unix.TIOCLINUX}, eperm},
		{"ioctl TIOCSTI with one more bit", unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI | 1}, allow},
	} {
		assert.Equal(t, tc.want, call(t, vm, native, tc.nr, tc.args...), "%s: verdict", tc.name)
	}
	// Another ABI's numbers mean other calls; the filter refuses them all.
	other := map[string]uint32{"amd64": unix.AUDIT_ARCH_I386, "arm64": unix.AUDIT_ARCH_ARM}[runtime.GOARCH]
	assert.Equal(t, enosys, call(t, vm, other, 0), "a 32-bit ABI call")
	if runtime.GOARCH == "amd64" {
		assert.Equal(t, enosys, call(t, vm, native, 0x40000000|unix.SYS_MOUNT), "an x32 ABI call")
		assert.Equal(t, eperm, call(t, vm, native, unix.SYS_IOPL), "iopl")
	}
}
