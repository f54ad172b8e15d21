package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"time"

	"github.com/hds-go/hds"
)

// What comes first when a request has several things wrong with it:
// routing, then authentication, then ownership, then the request itself.

func TestBodyLimitComesAfterRoutingAndAuthentication(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithMaxBodyBytes(100))
		alice := c.token("alice")
		big := `{"name":"` + strings.Repeat("b", 189) + `"}`
		tests := []struct {
			name, method, path, token string
			status                    int
			code                      string
		}{
			{"unknown route", "POST", "/api/v1/nope", alice, http.StatusNotFound, "RESOURCE_NOT_FOUND"},
			{"wrong method", "PATCH", "/api/v1/projects", alice, http.StatusMethodNotAllowed, "INVALID_REQUEST"},
			{"no token", "POST", "/api/v1/projects", "", http.StatusUnauthorized, "AUTHENTICATION_FAILED"},
			{"authenticated", "POST", "/api/v1/projects", alice, http.StatusRequestEntityTooLarge, "INVALID_REQUEST"},
		}
		for _, tt := range tests {
			status, _, env := c.do(tt.method, tt.path, big, tt.token)
			wantError(t, tt.name+" with an oversized body", status, env, tt.status, tt.code, "")
		}
	})
}

func TestForbiddenComesBeforeBadInput(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "q1", "x", "k")
		tests := []struct {
			name, method, path, contentType, body string
		}{
			{"bad collection name", "POST", "/api/v1/projects/q1/collections", "application/json", `{"name":"bad/"}`},
			{"bad list parameter", "GET", "/api/v1/projects/q1/collections?limit=0", "", ""},
			{"bad rename", "PUT", "/api/v1/projects/q1?rename=a%2Fb", "", ""},
			{"non-JSON body", "POST", "/api/v1/projects/q1/collections", "text/plain", `name=x`},
			{"bad reveal", "GET", "/api/v1/projects/q1/collections/x/clusters/k?reveal=maybe", "", ""},
			{"unknown type", "POST", "/api/v1/projects/q1/collections/x/clusters/k/records/r?type=FOO", "", ""},
			{"bad record value", "POST", "/api/v1/projects/q1/collections/x/clusters/k/records", "application/json", `{"name":"r","type":"INTEGER","value":1.5}`},
			{"bad record filter", "GET", "/api/v1/projects/q1/collections/x/clusters/k/records?sortBy=password", "", ""},
			{"nothing to update", "PUT", "/api/v1/projects/q1/collections/x/clusters/k/records/r", "", ""},
		}
		for _, tt := range tests {
			r := request(tt.method, tt.path, tt.body, bob)
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			} else {
				r.Header.Del("Content-Type")
			}
			status, _, env := c.send(r)
			wantError(t, "bob: "+tt.name+" under alice's project", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
			// The owner gets the error of the request itself.
			r = request(tt.method, tt.path, tt.body, alice)
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			status, _, _ = c.send(r)
			assert.Contains(t, []int{http.StatusBadRequest, http.StatusUnsupportedMediaType}, status, "alice: %s: status, want 400 or 415", tt.name)
		}
	})
}

func TestPreflightWithoutAllowedOrigin(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind) // no CORS origins
		for _, tt := range []struct {
			path   string
			status int
		}{{"/api/v1/projects", http.StatusMethodNotAllowed}, {"/api/v1/nope", http.StatusNotFound}} {
			r := request("OPTIONS", tt.path, "", "")
			r.Header.Set("Origin", "https://app.example.com")
			r.Header.Set("Access-Control-Request-Method", "GET")
			res := c.raw(r)
			assert.Equal(t, tt.status, res.StatusCode, "preflight to %s with no allowed origin: status", tt.path)
			for name := range res.Header {
				assert.False(t, strings.HasPrefix(name, "Access-Control-"), "preflight to %s with no allowed origin carries %s", tt.path, name)
			}
		}
	})
}

func TestConcurrentCorrectLoginsAreNotThrottled(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithLoginThrottle(3, 3, 15*time.Minute))
		var wg sync.WaitGroup
		statuses := make([]int, 15)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := httptest.NewRecorder()
				c.h.ServeHTTP(rec, request("POST", "/api/v1/auth/login", `{"username":"alice","password":"alice-password"}`, ""))
				statuses[i] = rec.Code
			}()
		}
		wg.Wait()
		for i, s := range statuses {
			assert.Equal(t, http.StatusOK, s, "correct login %d: status", i)
		}
	})
}

func TestMalformedUTF8Bodies(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		for name, body := range map[string]string{
			"raw invalid byte":     "{\"name\":\"bad\xff\"}",
			"lone surrogate":       `{"name":"bad\ud800"}`,
			"lone low surrogate":   `{"name":"\udc00"}`,
			"high without its low": `{"name":"\ud83dA"}`,
		} {
			status, _, env := c.do("POST", "/api/v1/projects", body, alice)
			wantError(t, name, status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
		}
		c.mustDo("POST", "/api/v1/projects", `{"name":"smile \ud83d\ude00"}`, alice, http.StatusCreated)
	})
}
