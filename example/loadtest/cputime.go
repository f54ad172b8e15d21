package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on
// every Linux the kernel's ABI allows.
const clockTicks = 100

// cpuTicks returns the CPU time process pid has used (user and system,
// all its threads) in clock ticks, from /proc/PID/stat.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// the fields are counted after its closing one.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var total int64
	for _, field := range f[11:13] { // utime and stime, fields 14 and 15
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		total += n
	}
	return total, nil
}

// cpuMeter measures the CPU time a server process spends on the requests
// of one measurement window: zero pid measures nothing.
type cpuMeter struct {
	pid   int
	start int64
}

// begin starts a window.
func (m *cpuMeter) begin() error {
	if m.pid == 0 {
		return nil
	}
	var err error
	m.start, err = cpuTicks(m.pid)
	return err
}

// perRequest ends the window and returns the server's CPU time per
// request, in microseconds, for n requests answered in it.
func (m *cpuMeter) perRequest(n int) (float64, error) {
	if m.pid == 0 || n == 0 {
		return 0, nil
	}
	end, err := cpuTicks(m.pid)
	if err != nil {
		return 0, err
	}
	return float64(end-m.start) * 1e6 / clockTicks / float64(n), nil
}
