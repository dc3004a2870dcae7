package proc

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The profile drops every GIT_* variable and SSH_ASKPASS of the caller,
// and sets its own.
func TestGitEnvironDropsCallersGitVariables(t *testing.T) {
	for _, kv := range []string{"GIT_DIR=/elsewhere", "GIT_WORK_TREE=/elsewhere", "GIT_CONFIG_GLOBAL=/hostile",
		"GIT_CONFIG_PARAMETERS='core.hooksPath'='/x'", "GIT_ASKPASS=/bin/askpass", "SSH_ASKPASS=/bin/askpass", "LC_ALL=de_DE.UTF-8"} {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	env := GitEnviron("GIT_INDEX_FILE=/tmp/index")
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "SSH_ASKPASS=") || strings.HasPrefix(kv, "LC_ALL=") {
			if !slices.Contains([]string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "GIT_CONFIG_NOSYSTEM=1", "GIT_INDEX_FILE=/tmp/index", "LC_ALL=C"}, kv) {
				t.Errorf("GitEnviron holds %q; want only the profile's own and the caller's extra", kv)
			}
		}
	}
	for _, want := range []string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "LC_ALL=C", "GIT_INDEX_FILE=/tmp/index"} {
		if !slices.Contains(env, want) {
			t.Errorf("GitEnviron lacks %q", want)
		}
	}
}

// A remote that asks for credentials makes git fail, saying so, without
// running the askpass programs the caller's environment or the user's
// configuration (core.askPass) names.
func TestRunGitNeverPrompts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	dir := t.TempDir()
	marker := filepath.Join(dir, "asked")
	askpass := filepath.Join(dir, "askpass")
	if err := os.WriteFile(askpass, []byte("#!/bin/sh\necho asked >> "+marker+"\necho secret\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitconfig"), []byte("[core]\n\taskPass = "+askpass+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_ASKPASS", askpass)
	t.Setenv("SSH_ASKPASS", askpass)
	t.Setenv("HOME", dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := RunGit(ctx, Git{Dir: dir}, "ls-remote", srv.URL+"/repo.git")
	ge, ok := errors.AsType[*GitError](err)
	if !ok {
		t.Fatalf("RunGit = %v; want a *GitError", err)
	}
	if !strings.Contains(ge.Stderr, "terminal prompts disabled") {
		t.Errorf("git's error = %q; want it to say it could not prompt", ge.Stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the caller's askpass program was run")
	}
}

// Cancelling the context kills git's whole process group, a process git
// started included, and RunGit returns the context's error.
func TestRunGitKillsProcessGroupOnCancel(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := RunGit(ctx, Git{Dir: dir}, "-c", "alias.hang=!sleep 300 & echo $! > "+pidFile+"; wait", "hang")
		done <- err
	}()
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the alias did not start its sleep")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("RunGit = %v; want context.Canceled", err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("git's child %d outlived the cancel", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Output over the cap is cut: RunGit returns what it kept and a
// *GitOutputError saying how much git wrote.
func TestRunGitCapsOutput(t *testing.T) {
	out, err := RunGit(context.Background(), Git{MaxOutput: 4}, "version")
	oe, ok := errors.AsType[*GitOutputError](err)
	if !ok || !errors.Is(err, ErrGitOutput) {
		t.Fatalf("RunGit = %v; want a *GitOutputError", err)
	}
	if string(out) != "git " || oe.Limit != 4 || oe.Total <= 4 {
		t.Errorf("got %q, limit %d, total %d; want \"git \", 4 and more than 4", out, oe.Limit, oe.Total)
	}
}

// A failed run names the command, with any password in a URL redacted,
// and carries git's exit code.
func TestGitErrorRedactsAndExits(t *testing.T) {
	_, err := RunGit(context.Background(), Git{Dir: t.TempDir()}, "ls-remote", "--no-such-flag", "https://user:hunter2@127.0.0.1:1/r.git")
	ge, ok := errors.AsType[*GitError](err)
	if !ok {
		t.Fatalf("RunGit = %v; want a *GitError", err)
	}
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "git ls-remote --no-such-flag https://user:xxxxx@") {
		t.Errorf("error = %q; want the command with the password redacted", err)
	}
	if ge.ExitCode() != 129 {
		t.Errorf("exit code = %d; want 129", ge.ExitCode())
	}
}
