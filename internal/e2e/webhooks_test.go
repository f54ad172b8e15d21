package e2e_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// The webhooks of docs/api.md#webhooks, black-box: the routes and
// their errors, and what a receiver gets.

// hookWait bounds every wait for a delivery: a failure, never a measure.
const hookWait = 20 * time.Second

type webhookJSON struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	Actions    []string `json:"actions"`
	Collection *string  `json:"collection"`
	Cluster    *string  `json:"cluster"`
	CreatedAt  string   `json:"created_at"`
	Secret     string   `json:"secret"`
}

type deliveryJSON struct {
	ID             string  `json:"id"`
	Revision       *int64  `json:"revision"`
	Action         string  `json:"action"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	LastStatusCode *int    `json:"last_status_code"`
	LastError      *string `json:"last_error"`
	NextAttemptAt  *string `json:"next_attempt_at"`
	CreatedAt      string  `json:"created_at"`
}

// hookRequest is one request a receiver got.
type hookRequest struct {
	path   string
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is an HTTP server that records the webhook requests it gets
// and answers each as answer says (200 when nil).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []hookRequest
	arrive chan hookRequest
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{arrive: make(chan hookRequest, 1000), answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := hookRequest{path: r.URL.Path, header: r.Header.Clone(), body: body, at: time.Now()}
		rc.mu.Lock()
		rc.got = append(rc.got, req)
		n := len(rc.got)
		rc.mu.Unlock()
		rc.arrive <- req
		if rc.answer != nil {
			rc.answer(n, w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

// next waits for the next request.
func (rc *receiver) next(t *testing.T, what string) hookRequest {
	t.Helper()
	select {
	case r := <-rc.arrive:
		return r
	case <-time.After(hookWait):
		t.Fatalf("%s: no webhook request within %s", what, hookWait)
		return hookRequest{}
	}
}

// count is how many requests the receiver has had.
func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

// hookServer is newServer with webhooks on, private addresses allowed
// (the receivers are on loopback), and its dispatcher stopped with the
// test.
func hookServer(t *testing.T, kind storeKind, w hds.Webhooks, opts ...hds.Option) *client {
	t.Helper()
	w.Enabled, w.AllowPrivateAddresses = true, true
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return newServer(t, kind, append([]hds.Option{hds.WithWebhooks(w), hds.WithShutdown(ctx), hds.WithCredentialKey(testKey)}, opts...)...)
}

// createHook creates a webhook of project p with body and returns it.
func (c *client) createHook(token, p, body string) webhookJSON {
	c.t.Helper()
	env := c.mustDo("POST", pathP(p)+"/webhooks", body, token, http.StatusCreated)
	var out webhookJSON
	env.decode(c.t, &out)
	return out
}

// deliveries lists a webhook's deliveries, newest first.
func (c *client) deliveries(token, p, id string) []deliveryJSON {
	c.t.Helper()
	env := c.mustDo("GET", pathP(p)+"/webhooks/"+id+"/deliveries", "", token, http.StatusOK)
	var page struct {
		Items []deliveryJSON `json:"items"`
		Total int            `json:"total"`
	}
	env.decode(c.t, &page)
	assert.Len(c.t, page.Items, page.Total, "one page holds them all")
	return page.Items
}

// waitDeliveries waits until the webhook's deliveries satisfy done.
func (c *client) waitDeliveries(t *testing.T, token, p, id string, done func([]deliveryJSON) bool) []deliveryJSON {
	t.Helper()
	deadline := time.Now().Add(hookWait)
	for {
		ds := c.deliveries(token, p, id)
		if done(ds) {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries never reached the state awaited: %+v", ds)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// verifySignature checks X-Hds-Signature against secret and the body.
func verifySignature(t *testing.T, what string, req hookRequest, secret string) {
	t.Helper()
	sig := req.header.Get("X-Hds-Signature")
	ts, v1, ok := strings.Cut(sig, ",v1=")
	require.True(t, ok && strings.HasPrefix(ts, "t="), "%s: signature %q", what, sig)
	ts = strings.TrimPrefix(ts, "t=")
	unix, err := strconv.ParseInt(ts, 10, 64)
	require.NoError(t, err, "%s: t is unix seconds", what)
	assert.WithinDuration(t, time.Now(), time.Unix(unix, 0), time.Minute, "%s: t is the time of sending", what)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + string(req.body)))
	assert.Equal(t, hex.EncodeToString(m.Sum(nil)), v1, "%s: v1 is the lowercase hex HMAC-SHA256 of t.body", what)
}

func TestWebhooksOffByDefault(t *testing.T) {
	c := newServer(t, memoryKind)
	alice := c.token("alice")
	c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	for _, r := range []struct{ method, target, body string }{
		{"POST", pathP("web") + "/webhooks", `{"url":"https://example.com/hook"}`},
		{"GET", pathP("web") + "/webhooks", ""},
		{"GET", pathP("web") + "/webhooks/" + randomID(), ""},
		{"DELETE", pathP("web") + "/webhooks/" + randomID(), ""},
		{"POST", pathP("web") + "/webhooks/" + randomID() + "/ping", ""},
		{"GET", pathP("web") + "/webhooks/" + randomID() + "/deliveries", ""},
	} {
		status, _, env := c.do(r.method, r.target, r.body, alice)
		wantError(t, r.method+" "+r.target, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
	}
}

func TestWebhookErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := hookServer(t, kind, hds.Webhooks{})
		alice, bob := c.token("alice"), c.token("bob")
		c.tree(alice, "web", "prod", "db")
		hooks := pathP("web") + "/webhooks"
		for _, r := range []struct{ what, body, details string }{
			{"a relative url", `{"url":"/hook"}`, "absolute"},
			{"an ftp url", `{"url":"ftp://example.com/x"}`, "http or https"},
			{"no host", `{"url":"http:///x"}`, "host"},
			{"an unknown action", `{"url":"http://127.0.0.1/","actions":["record.explode"]}`, "record.explode"},
			{"a reveal is no event", `{"url":"http://127.0.0.1/","actions":["credential.reveal"]}`, "credential.reveal"},
			{"no actions", `{"url":"http://127.0.0.1/","actions":[]}`, "actions"},
			{"a short secret", `{"url":"http://127.0.0.1/","secret":"0123456789abcde"}`, "16 to 256 bytes"},
			{"a long secret", `{"url":"http://127.0.0.1/","secret":"` + strings.Repeat("s", 257) + `"}`, "16 to 256 bytes"},
			{"a cluster without a collection", `{"url":"http://127.0.0.1/","cluster":"db"}`, "collection"},
		} {
			status, _, env := c.do("POST", hooks, r.body, alice)
			wantError(t, r.what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
			wantDetails(t, r.what, env, r.details)
		}
		// A missing required field is a bad request, not a bad value
		// (docs/api.md#routes).
		for _, body := range []string{`{}`, `{"actions":["record.create"],"secret":"0123456789abcdef"}`} {
			status, _, env := c.do("POST", hooks, body, alice)
			wantError(t, "no url: "+body, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			wantDetails(t, "no url: "+body, env, `the field "url" is required`)
		}
		status, _, env := c.do("POST", hooks, `{"url":"http://127.0.0.1/","collection":"nope"}`, alice)
		wantError(t, "a scope that does not exist", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		status, _, env = c.do("POST", hooks, `{"url":"http://127.0.0.1/","collection":"prod","cluster":"nope"}`, alice)
		wantError(t, "a cluster that does not exist", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		status, _, env = c.do("POST", pathP("nope")+"/webhooks", `{"url":"http://127.0.0.1/"}`, alice)
		wantError(t, "an unknown project", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")

		h := c.createHook(alice, "web", `{"url":"http://127.0.0.1:9/"}`)
		unknown := randomID()
		for _, r := range []struct{ method, target string }{
			{"GET", hooks + "/" + unknown},
			{"DELETE", hooks + "/" + unknown},
			{"POST", hooks + "/" + unknown + "/ping"},
			{"GET", hooks + "/" + unknown + "/deliveries"},
			{"GET", hooks + "/not-an-id"},
		} {
			status, _, env := c.do(r.method, r.target, "", alice)
			wantError(t, "unknown id: "+r.method+" "+r.target, status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
		}
		for _, q := range []string{"?limit=0", "?offset=-1", "?limit=x"} {
			status, _, env := c.do("GET", hooks+q, "", alice)
			wantError(t, "list "+q, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
			status, _, env = c.do("GET", hooks+"/"+h.ID+"/deliveries"+q, "", alice)
			wantError(t, "deliveries "+q, status, env, http.StatusBadRequest, "INVALID_REQUEST", "Invalid request")
		}

		// Admins and the owner only; API tokens never.
		c.share(alice, "web", "bob", "editor")
		tok := c.apiToken(alice, "web", `{"name":"ci","role":"editor"}`)
		for _, r := range []struct{ method, target, body string }{
			{"POST", hooks, `{"url":"http://127.0.0.1/"}`},
			{"POST", hooks, `{"url":"nonsense"}`},
			{"GET", hooks, ""},
			{"GET", hooks + "/" + h.ID, ""},
			{"DELETE", hooks + "/" + h.ID, ""},
			{"POST", hooks + "/" + h.ID + "/ping", ""},
			{"GET", hooks + "/" + h.ID + "/deliveries", ""},
		} {
			forbiddenTo(t, c, "an editor: "+r.method+" "+r.target, r.method, r.target, r.body, bob)
			forbiddenTo(t, c, "an API token: "+r.method+" "+r.target, r.method, r.target, r.body, tok.Token)
		}
		c.share(alice, "web", "bob", "admin")
		c.mustDo("GET", hooks+"/"+h.ID, "", bob, http.StatusOK)
	})
}

func TestWebhookCRUD(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := hookServer(t, kind, hds.Webhooks{})
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "db")
		hooks := pathP("web") + "/webhooks"

		env := c.mustDo("POST", hooks, `{"url":"http://127.0.0.1:9/a","actions":["record.create","record.update","record.create"],"collection":"prod","cluster":"db","secret":"0123456789abcdef"}`, alice, http.StatusCreated)
		wantFields(t, "201", env.Data, "id", "url", "actions", "collection", "cluster", "created_at", "secret")
		var a webhookJSON
		env.decode(t, &a)
		wantID(t, "id", a.ID)
		wantTimestamps(t, "created_at", a.CreatedAt)
		assert.Equal(t, "http://127.0.0.1:9/a", a.URL)
		assert.Equal(t, []string{"record.create", "record.update"}, a.Actions, "duplicates dropped")
		assert.Equal(t, "prod", *a.Collection)
		assert.Equal(t, "db", *a.Cluster)
		assert.Equal(t, "0123456789abcdef", a.Secret, "the secret given")

		b := c.createHook(alice, "web", `{"url":"http://127.0.0.1:9/b"}`)
		assert.Len(t, b.Secret, 70, "a random secret: whsec_ and 64 hex digits")
		assert.Nil(t, b.Collection)
		assert.Nil(t, b.Cluster)
		assert.Contains(t, b.Actions, "webhook.delete", "every action of the change feed")
		assert.NotContains(t, b.Actions, "credential.reveal")

		env = c.mustDo("GET", hooks+"/"+a.ID, "", alice, http.StatusOK)
		wantFields(t, "GET one", env.Data, "id", "url", "actions", "collection", "cluster", "created_at")
		assert.NotContains(t, string(env.raw), a.Secret, "the secret is shown once")
		env = c.mustDo("GET", hooks, "", alice, http.StatusOK)
		assert.NotContains(t, string(env.raw), a.Secret)
		assert.NotContains(t, string(env.raw), b.Secret)
		var page struct {
			Items         []webhookJSON `json:"items"`
			Total         int           `json:"total"`
			Limit, Offset int
		}
		env.decode(t, &page)
		assert.Equal(t, 2, page.Total)
		if assert.Len(t, page.Items, 2) {
			assert.Equal(t, []string{a.ID, b.ID}, []string{page.Items[0].ID, page.Items[1].ID}, "oldest first")
		}
		env = c.mustDo("GET", hooks+"?limit=1&offset=1", "", alice, http.StatusOK)
		env.decode(t, &page)
		if assert.Len(t, page.Items, 1) {
			assert.Equal(t, b.ID, page.Items[0].ID, "limit and offset")
			assert.Equal(t, 2, page.Total)
		}

		status, h, _ := c.do("DELETE", hooks+"/"+a.ID, "", alice)
		assert.Equal(t, http.StatusNoContent, status)
		assert.Empty(t, h.Get("Content-Type"), "204 has no body")
		status, _, env = c.do("GET", hooks+"/"+a.ID, "", alice)
		wantError(t, "deleted", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")

		env = c.mustDo("GET", pathP("web")+"/audit", "", alice, http.StatusOK)
		var audit struct {
			Items []struct {
				Action string  `json:"action"`
				Target *string `json:"target"`
				Actor  string  `json:"actor"`
			} `json:"items"`
		}
		env.decode(t, &audit)
		require.GreaterOrEqual(t, len(audit.Items), 3)
		assert.Equal(t, "webhook.delete", audit.Items[0].Action)
		assert.Equal(t, a.ID, *audit.Items[0].Target, "target is the webhook id")
		assert.Equal(t, "webhook.create", audit.Items[1].Action)
		assert.Equal(t, b.ID, *audit.Items[1].Target)
		assert.Equal(t, "webhook.create", audit.Items[2].Action)
		assert.NotContains(t, string(env.raw), a.Secret, "no secret in the audit log")
	})
}

func TestWebhookDelivery(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		rc := newReceiver(t, nil)
		c := hookServer(t, kind, hds.Webhooks{})
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "db")
		secret := "a-receivers-secret-of-32-bytes!!"
		h := c.createHook(alice, "web", `{"url":"`+rc.URL+`/in","actions":["record.create","record.update"],"secret":"`+secret+`"}`)

		c.mustDo("POST", pathC("web", "other"), "", alice, http.StatusCreated) // not an action of the webhook
		rec := c.addRecord(alice, pathK("web", "prod", "db"), "password", "STRING", `"s3cr3t-value"`)
		got := rc.next(t, "record.create")
		assert.Equal(t, "application/json", got.header.Get("Content-Type"))
		assert.Equal(t, "record.create", got.header.Get("X-Hds-Event"))
		deliveryID := got.header.Get("X-Hds-Delivery")
		wantID(t, "X-Hds-Delivery", deliveryID)
		verifySignature(t, "record.create", got, secret)
		assert.NotContains(t, string(got.body), "s3cr3t-value", "a delivery never holds a value")
		assert.NotContains(t, string(got.body), secret)

		// The body is the audit entry, as GET P/audit shows it.
		env := c.mustDo("GET", pathP("web")+"/audit?limit=1", "", alice, http.StatusOK)
		var audit struct {
			Items []json.RawMessage `json:"items"`
		}
		env.decode(t, &audit)
		require.Len(t, audit.Items, 1)
		assert.JSONEq(t, string(audit.Items[0]), string(got.body), "the body is the event's data")
		var entry struct {
			Revision int64  `json:"revision"`
			RecordID string `json:"record_id"`
		}
		require.NoError(t, json.Unmarshal(got.body, &entry))
		assert.Equal(t, rec.ID, entry.RecordID)

		ds := c.waitDeliveries(t, alice, "web", h.ID, func(ds []deliveryJSON) bool { return len(ds) == 1 && ds[0].Status == "succeeded" })
		d := ds[0]
		assert.Equal(t, deliveryID, d.ID, "id is the X-Hds-Delivery value")
		if assert.NotNil(t, d.Revision) {
			assert.Equal(t, entry.Revision, *d.Revision)
		}
		assert.Equal(t, "record.create", d.Action)
		assert.Equal(t, 1, d.Attempts)
		if assert.NotNil(t, d.LastStatusCode) {
			assert.Equal(t, 200, *d.LastStatusCode)
		}
		assert.Nil(t, d.LastError)
		assert.Nil(t, d.NextAttemptAt, "nothing more to try")
		wantTimestamps(t, "created_at", d.CreatedAt)
		assert.Equal(t, 1, rc.count(), "collection.create is not an action of the webhook")

		// Ping: at once, revision null.
		env = c.mustDo("POST", pathP("web")+"/webhooks/"+h.ID+"/ping", "", alice, http.StatusAccepted)
		var ping deliveryJSON
		env.decode(t, &ping)
		assert.Nil(t, ping.Revision)
		assert.Equal(t, "ping", ping.Action)
		assert.Equal(t, "pending", ping.Status)
		got = rc.next(t, "ping")
		assert.Equal(t, "ping", got.header.Get("X-Hds-Event"))
		assert.Equal(t, ping.ID, got.header.Get("X-Hds-Delivery"))
		verifySignature(t, "ping", got, secret)
		var body map[string]any
		require.NoError(t, json.Unmarshal(got.body, &body))
		assert.Equal(t, h.ID, body["webhook"])
		wantTimestamps(t, "ping time", body["time"].(string))
		assert.Len(t, body, 2, "webhook and time")
		ds = c.waitDeliveries(t, alice, "web", h.ID, func(ds []deliveryJSON) bool { return len(ds) == 2 && ds[0].Status == "succeeded" })
		assert.Equal(t, ping.ID, ds[0].ID, "newest first")
		assert.Nil(t, ds[0].Revision, "a ping has no revision")
	})
}

func TestWebhookScope(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		rc := newReceiver(t, nil)
		c := hookServer(t, kind, hds.Webhooks{})
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "db")
		c.mustDo("POST", pathK("web", "prod", "cache"), "", alice, http.StatusCreated)
		c.createHook(alice, "web", `{"url":"`+rc.URL+`","collection":"prod","cluster":"db"}`)
		c.addRecord(alice, pathK("web", "prod", "cache"), "elsewhere", "INTEGER", "1")
		c.addRecord(alice, pathK("web", "prod", "db"), "here", "INTEGER", "1")
		got := rc.next(t, "the record in scope")
		assert.Contains(t, string(got.body), `"record":"here"`, "only the cluster's events")
		assert.Equal(t, 1, rc.count())
	})
}

func TestWebhookRetriesAndOrder(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		// The first event fails twice, then succeeds; the second waits.
		var mu sync.Mutex
		fails := map[string]int{}
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if r.Header.Get("X-Hds-Event") == "record.create" && fails[r.Header.Get("X-Hds-Delivery")] < 2 {
				fails[r.Header.Get("X-Hds-Delivery")]++
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		})
		c := hookServer(t, kind, hds.Webhooks{})
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "db")
		h := c.createHook(alice, "web", `{"url":"`+rc.URL+`","actions":["record.create","record.update"]}`)
		c.addRecord(alice, pathK("web", "prod", "db"), "a", "INTEGER", "1")
		c.mustDo("PUT", pathR("web", "prod", "db", "a"), `{"value":2}`, alice, http.StatusOK)

		first := rc.next(t, "attempt 1")
		ds := c.waitDeliveries(t, alice, "web", h.ID, func(ds []deliveryJSON) bool {
			return len(ds) == 2 && ds[1].Attempts == 1
		})
		failed := ds[1]
		assert.Equal(t, "pending", failed.Status, "pending while it is retried")
		if assert.NotNil(t, failed.LastStatusCode) {
			assert.Equal(t, 503, *failed.LastStatusCode)
		}
		if assert.NotNil(t, failed.LastError) {
			assert.Contains(t, *failed.LastError, "503")
		}
		assert.NotNil(t, failed.NextAttemptAt, "the next attempt is set")
		second := rc.next(t, "attempt 2")
		third := rc.next(t, "attempt 3")
		update := rc.next(t, "the later event")
		for i, r := range []hookRequest{first, second, third} {
			assert.Equal(t, "record.create", r.header.Get("X-Hds-Event"), "attempt %d", i+1)
			assert.Equal(t, first.header.Get("X-Hds-Delivery"), r.header.Get("X-Hds-Delivery"), "the same delivery id on every retry")
		}
		assert.Equal(t, "record.update", update.header.Get("X-Hds-Event"), "a later event waits while an earlier one is retried")
		gap1, gap2 := second.at.Sub(first.at), third.at.Sub(second.at)
		t.Logf("waits between attempts: %s, %s (1 s, then doubling)", gap1, gap2)
		ds = c.waitDeliveries(t, alice, "web", h.ID, func(ds []deliveryJSON) bool {
			return len(ds) == 2 && ds[0].Status == "succeeded" && ds[1].Status == "succeeded"
		})
		assert.Equal(t, 3, ds[1].Attempts)
		assert.Nil(t, ds[1].LastError, "the last attempt succeeded")
		assert.Equal(t, 1, ds[0].Attempts)
	})
}

func TestWebhookFailsAfterMaxAttempts(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Hds-Event") == "record.create" {
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
			}
		})
		c := hookServer(t, kind, hds.Webhooks{MaxAttempts: 2})
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "db")
		h := c.createHook(alice, "web", `{"url":"`+rc.URL+`/in","actions":["record.create","record.update"]}`)
		c.addRecord(alice, pathK("web", "prod", "db"), "a", "INTEGER", "1")
		c.mustDo("PUT", pathR("web", "prod", "db", "a"), `{"value":2}`, alice, http.StatusOK)
		ds := c.waitDeliveries(t, alice, "web", h.ID, func(ds []deliveryJSON) bool {
			return len(ds) == 2 && ds[0].Status == "succeeded"
		})
		assert.Equal(t, "failed", ds[1].Status, "failed after max_attempts")
		assert.Equal(t, 2, ds[1].Attempts)
		if assert.NotNil(t, ds[1].LastStatusCode) {
			assert.Equal(t, 302, *ds[1].LastStatusCode, "a redirect is an answer, not followed")
		}
		if assert.NotNil(t, ds[1].LastError) {
			assert.Contains(t, *ds[1].LastError, "redirect")
		}
		assert.Nil(t, ds[1].NextAttemptAt)
		assert.Equal(t, 3, rc.count(), "two attempts and the later event; /elsewhere never requested")
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, r := range rc.got {
			assert.Equal(t, "/in", r.path, "no redirect followed")
		}
	})
}

func TestWebhookTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select { // never answers in time
		case <-release:
		case <-r.Context().Done():
		}
	})
	c := hookServer(t, memoryKind, hds.Webhooks{Timeout: 200 * time.Millisecond, MaxAttempts: 1})
	alice := c.token("alice")
	c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	h := c.createHook(alice, "web", `{"url":"`+rc.URL+`"}`)
	c.mustDo("POST", pathC("web", "prod"), "", alice, http.StatusCreated)
	ds := c.waitDeliveries(t, alice, "web", h.ID, func(ds []deliveryJSON) bool { return len(ds) == 1 && ds[0].Status == "failed" })
	assert.Nil(t, ds[0].LastStatusCode, "no answer")
	if assert.NotNil(t, ds[0].LastError) {
		assert.Contains(t, *ds[0].LastError, "no answer within 200ms")
	}
}

func TestWebhookDeleteStopsDeliveries(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		inFlight := make(chan struct{}, 1)
		var mu sync.Mutex
		var deleted time.Time
		var after []string
		rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if !deleted.IsZero() {
				after = append(after, r.Header.Get("X-Hds-Event"))
			}
			mu.Unlock()
			if n == 1 {
				inFlight <- struct{}{}
				<-r.Context().Done() // held until the delete cancels it
			}
		})
		c := hookServer(t, kind, hds.Webhooks{})
		alice := c.token("alice")
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		h := c.createHook(alice, "web", `{"url":"`+rc.URL+`"}`)
		c.mustDo("POST", pathC("web", "a"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathC("web", "b"), "", alice, http.StatusCreated)
		select {
		case <-inFlight:
		case <-time.After(hookWait):
			t.Fatal("the first delivery never arrived")
		}
		c.mustDo("DELETE", pathP("web")+"/webhooks/"+h.ID, "", alice, http.StatusNoContent)
		mu.Lock()
		deleted = time.Now()
		mu.Unlock()

		// A second webhook on the same receiver: once its delivery has
		// arrived, the dispatcher has read the outbox since the delete.
		c.createHook(alice, "web", `{"url":"`+rc.URL+`/second","actions":["collection.create"]}`)
		c.mustDo("POST", pathC("web", "c"), "", alice, http.StatusCreated)
		deadline := time.Now().Add(hookWait)
		for {
			mu.Lock()
			n := len(after)
			mu.Unlock()
			if n > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{"collection.create"}, after, "after the 204, only the second webhook's delivery")
	})
}

func TestWebhookForgeryGuard(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := newServer(t, memoryKind, hds.WithWebhooks(hds.Webhooks{Enabled: true}), hds.WithShutdown(ctx), hds.WithCredentialKey(testKey))
	alice := c.token("alice")
	c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	for _, r := range []struct{ url, why string }{
		{"http://127.0.0.1:8080/hook", "loopback"},
		{"http://[::1]/hook", "loopback"},
		{"http://localhost/hook", "resolves to"},
		{"http://10.1.2.3/hook", "private"},
		{"https://192.168.0.10/hook", "private"},
		{"http://[fd00::1]/hook", "private"},
		{"http://169.254.169.254/latest/meta-data", "link-local"},
		{"http://[fe80::1]/", "link-local"},
		{"http://224.0.0.1/", "multicast"},
		{"http://0.0.0.0/", "unspecified"},
		{"http://[::ffff:127.0.0.1]/", "loopback"},
		// (v1.3) every address that is not globally routable unicast.
		{"http://100.64.0.1/", "shared address space"},
		{"http://0.1.2.3/", "0.0.0.0/8"},
		{"http://198.18.0.1/", "benchmarking"},
		{"http://240.0.0.1/", "240.0.0.0/4"},
		{"http://255.255.255.255/", "broadcast"},
		{"http://192.0.2.1/", "documentation"},
		{"http://[::127.0.0.1]/", "IPv4-compatible address holding 127.0.0.1, a loopback address"},
		{"http://[64:ff9b::7f00:1]/", "NAT64 address holding 127.0.0.1, a loopback address"},
		{"http://[2002:7f00:1::]/", "6to4 address holding 127.0.0.1, a loopback address"},
		{"http://[2001::1]/", "Teredo"},
		{"http://[2001:db8::1]/", "documentation"},
		{"http://[fec0::1]/", "site-local"},
	} {
		status, _, env := c.do("POST", pathP("web")+"/webhooks", `{"url":"`+r.url+`"}`, alice)
		wantError(t, r.url, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		wantDetails(t, r.url, env, r.why)
	}

	// allow_private_addresses lets them through.
	open := hookServer(t, memoryKind, hds.Webhooks{})
	alice = open.token("alice")
	open.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	open.createHook(alice, "web", `{"url":"http://127.0.0.1:8080/hook"}`)
	open.createHook(alice, "web", `{"url":"http://localhost/hook"}`)
	open.createHook(alice, "web", `{"url":"http://100.64.0.1/hook"}`)
	open.createHook(alice, "web", `{"url":"http://[64:ff9b::7f00:1]/hook"}`)
	// ... but never multicast, broadcast, 0.0.0.0/8 or ::.
	for _, r := range []struct{ url, why string }{
		{"http://224.0.0.1/", "multicast"},
		{"http://255.255.255.255/", "broadcast"},
		{"http://0.1.2.3/", "0.0.0.0/8"},
		{"http://[::]/", "unspecified"},
		{"http://[::ffff:0.0.0.1]/", "0.0.0.0/8"},
	} {
		status, _, env := open.do("POST", pathP("web")+"/webhooks", `{"url":"`+r.url+`"}`, alice)
		wantError(t, "allowed private: "+r.url, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
		wantDetails(t, "allowed private: "+r.url, env, r.why, "refused even with webhooks.allow_private_addresses")
	}
}

// TestWebhooksAtLeastOnceAcrossRestarts: a delivery pending when a
// server stops is sent by the next one on the same storage.
func TestWebhooksAtLeastOnceAcrossRestarts(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		down := true
		var mu sync.Mutex
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if down {
				w.WriteHeader(http.StatusBadGateway)
			}
		})
		ctx, stop := context.WithCancel(context.Background())
		first := newServer(t, kind, hds.WithCredentialKey(testKey), hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true}), hds.WithShutdown(ctx))
		alice := first.token("alice")
		first.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		h := first.createHook(alice, "web", `{"url":"`+rc.URL+`"}`)
		first.mustDo("POST", pathC("web", "prod"), "", alice, http.StatusCreated)
		failed := rc.next(t, "the attempt that fails")
		first.waitDeliveries(t, alice, "web", h.ID, func(ds []deliveryJSON) bool { return len(ds) == 1 && ds[0].Attempts == 1 })
		stop() // the first server's dispatcher stops

		mu.Lock()
		down = false
		mu.Unlock()
		ctx2, stop2 := context.WithCancel(context.Background())
		t.Cleanup(stop2)
		second := first.attach(hds.WithCredentialKey(testKey), hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true}), hds.WithShutdown(ctx2))
		got := rc.next(t, "the retry by the next server")
		assert.Equal(t, failed.header.Get("X-Hds-Delivery"), got.header.Get("X-Hds-Delivery"), "the same delivery")
		ds := second.waitDeliveries(t, alice, "web", h.ID, func(ds []deliveryJSON) bool { return len(ds) == 1 && ds[0].Status == "succeeded" })
		assert.Equal(t, 2, ds[0].Attempts)
	})
}

// TestWebhooksTwoInstances: two handlers on one PostgreSQL database
// share the sending; no delivery is sent twice.
func TestWebhooksTwoInstances(t *testing.T) {
	kind := kindNamed(t, "postgres")
	rc := newReceiver(t, func(int, http.ResponseWriter, *http.Request) {
		time.Sleep(5 * time.Millisecond) // hold each briefly, so that both instances are busy
	})
	a := hookServer(t, kind, hds.Webhooks{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b := a.attach(hds.WithCredentialKey(testKey), hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true}), hds.WithShutdown(ctx))
	alice := a.token("alice")
	a.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	const hooks, events = 10, 10
	ids := make([]string, 0, hooks)
	for range hooks {
		ids = append(ids, b.createHook(alice, "web", `{"url":"`+rc.URL+`","actions":["collection.create"]}`).ID)
	}
	for i := range events {
		a.mustDo("POST", pathC("web", "c"+strconv.Itoa(i)), "", alice, http.StatusCreated)
	}
	seen := map[string]int{}
	for range hooks * events {
		seen[rc.next(t, "a delivery").header.Get("X-Hds-Delivery")]++
	}
	assert.Len(t, seen, hooks*events, "every delivery arrived")
	for id, n := range seen {
		assert.Equal(t, 1, n, "delivery %s sent once", id)
	}
	// Once every delivery is recorded as succeeded after one attempt, no
	// send is left in flight: the receiver has had each exactly once.
	for _, id := range ids {
		a.waitDeliveries(t, alice, "web", id, func(ds []deliveryJSON) bool {
			if len(ds) != events {
				return false
			}
			for _, d := range ds {
				if d.Status != "succeeded" || d.Attempts != 1 {
					return false
				}
			}
			return true
		})
	}
	assert.Equal(t, hooks*events, rc.count(), "no delivery was sent twice")
}
