package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// processAlive reports whether pid runs: not gone, and not a zombie
// waiting for a parent that may never reap it (an init that does not).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// grandchildCommand is CMD as sh -c '...; prog' runs it: sh starts a
// program in the background, logging to LOG.orphan, in mode (stubborn:
// it ignores every signal but SIGKILL, and SIGUSR2, which ends it with
// status 3; die: a signal ends it), then the program of log in the
// foreground, which -signal ends. Before process groups, a restart
// signalled sh alone and left both programs running.
func grandchildCommand(t *testing.T, log childLog, mode string) (cmd []string, orphans childLog) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	orphans = childLog{t: t, path: log.path + ".orphan"}
	t.Cleanup(orphans.killChildren)
	return []string{"sh", "-c", `"$0" hds-test-child "$1.orphan" "$2" & "$0" hds-test-child "$1" die`, exe, log.path, mode}, orphans
}

// TestRunWatchProcessGroup: run -watch sends -signal to CMD's whole
// process group on a restart and kills what is left of it after -grace,
// so no program of the old environment survives the restart; and when
// CMD exits, what it left in its group is ended too, so none survives
// run (docs/api.md#programs-that-follow-their-configuration-run--watch-and--cache).
func TestRunWatchProcessGroup(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	log := childLog{t: t, path: filepath.Join(t.TempDir(), "log")}
	command, orphans := grandchildCommand(t, log, "stubborn")
	// -grace long enough for the programs to log the signal before the
	// kill, on a loaded machine too.
	r := startRun(t, log, append([]string{"run", "-watch", "-url", base, "-cluster", "p/c/k", "-grace", "3s",
		"-debounce", "0s", "--"}, command...), map[string]string{"HDS_TOKEN": token})
	first, firstOrphan := log.waitStarts(1), orphans.waitStarts(1)

	setRecord(t, base, token, "k", "APP_A", "2", http.StatusOK)
	second, secondOrphan := log.waitStarts(2), orphans.waitStarts(2)
	assert.Equal(t, "2", second.vars["APP_A"])
	assert.Equal(t, "2", secondOrphan.vars["APP_A"])
	assert.True(t, log.has(fmt.Sprintf("signal %d TERM", first.pid)), "the program in the foreground got -signal")
	assert.True(t, orphans.has(fmt.Sprintf("signal %d TERM", firstOrphan.pid)), "the program in the background got -signal")
	assert.False(t, processAlive(first.pid), "the program of the old environment in the foreground survived the restart")
	assert.False(t, processAlive(firstOrphan.pid), "the program of the old environment in the background survived the restart")

	// CMD ends on its own (sh with the status of its foreground program):
	// run ends what it left, and exits with CMD's status.
	require.NoError(t, syscall.Kill(second.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))
	assert.True(t, orphans.has(fmt.Sprintf("signal %d TERM", secondOrphan.pid)), "what CMD left got SIGTERM first")
	assert.False(t, processAlive(secondOrphan.pid), "a program CMD started survived run")
	assert.Len(t, orphans.starts(), 2)
}

// TestRunProcessGroup: without -watch too, what CMD leaves in its
// process group when it exits is ended before run exits, and a signal
// passed on reaches the whole group.
func TestRunProcessGroup(t *testing.T) {
	t.Parallel()
	base, token := watchServer(t)
	watchFixture(t, base, token)
	log := childLog{t: t, path: filepath.Join(t.TempDir(), "log")}
	command, orphans := grandchildCommand(t, log, "die")
	r := startRun(t, log, append([]string{"run", "-url", base, "-cluster", "p/c/k", "--"}, command...),
		map[string]string{"HDS_TOKEN": token})
	child, orphan := log.waitStarts(1), orphans.waitStarts(1)
	require.NoError(t, syscall.Kill(child.pid, syscall.SIGUSR2))
	assert.Equal(t, 3, r.wait(t))
	assert.True(t, orphans.has(fmt.Sprintf("signal %d TERM", orphan.pid)), "what CMD left got SIGTERM first")
	assert.False(t, processAlive(orphan.pid), "a program CMD started survived run")
}
