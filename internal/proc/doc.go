// Package proc holds the runner every git process statgraph starts goes
// through (RunGit, with one git profile: none of the caller's GIT_*
// variables, no prompts, the C locale, a process group of its own and a
// cap on its output), and the parts of the sandbox that statgraph runs
// code it did not write in (checks, setup_cmd, agent CLIs), beside
// verifier.Run, which starts every such process. Both runners start their
// processes the one way: in a process group of their own ended as a whole
// (Group), with output kept head and tail within a cap (CapBuffer), and
// an environment scrubbed by one rule each (InheritedEnv for what runs
// code statgraph did not write, GitEnviron for git).
//
//   - Limits and Confine: the bounds of one sandboxed command (processes,
//     memory, /tmp, file size, open files), enforced through a cgroup (v2
//     delegated, or v1 pids and memory controllers) where one can be made,
//     and rlimits otherwise;
//   - the seccomp filter bwrap loads for the command;
//   - Init, what statgraph's sandbox-init does inside the sandbox before
//     the command runs: Landlock, a second filesystem layer beside bwrap's
//     mounts, and the bridge below;
//   - the allowlisting HTTP(S) proxy a sandbox reaches the network through,
//     and the bridge that carries it into the sandbox's own network
//     namespace.
//
// Of the module it imports only internal/fsutil, internal/hostrule and
// internal/secret.
package proc
