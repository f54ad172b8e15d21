package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
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

// child is one start of CMD.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when CMD has exited
	err  error         // once done is closed: nil or an *exitError with its status
}

// startChild starts command with vars added to the process's environment
// (a variable of the cluster wins over one of the same name). An error is
// an exitError: 127 when the command cannot be found, 126 when it cannot
// be started.
func startChild(e *env, command []string, vars []string) (*child, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), vars...) // for duplicate names, exec uses the last
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	if err := cmd.Start(); err != nil {
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return nil, &exitError{code: code, err: fmt.Errorf("run: %w", err)}
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = exitStatus(cmd.Wait())
		close(c.done)
	}()
	return c, nil
}

// signal sends s to CMD unless it has exited.
func (c *child) signal(s os.Signal) {
	select {
	case <-c.done:
	default:
		_ = c.cmd.Process.Signal(s)
	}
}

// exitStatus turns what exec.Cmd.Wait returned into run's result: nil
// for success, else an exitError with CMD's exit code, or 128+N when
// signal N ended it (as shells report it).
func exitStatus(err error) error {
	var ee *exec.ExitError
	switch {
	case err == nil:
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
// SIGHUP, which a terminal sends to the whole process group (CMD
// included) and which must not end run before CMD. stop undoes it.
func notifySignals() (signals chan os.Signal, stop func()) {
	signals = make(chan os.Signal, 8)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP)
	return signals, func() { signal.Stop(signals) }
}

// passedOn reports whether run passes s on to CMD
// (docs/api.md#programs-that-follow-their-configuration-run--watch-and--cache).
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
	for {
		select {
		case s := <-signals:
			if passedOn(s) {
				c.signal(s)
			}
		case <-c.done:
			return c.err
		}
	}
}

// restartSignals are the signals -signal accepts, by name.
var restartSignals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP,
	"QUIT": syscall.SIGQUIT, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
}
