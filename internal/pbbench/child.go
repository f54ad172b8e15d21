package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pinnedEnv marks the driver re-executed under taskset -c 1.
const pinnedEnv = "PBBENCH_DRIVER_PINNED"

// pinDriver decides the pinning. With pin, taskset found and 2 CPUs or
// more, it re-executes the driver under `taskset -c 1` (it does not
// return then); once re-executed, it returns the taskset path. Otherwise
// it returns "" and why the run is not pinned.
func pinDriver(pin bool, args []string) (taskset, why string, err error) {
	if !pin {
		return "", "-pin=false", nil
	}
	path, lerr := exec.LookPath("taskset")
	if lerr != nil {
		return "", "no taskset", nil
	}
	if os.Getenv(pinnedEnv) == "1" {
		return path, "", nil
	}
	if n := runtime.NumCPU(); n < 2 {
		return "", fmt.Sprintf("%d CPU", n), nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", "", err
	}
	argv := append([]string{"taskset", "-c", "1", exe}, args...)
	return "", "", syscall.Exec(path, argv, append(os.Environ(), pinnedEnv+"=1"))
}

// child is the servers' process, seen from the driver.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
	ready ready
}

// startChild starts the binary again as the servers' process (serve),
// under `taskset -c 0` when taskset is not "", and waits for its ready
// line. Its stderr is the driver's.
func startChild(taskset string, serveArgs []string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := append([]string{serveFlag}, serveArgs...)
	var cmd *exec.Cmd
	if taskset != "" {
		cmd = exec.Command(taskset, append([]string{"-c", "0", exe}, args...)...)
	} else {
		cmd = exec.Command(exe, args...)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	if err := c.next(&c.ready, "ready"); err != nil {
		c.stdin.Close()
		cmd.Wait() //nolint:errcheck // its error is the one returned
		return nil, err
	}
	return c, nil
}

// next reads the child's stdout up to its JSON line {"pbbench":kind,...}
// into v; other lines (PocketBase's, say) go to stderr.
func (c *child) next(v any, kind string) error {
	prefix := `{"pbbench":"` + kind + `"`
	for c.lines.Scan() {
		line := c.lines.Bytes()
		if !strings.HasPrefix(string(line), prefix) {
			fmt.Fprintf(os.Stderr, "servers: %s\n", line)
			continue
		}
		return json.Unmarshal(line, v)
	}
	if err := c.lines.Err(); err != nil {
		return err
	}
	return fmt.Errorf("the servers' process ended before its %q line", kind)
}

// send writes one command line to the child.
func (c *child) send(cmd string) error {
	_, err := fmt.Fprintln(c.stdin, cmd)
	return err
}

// stop closes the child's stdin, reads its done line and waits for it.
func (c *child) stop() (done, error) {
	var d done
	c.stdin.Close()
	err := c.next(&d, "done")
	if werr := c.cmd.Wait(); err == nil {
		err = werr
	}
	return d, err
}

// cpuTime is the CPU time, user and system, the child has used, read
// from /proc (clock ticks of 10 ms); 0 where /proc cannot be read.
func (c *child) cpuTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	// f[0] is field 3 (state): utime and stime are fields 14 and 15.
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// selfCPUTime is the CPU time, user and system, the driver has used.
func selfCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
