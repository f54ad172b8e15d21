package middleware

import "net/http"

// The canonical forms of the headers this package sets on every
// request. http.Header.Set and Get canonicalize their key on each call,
// and a key such as "X-RateLimit-Limit" is not canonical, so each call
// allocated a new string; indexing the map with the canonical key once
// found here does the same without the allocation.
var (
	canonicalRequestID = http.CanonicalHeaderKey(RequestIDHeader)
	canonicalLimit     = http.CanonicalHeaderKey(HeaderLimit)
	canonicalRemaining = http.CanonicalHeaderKey(HeaderRemaining)
	canonicalReset     = http.CanonicalHeaderKey(HeaderReset)
)

// firstHeader is h.Get(key) for a key already in canonical form.
func firstHeader(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// setRateHeaders sets the three X-RateLimit headers as h.Set would, with
// one allocation for their three values instead of three.
func setRateHeaders(h http.Header, limit, remaining, reset string) {
	v := []string{limit, remaining, reset}
	h[canonicalLimit] = v[0:1:1]
	h[canonicalRemaining] = v[1:2:2]
	h[canonicalReset] = v[2:3:3]
}
