package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The process side of run (docs/api.md#programs-that-follow-their-configuration-run--watch-and--cache):
// starting CMD, passing signals on and reporting its exit status.

// exitError ends the program with code, after printing err when it is
// not nil (main does both).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return "exit status " + strconv.Itoa(e.code)
}

func (e *exitError) Unwrap() error { return e.err }

// child is one start of CMD, in a process group of its own
// (docs/api.md#programs-that-follow-their-configuration-run--watch-and--cache):
// every signal run sends goes to the whole group, so that the programs
// CMD starts (sh -c '...; prog') get it too, and none of them is left
// running when CMD is restarted or run exits.
type child struct {
	cmd  *exec.Cmd
	pgid int           // CMD's process group: its pid
	done chan struct{} // closed when CMD has exited
	err  error         // once done is closed: nil or an *exitError with its status
}

// defaultGrace is how long the processes CMD leaves in its group get to
// end after a signal, before they are killed, when -grace does not say.
const defaultGrace = 10 * time.Second

// startChild starts command with vars added to the process's environment
// (a variable of the cluster wins over one of the same name). An error is
// an exitError: 127 when the command cannot be found, 126 when it cannot
// be started.
func startChild(e *env, command []string, vars []string) (*child, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), vars...) // for duplicate names, exec uses the last
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A stream that is not a file is copied through a pipe, which the
	// processes CMD left in its group hold open: Wait stops waiting for
	// them a second after CMD exits, so that run can end them (endGroup).
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return nil, &exitError{code: code, err: fmt.Errorf("run: %w", err)}
	}
	c := &child{cmd: cmd, pgid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		c.err = exitStatus(cmd.Wait())
		close(c.done)
	}()
	return c, nil
}

// signal sends s to CMD's process group: CMD and every process of the
// group it started.
func (c *child) signal(s os.Signal) {
	if sig, ok := s.(syscall.Signal); ok {
		_ = syscall.Kill(-c.pgid, sig)
	}
}

// endGroup makes sure that no process CMD started outlives it, once CMD
// has exited: the processes left in its group get sig (none when sig is
// 0: they got a signal already) and until deadline to end, then SIGKILL.
// It returns when the group is gone (or a second after the SIGKILL,
// should the kernel be slow to end it).
func (c *child) endGroup(sig syscall.Signal, deadline time.Time) {
	if !groupAlive(c.pgid) {
		return
	}
	if sig != 0 {
		_ = syscall.Kill(-c.pgid, sig)
	}
	if waitGroupGone(c.pgid, deadline) {
		return
	}
	_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
	waitGroupGone(c.pgid, time.Now().Add(time.Second))
}

// waitGroupGone waits until no process of the group pgid is alive or
// deadline has passed, and reports whether the group is gone.
func waitGroupGone(pgid int, deadline time.Time) bool {
	for wait := time.Millisecond; groupAlive(pgid); wait = min(2*wait, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
	return true
}

// groupAlive reports whether a process of the group pgid is alive. A
// zombie is not: its parent (init, for the orphans of CMD) has yet to
// reap it, and an init that never reaps (as in many containers) would
// keep it forever. Where /proc cannot tell, kill(2) does.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// PID (COMM) STATE PPID PGRP ...; COMM may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// exitStatus turns what exec.Cmd.Wait returned into run's result: nil
// for success, else an exitError with CMD's exit code, or 128+N when
// signal N ended it (as shells report it).
func exitStatus(err error) error {
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay): // CMD succeeded; its output streams were closed
		return nil
	case errors.As(err, &ee):
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return &exitError{code: code}
	}
	// Copying the command's output failed (our stdout went away).
	return &exitError{code: 1, err: fmt.Errorf("run: %w", err)}
}

// notifySignals catches the signals run handles while CMD runs: SIGINT
// and SIGTERM, which it passes on to CMD as they are, and SIGQUIT and
// SIGHUP, which a terminal sends to run's process group (no longer to
// CMD's, which is its own), which must not end run before CMD, and which
// run passes on as the terminal would have sent them. stop undoes it.
func notifySignals() (signals chan os.Signal, stop func()) {
	signals = make(chan os.Signal, 8)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP)
	return signals, func() { signal.Stop(signals) }
}

// passedOn reports whether run passes s on to CMD to end it
// (docs/api.md#programs-that-follow-their-configuration-run--watch-and--cache):
// after one, run -watch restarts nothing.
func passedOn(s os.Signal) bool { return s == os.Interrupt || s == syscall.SIGTERM }

// runCommand starts command with vars added to the process's
// environment, waits for it and returns nil when it succeeds, or an
// exitError with its status (startChild, exitStatus). While it runs,
// SIGINT and SIGTERM are passed on to it, and SIGQUIT and SIGHUP do not
// end this process.
func runCommand(e *env, command []string, vars []string) error {
	signals, stop := notifySignals()
	defer stop()
	c, err := startChild(e, command, vars)
	if err != nil {
		return err
	}
	var stopSignal syscall.Signal = syscall.SIGTERM // for what CMD leaves in its group
	deadline := time.Time{}
	for {
		select {
		case s := <-signals:
			c.signal(s)
			if passedOn(s) && deadline.IsZero() {
				stopSignal, deadline = 0, time.Now().Add(defaultGrace)
			}
		case <-c.done:
			if deadline.IsZero() {
				deadline = time.Now().Add(defaultGrace)
			}
			c.endGroup(stopSignal, deadline)
			return c.err
		}
	}
}

// restartSignals are the signals -signal accepts, by name.
var restartSignals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP,
	"QUIT": syscall.SIGQUIT, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
}
