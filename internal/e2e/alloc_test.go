package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHotPathAllocations holds the hot paths to the budget: the
// single-record GET and the list of 100 allocate at most twice what a
// bare handler does that only checks the JWT and writes the same payload
// (allocation counts are exact, and the test runs in a process of its
// own, so this cannot flake). Both sides include the same httptest
// request and recorder.
func TestHotPathAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts in -short mode are not needed")
	}
	if raceEnabled {
		t.Skip("allocation counts are hds's only without -race: the race detector adds its own")
	}
	if !alone(t) {
		return // counts the process's allocations: run in one of its own
	}
	f := newBenchFixtureT(t)
	for _, c := range []struct {
		name, path string
	}{
		{"GetRecord", "/api/v1/projects/p/collections/c/clusters/k/records/rec-042"},
		{"List100", "/api/v1/projects/p/collections/c/clusters/k/records"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var env struct {
				Data json.RawMessage `json:"data"`
			}
			require.NoError(t, json.Unmarshal(f.do(http.MethodGet, c.path, "").Body.Bytes(), &env))
			base := baselineHandler(typedPayload(t, env.Data))
			// Failed requests are counted, not asserted, inside the runs:
			// an assertion would allocate and be measured.
			failed := 0
			serve := func(h http.Handler) func() {
				return func() {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, f.request(http.MethodGet, c.path, ""))
					if w.Code != http.StatusOK {
						failed++
					}
				}
			}
			hds := testing.AllocsPerRun(200, serve(f.h))
			bare := testing.AllocsPerRun(200, serve(base))
			require.Zero(t, failed, "requests not answered 200")
			t.Logf("%s: hds %.0f allocs, bare handler %.0f (%.2fx)", c.name, hds, bare, hds/bare)
			assert.LessOrEqual(t, hds, 2*bare, "%s allocates %.0f times per request, over twice the bare handler's %.0f", c.name, hds, bare)
		})
	}
}
