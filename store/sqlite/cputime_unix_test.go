//go:build unix

package sqlite_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used, 0
// where it is not known: the cost of a call on a loaded machine, where
// its wall time is not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writtenIO is what the process has handed to write calls so far: the
// bytes and the calls (Linux's /proc/self/io: wchar, syscw), or zeros
// where that is not known. SQLite writes a WAL frame (a page and its
// header) with two calls, so it tells how many pages a write dirties.
func writtenIO() (bytes, calls int64) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "wchar":
			bytes = n
		case "syscw":
			calls = n
		}
	}
	return bytes, calls
}
