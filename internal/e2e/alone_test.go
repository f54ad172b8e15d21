package e2e_test

import (
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
// binary again with only t (with -short when the suite has it, before the
// suite's deadline) in the same environment, logs what that process
// printed, fails t when it failed, skips t when it skipped, and returns
// false: the caller returns at once. In the process of its own it returns
// true, and the caller runs the test.
func alone(t *testing.T) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
		return true
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatalf("alone runs top-level tests only, not %s", t.Name())
	}
	args := []string{"-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).Round(time.Second).String())
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
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
