package e2e_test

import (
	"flag"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// aloneEnv names the one test a process of the test binary runs (alone).
const aloneEnv = "HDS_E2E_ALONE"

// alone runs the top-level test t in a process of its own, for tests that
// measure the process (its heap, what it allocated): in the process that
// runs the whole suite, what earlier tests left behind (servers, pools,
// goroutines, and the heap they hold, which the collector marks on every
// cycle) moves those figures. In the suite's process, alone runs the test
// binary again with only t (the suite's -run below t, -skip and -short
// passed on; a deadline some seconds before the suite's) in the same
// environment, logs what that process printed, fails t when it failed,
// skips t when it skipped, and returns false: the caller returns at once.
// In the process of its own it returns true, and the caller runs the test.
func alone(t *testing.T) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
		return true
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatalf("alone runs top-level tests only, not %s", t.Name())
	}
	run := "^" + regexp.QuoteMeta(t.Name()) + "$"
	// The suite's filter below the test (-run 'TestX/memory') applies
	// to its subtests there; one with alternatives (|) is left out
	// rather than taken apart, and the test runs whole. -skip as it is.
	if f := flag.Lookup("test.run"); f != nil && !strings.Contains(f.Value.String(), "|") {
		if _, sub, ok := strings.Cut(f.Value.String(), "/"); ok {
			run += "/" + sub
		}
	}
	args := []string{"-test.run=" + run, "-test.count=1", "-test.v"}
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" {
		args = append(args, "-test.skip="+f.Value.String())
	}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if d, ok := t.Deadline(); ok {
		// A margin before the suite's deadline, so that a test that
		// hangs is stopped in its own process first, whose goroutine
		// dump (in the output logged below) says where.
		left := time.Until(d)
		left -= max(left/10, 5*time.Second)
		if left < time.Second {
			t.Fatalf("too little time left before the suite's deadline to run %s in a process of its own", t.Name())
		}
		args = append(args, "-test.timeout="+left.Truncate(time.Second).String())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("alone: %v", err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), aloneEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("%s in a process of its own:\n%s", t.Name(), out)
	switch {
	case err != nil:
		t.Fatalf("%s failed in a process of its own: %v", t.Name(), err)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()+" "):
		t.Skip("skipped in a process of its own")
	case !strings.Contains(string(out), "--- PASS: "+t.Name()+" "):
		t.Fatalf("%s did not run in a process of its own", t.Name())
	}
	return false
}
