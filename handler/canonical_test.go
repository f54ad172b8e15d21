package handler

import "testing"

// TestCanonical holds canonical's one pass over the bytes to its rule:
// no empty segment (a trailing '/' included) and no segment that is, or
// percent-decodes to, "." or ".."; a segment that cannot be decoded is
// refused too. Dots and escapes inside a name are allowed.
func TestCanonical(t *testing.T) {
	for path, want := range map[string]bool{
		"/":                          false,
		"":                           false,
		"api/v1/projects":            false,
		"/api/v1/projects":           true,
		"/api/v1/projects/":          false,
		"//api":                      false,
		"/api//v1":                   false,
		"/api/./v1":                  false,
		"/api/..":                    false,
		"/api/%2e":                   false,
		"/api/%2E%2e":                false,
		"/api/.%2e/x":                false,
		"/api/%zz":                   false,
		"/api/%":                     false,
		"/api/a.b":                   true,
		"/api/...":                   true,
		"/api/.hidden":               true,
		"/api/%2e%2e%2e":             true,
		"/api/a%2Fb":                 true,
		"/api/a%20b/c":               true,
		"/health":                    true,
		"/api/v1/projects/p/records": true,
	} {
		if got := canonical(path); got != want {
			t.Errorf("canonical(%q) = %v, want %v", path, got, want)
		}
	}
}
