package hds

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVersionIn: the version reported is the one the build recorded for
// this module, as the main module or as a dependency (through a replace
// by another version), without its "v"; a build that records none
// reports Version.
func TestVersionIn(t *testing.T) {
	dep := func(path, version string, replace *debug.Module) *debug.Module {
		return &debug.Module{Path: path, Version: version, Replace: replace}
	}
	for _, tc := range []struct {
		what string
		info debug.BuildInfo
		want string
	}{
		{"a host requiring a release", debug.BuildInfo{Main: debug.Module{Path: "example.com/host", Version: "(devel)"},
			Deps: []*debug.Module{dep("github.com/other/x", "v2.0.0", nil), dep(modulePath, "v1.3.1", nil)}}, "1.3.1"},
		{"a host requiring a commit", debug.BuildInfo{Main: debug.Module{Path: "example.com/host"},
			Deps: []*debug.Module{dep(modulePath, "v1.3.1-0.20261128080000-0123456789ab", nil)}}, "1.3.1-0.20261128080000-0123456789ab"},
		{"installed at a release", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.4.0"}}, "1.4.0"},
		{"replaced by a fork's version", debug.BuildInfo{Main: debug.Module{Path: "example.com/host"},
			Deps: []*debug.Module{dep(modulePath, "v1.3.0", dep("example.com/fork", "v1.3.2", nil))}}, "1.3.2"},
		{"replaced by a directory", debug.BuildInfo{Main: debug.Module{Path: "example.com/host"},
			Deps: []*debug.Module{dep(modulePath, "v0.0.0-00010101000000-000000000000", dep("../..", "", nil))}}, Version},
		{"built in the repository", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, Version},
		{"not in the build", debug.BuildInfo{Main: debug.Module{Path: "example.com/host"}}, Version},
	} {
		assert.Equal(t, tc.want, versionIn(&tc.info), tc.what)
	}
	assert.NotEqual(t, "1.0.0", Version, "Version is the module's, not the first one's")
}

// TestServedVersion: /health and the OpenAPI document's info.version
// report the module's version (this test binary records "(devel)": Version).
func TestServedVersion(t *testing.T) {
	h := New()
	get := func(path string) map[string]any {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusOK, rec.Code, path)
		var body map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), path)
		return body
	}
	assert.Equal(t, moduleVersion(), get("/health")["version"])
	assert.Equal(t, moduleVersion(), get("/api/v1/openapi.json")["info"].(map[string]any)["version"])
	assert.Equal(t, Version, moduleVersion())
}
