package client

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// jwtLike returns a token shaped as a JWT with claims iat and exp (its
// signature is not checked by the client).
func jwtLike(iat, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc([]byte(fmt.Sprintf(`{"sub":"u","iat":%d,"exp":%d}`, iat.Unix(), exp.Unix()))) + ".c2ln"
}

// tokenServer answers refreshes with status (and a new token on 200)
// and GET K with the Authorization header it got as the value of v.
type tokenServer struct {
	srv       *httptest.Server
	refreshes atomic.Int32
	fresh     string
	mu        sync.Mutex
	sent      []string // the Authorization of each GET K
}

func newTokenServer(t *testing.T, status int) *tokenServer {
	ts := &tokenServer{fresh: jwtLike(time.Now(), time.Now().Add(time.Hour))}
	ts.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/auth/refresh" {
			ts.refreshes.Add(1)
			time.Sleep(20 * time.Millisecond) // concurrent requests meet it in flight
			w.WriteHeader(status)
			if status == http.StatusOK {
				fmt.Fprintf(w, `{"success":true,"data":{"token":%q,"expires_in":3600,"user_id":"u"},"message":"Token refreshed"}`, ts.fresh)
			} else {
				fmt.Fprint(w, `{"success":false,"error":{"code":"AUTHENTICATION_FAILED","message":"Invalid or expired token","details":""}}`)
			}
			return
		}
		ts.mu.Lock()
		ts.sent = append(ts.sent, r.Header.Get("Authorization"))
		ts.mu.Unlock()
		fmt.Fprint(w, `{"success":true,"data":{"name":"k","data":{},"types":{}},"message":"OK"}`)
	}))
	t.Cleanup(ts.srv.Close)
	return ts
}

// A token due for a refresh is refreshed once, whatever the number of
// requests waiting for it, and they all send the new one; an API token
// is never refreshed.
func TestTokenRefreshedOnce(t *testing.T) {
	ts := newTokenServer(t, http.StatusOK)
	due := jwtLike(time.Now().Add(-time.Hour), time.Now().Add(time.Minute)) // 1 min left of 61: due
	c, err := New(ts.srv.URL, WithToken(due))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if _, err := c.Cluster(t.Context(), "p", "c", "k"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := ts.refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	for _, a := range ts.sent {
		if a != "Bearer "+ts.fresh {
			t.Errorf("a request sent %q, not the new token", a)
		}
	}

	api, err := New(ts.srv.URL, WithToken("hds_0123456789012345678901234567890123456789"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.Cluster(t.Context(), "p", "c", "k"); err != nil {
		t.Fatal(err)
	}
	notDue, err := New(ts.srv.URL, WithToken(jwtLike(time.Now(), time.Now().Add(time.Hour))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := notDue.Cluster(t.Context(), "p", "c", "k"); err != nil {
		t.Fatal(err)
	}
	if n := ts.refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes after an API token and a fresh user token, want still 1", n)
	}
}

// A refresh the server refuses leaves the token as it was and is not
// tried again for it.
func TestTokenRefreshRefused(t *testing.T) {
	ts := newTokenServer(t, http.StatusUnauthorized)
	due := jwtLike(time.Now().Add(-time.Hour), time.Now().Add(time.Minute))
	c, err := New(ts.srv.URL, WithToken(due))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := c.Cluster(t.Context(), "p", "c", "k"); err != nil {
			t.Fatal(err)
		}
	}
	if n := ts.refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	for _, a := range ts.sent {
		if a != "Bearer "+due {
			t.Errorf("a request sent %q, not the token as it was", a)
		}
	}
	if _, ok := c.nextRefresh(); ok {
		t.Error("a refused token is still due for a refresh")
	}
}
