package observe

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRouteAndMethod(t *testing.T) {
	routes := map[string]string{
		"":                                   Unmatched,
		"GET /health":                        "/health",
		"GET /console/":                      "/console/",
		"PUT /api/v1/projects/{project}":     "/api/v1/projects/{project}",
		"DELETE /api/v1/users/{username}":    "/api/v1/users/{username}",
		"GET /api/v1/projects/{project}/x/y": "/api/v1/projects/{project}/x/y",
	}
	for pattern, want := range routes {
		assert.Equal(t, want, Route(pattern), "Route(%q)", pattern)
	}
	methods := map[string]string{"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "DELETE": "DELETE",
		"OPTIONS": "OPTIONS", "PATCH": "PATCH", "get": MethodOther, "BREW": MethodOther, "CONNECT": MethodOther, "TRACE": MethodOther}
	for m, want := range methods {
		assert.Equal(t, want, Method(m), "Method(%q)", m)
	}
}

// TestNilObserver: without hooks New returns nil, and a nil Observer
// takes every fact without doing anything.
func TestNilObserver(t *testing.T) {
	o := New(Hooks{}, nil)
	assert.Nil(t, o, "no hook: nil")
	assert.False(t, o.WantsRequests())
	assert.False(t, o.WantsPending())
	o.RequestStarted("GET")
	o.RequestFinished("GET", "/health", 200, time.Millisecond)
	o.StoreError(StoreOther)
	o.EventStreamOpened()
	o.EventStreamClosed()
	o.WebhookDelivery(DeliveryRetried)
	o.WebhookPending(3)
	o.RateLimitShared(true)
	o.LoginFailed()
	o.Backup(BackupFailed)
}

// TestOrder: the facts reach the hooks in the order they were told,
// and a hook that is not set costs nothing and is not called.
func TestOrder(t *testing.T) {
	var mu sync.Mutex
	var got []string
	add := func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }
	o := New(Hooks{
		RequestStarted:  func(m string) { add("start " + m) },
		WebhookPending:  func(n int) { add("pending") },
		RateLimitShared: func(s bool) { add(map[bool]string{true: "shared", false: "local"}[s]) },
		Backup:          func(outcome string) { add("backup " + outcome) },
	}, nil)
	assert.True(t, o.WantsRequests(), "RequestStarted set: requests wanted")
	assert.True(t, o.WantsPending())
	o.RequestStarted("GET")
	o.LoginFailed() // no hook
	o.RateLimitShared(false)
	o.RateLimitShared(true)
	o.WebhookPending(1)
	o.Backup(BackupSucceeded)
	want := []string{"start GET", "local", "shared", "pending", "backup succeeded"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, got)
}

// TestEventHoldsNoPointer: the queue is never scanned by the collector
// only while an event holds no pointer; and it stays 16 bytes.
func TestEventHoldsNoPointer(t *testing.T) {
	typ := reflect.TypeFor[event]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch f.Type.Kind() {
		case reflect.Int64, reflect.Uint16, reflect.Uint8:
		default:
			t.Errorf("event.%s is a %s", f.Name, f.Type)
		}
	}
	assert.Equal(t, uintptr(16), typ.Size())
}

func TestTextTable(t *testing.T) {
	tt := newTextTable(3, "", "GET")
	i, ok := tt.index("GET")
	require.True(t, ok)
	assert.Equal(t, uint16(1), i)
	route := strings.Clone("/api/v1/projects")
	j, ok := tt.index(route)
	require.True(t, ok)
	assert.Equal(t, uint16(2), j)
	again, ok := tt.index("/api/v1/projects")
	require.True(t, ok)
	assert.Equal(t, j, again, "a text is interned once")
	assert.Equal(t, "/api/v1/projects", tt.at(j))
	assert.Equal(t, "", tt.at(0))
	_, ok = tt.index("/api/v1/health")
	assert.False(t, ok, "a full table takes no new text")
	_, ok = tt.index("GET")
	assert.True(t, ok, "a full table still finds its texts")
}

// TestFactsCarryTexts: a fact's method and route come back as they were
// put, for routes the table did not hold before.
func TestFactsCarryTexts(t *testing.T) {
	got := make(chan string, 4)
	o := New(Hooks{
		RequestFinished: func(method, route string, status int, d time.Duration) {
			got <- fmt.Sprintf("%s %s %d %s", method, route, status, d)
		},
		StoreError: func(kind string) { got <- "store " + kind },
	}, nil)
	o.RequestFinished("PATCH", "/api/v1/test-facts-carry-texts/{x}", 418, 3*time.Millisecond)
	o.StoreError(StoreTimeout)
	for _, want := range []string{"PATCH /api/v1/test-facts-carry-texts/{x} 418 3ms", "store timeout"} {
		select {
		case s := <-got:
			assert.Equal(t, want, s)
		case <-time.After(10 * time.Second):
			t.Fatalf("not told %q", want)
		}
	}
}
