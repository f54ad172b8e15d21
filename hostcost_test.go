package hds_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHostPaysOnlyForItsStore: a host's go.sum holds the modules of the
// packages it imports and of their tests, so the tests of the packages a
// host imports must not reach a store it does not use. A host of hds and
// store/memory pays for no SQL driver and no metrics library; a host of
// store/sqlite for no PostgreSQL driver (docs/design.md, what a host pays).
func TestHostPaysOnlyForItsStore(t *testing.T) {
	const module = "github.com/hds-go/hds"
	cases := []struct {
		packages  []string
		forbidden []string
	}{
		{[]string{module, module + "/store", module + "/store/memory", module + "/handler", module + "/auth", module + "/middleware"},
			[]string{"modernc.org/sqlite", "github.com/lib/pq", "github.com/jmoiron/sqlx", "github.com/prometheus/", module + "/store/sqlite", module + "/store/postgres"}},
		{[]string{module + "/store/sqlite"},
			[]string{"github.com/lib/pq", "github.com/jmoiron/sqlx", "github.com/prometheus/", module + "/store/postgres", module + "/internal/pgtest"}},
	}
	for _, c := range cases {
		args := append([]string{"list", "-test", "-deps", "-f", "{{.ImportPath}}"}, c.packages...)
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for line := range strings.Lines(string(out)) {
			path := strings.TrimSpace(line)
			for _, f := range c.forbidden {
				if path == f || strings.HasPrefix(path, f+"/") || (strings.HasSuffix(f, "/") && strings.HasPrefix(path, f)) {
					t.Errorf("%v, with their tests, import %s", c.packages, path)
				}
			}
		}
	}
}
