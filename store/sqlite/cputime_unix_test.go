//go:build unix

package sqlite_test

import (
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
