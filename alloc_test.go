package hds_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHotPathAllocations holds the hot paths to the budget: the
// single-record GET and the list of 100 allocate at most twice what a
// bare handler does that only checks the JWT and writes the same payload
// (allocation counts are exact, so this cannot flake). Both sides include
// the same httptest request and recorder.
func TestHotPathAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts in -short mode are not needed")
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
			if err := json.Unmarshal(f.do(http.MethodGet, c.path, "").Body.Bytes(), &env); err != nil {
				t.Fatal(err)
			}
			base := baselineHandler(typedPayload(t, env.Data))
			serve := func(h http.Handler) func() {
				return func() {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, f.request(http.MethodGet, c.path, ""))
					if w.Code != http.StatusOK {
						t.Fatalf("status %d", w.Code)
					}
				}
			}
			hds := testing.AllocsPerRun(200, serve(f.h))
			bare := testing.AllocsPerRun(200, serve(base))
			t.Logf("%s: hds %.0f allocs, bare handler %.0f (%.2fx)", c.name, hds, bare, hds/bare)
			if hds > 2*bare {
				t.Errorf("%s allocates %.0f times per request, over twice the bare handler's %.0f", c.name, hds, bare)
			}
		})
	}
}
