//go:build !unix

package sqlite_test

import "time"

// cpuTime is 0 where the process's CPU time is not read.
func cpuTime() time.Duration { return 0 }

// writtenIO is zeros where the process's writes are not counted.
func writtenIO() (bytes, calls int64) { return 0, 0 }
