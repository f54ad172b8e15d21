package e2e_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// slowReceiver answers no request: each is held until the sender gives
// up. It counts the requests held at once, and the most ever held.
type slowReceiver struct {
	*httptest.Server
	held, most, total atomic.Int64
}

func newSlowReceiver(tb testing.TB) *slowReceiver {
	sr := &slowReceiver{}
	sr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body read to its end, the server watches the connection:
		// the request's context ends when the sender hangs up.
		_, _ = io.Copy(io.Discard, r.Body)
		sr.total.Add(1)
		n := sr.held.Add(1)
		for {
			m := sr.most.Load()
			if n <= m || sr.most.CompareAndSwap(m, n) {
				break
			}
		}
		<-r.Context().Done()
		sr.held.Add(-1)
	}))
	tb.Cleanup(sr.Close)
	return sr
}

// TestWebhooksBoundedResources: many webhooks whose receiver never
// answers hold about the dispatcher's workers (16) requests at once,
// and once the server stops, none: no goroutine or connection outlives
// the attempts.
func TestWebhooksBoundedResources(t *testing.T) {
	sr := newSlowReceiver(t)
	before := runtime.NumGoroutine()
	ctx, stop := context.WithCancel(context.Background())
	c := newServer(t, memoryKind, hds.WithCredentialKey(testKey), hds.WithQuotas(store.Quotas{MaxWebhooksPerProject: store.Unlimited}),
		hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true,
			Timeout: 300 * time.Millisecond, MaxAttempts: 1}), hds.WithShutdown(ctx))
	alice := c.token("alice")
	c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	const hooks = 100
	var ids []string
	for range hooks {
		ids = append(ids, c.createHook(alice, "web", `{"url":"`+sr.URL+`","actions":["collection.create"]}`).ID)
	}
	c.mustDo("POST", pathC("web", "prod"), "", alice, http.StatusCreated)
	// Every delivery fails (no answer within the timeout, one attempt).
	for _, id := range ids {
		c.waitDeliveries(t, alice, "web", id, func(ds []deliveryJSON) bool { return len(ds) == 1 && ds[0].Status == "failed" })
	}
	assert.Equal(t, int64(hooks), sr.total.Load(), "one attempt per webhook")
	// The dispatcher has at most 16 attempts in flight; the receiver
	// notices a hang-up a moment after it, so it may briefly count a few
	// more. Without the bound it would hold all 100.
	assert.LessOrEqual(t, sr.most.Load(), int64(2*16), "requests held at once: bounded by the workers, whatever the number of webhooks")
	t.Logf("the receiver held at most %d requests at once (%d webhooks, 16 workers)", sr.most.Load(), hooks)
	stop()
	deadline := time.Now().Add(hookWait)
	for sr.held.Load() > 0 || runtime.NumGoroutine() > before+10 {
		if time.Now().After(deadline) {
			t.Fatalf("after the attempts: %d requests still held, %d goroutines (%d before)", sr.held.Load(), runtime.NumGoroutine(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkWebhooksSlowReceiver measures what 1,000 webhooks whose
// receiver never answers cost the server: the latency of GET R (in
// process, no network) and the heap, idle and with every webhook's
// delivery pending and the dispatcher busy timing them out. Reported:
// p50 and p99 of GET R in µs, the heap in use after a GC in MiB, the
// goroutines, and the requests the receiver holds at once.
//
//	go -C internal/e2e test -run '^$' -bench WebhooksSlowReceiver -benchtime 20000x
func BenchmarkWebhooksSlowReceiver(b *testing.B) {
	for _, busy := range []bool{false, true} {
		name := "idle"
		if busy {
			name = "1000-webhooks-slow-receiver"
		}
		b.Run(name, func(b *testing.B) {
			sr := newSlowReceiver(b)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			c := newServer(b, memoryKind, hds.WithCredentialKey(testKey), hds.WithQuotas(store.Quotas{MaxWebhooksPerProject: store.Unlimited}),
				hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true,
					Timeout: 2 * time.Second}), hds.WithShutdown(ctx))
			alice := c.token("alice")
			c.tree(alice, "web", "prod", "db")
			c.addRecord(alice, pathK("web", "prod", "db"), "port", "INTEGER", "5432")
			if busy {
				// record.update only (each webhook.create is an event for
				// every webhook before it). Created through the store: the
				// suite's client validates
				// every exchange against the OpenAPI document, whose
				// validator's memory would be counted as the server's.
				ws := c.store.(store.Webhooks)
				p := store.Path{Caller: store.Caller{UserID: c.ids["alice"]}, Project: "web", Need: store.RightAdmin}
				for i := range 1000 {
					if _, err := ws.CreateWebhook(context.Background(), p, &store.Webhook{URL: sr.URL + "/" + strconv.Itoa(i),
						Actions: []store.Action{store.ActionRecordUpdate}, Secret: []byte("0123456789abcdef")}); err != nil {
						b.Fatal(err)
					}
				}
				for i := range 10 { // 10,000 deliveries pending
					c.mustDo("PUT", pathR("web", "prod", "db", "port"), `{"value":`+strconv.Itoa(i)+`}`, alice, http.StatusOK)
				}
				for sr.held.Load() < 16 { // the dispatcher is busy
					time.Sleep(10 * time.Millisecond)
				}
			}
			get := request("GET", pathR("web", "prod", "db", "port"), "", alice)
			times := make([]time.Duration, 0, b.N)
			var mu sync.Mutex
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				rec := httptest.NewRecorder()
				c.h.ServeHTTP(rec, get.Clone(context.Background()))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET R: %d %s", rec.Code, rec.Body)
				}
				mu.Lock()
				times = append(times, time.Since(start))
				mu.Unlock()
			}
			b.StopTimer()
			slices.Sort(times)
			if len(times) > 0 {
				b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
			b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
			b.ReportMetric(float64(sr.held.Load()), "held-requests")
		})
	}
}
