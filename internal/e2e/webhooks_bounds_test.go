package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// The bounds and sealed secrets of docs/api.md#webhooks (v1.3),
// black-box.

// TestWebhookQuota: a project holds at most 20 webhooks by default; one
// more is 403 QUOTA_EXCEEDED naming limits.max_webhooks_per_project and
// creates nothing; a delete makes room; store.NoneAllowed allows none.
func TestWebhookQuota(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := hookServer(t, kind, hds.Webhooks{})
		alice := c.token("alice")
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		hooks := pathP("web") + "/webhooks"
		var first string
		for i := range 20 {
			h := c.createHook(alice, "web", `{"url":"http://127.0.0.1:9/`+strconv.Itoa(i)+`"}`)
			if i == 0 {
				first = h.ID
			}
		}
		status, _, env := c.do("POST", hooks, `{"url":"http://127.0.0.1:9/21"}`, alice)
		wantError(t, "the 21st webhook", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		wantDetails(t, "the 21st webhook", env, "max_webhooks_per_project", "20")
		var page struct {
			Total int `json:"total"`
		}
		c.mustDo("GET", hooks, "", alice, http.StatusOK).decode(t, &page)
		assert.Equal(t, 20, page.Total, "nothing created")
		c.mustDo("DELETE", hooks+"/"+first, "", alice, http.StatusNoContent)
		c.createHook(alice, "web", `{"url":"http://127.0.0.1:9/again"}`)
	})

	none := hookServer(t, memoryKind, hds.Webhooks{}, hds.WithQuotas(store.Quotas{MaxWebhooksPerProject: store.NoneAllowed}))
	alice := none.token("alice")
	none.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	status, _, env := none.do("POST", pathP("web")+"/webhooks", `{"url":"http://127.0.0.1:9/"}`, alice)
	wantError(t, "NoneAllowed", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
	wantDetails(t, "NoneAllowed", env, "max_webhooks_per_project: at most 0 webhooks per project")
}

// TestWebhookQueueFull: with webhooks.max_pending 2 and the first
// delivery held in flight by its receiver, each later event past the
// bound fails the oldest delivery not in flight, last_error "queue
// full"; the one in flight and the newest stay pending.
func TestWebhookQueueFull(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		release := make(chan struct{})
		rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				<-release // the first delivery stays in flight
			}
		})
		t.Cleanup(func() { close(release) }) // before the receiver closes
		c := hookServer(t, kind, hds.Webhooks{MaxPending: 2, Timeout: time.Minute})
		alice := c.token("alice")
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		h := c.createHook(alice, "web", `{"url":"`+rc.URL+`","actions":["collection.create"]}`)
		c.mustDo("POST", pathC("web", "c1"), "", alice, http.StatusCreated)
		rc.next(t, "the first delivery")
		for _, name := range []string{"c2", "c3", "c4", "c5"} {
			c.mustDo("POST", pathC("web", name), "", alice, http.StatusCreated)
		}
		ds := c.deliveries(alice, "web", h.ID) // newest first: c5 .. c1
		require.Len(t, ds, 5)
		var statuses []string
		for _, d := range ds {
			statuses = append(statuses, d.Status)
		}
		assert.Equal(t, []string{"pending", "failed", "failed", "failed", "pending"}, statuses,
			"c2, c3, c4 failed; c1 is in flight, c5 waits")
		for _, d := range ds[1:4] {
			if assert.NotNil(t, d.LastError, "last_error") {
				assert.Equal(t, "queue full", *d.LastError)
			}
			assert.Nil(t, d.NextAttemptAt)
			assert.Zero(t, d.Attempts)
		}
	})
}

// TestWebhookSecretSealed: without a credential key no webhook can be
// created (400 VALIDATION_ERROR saying so); with one, the store holds the
// secret sealed, the answer and the signatures use it in clear; a
// delivery whose secret does not open fails at once, last_error saying
// so, and nothing is sent.
func TestWebhookSecretSealed(t *testing.T) {
	ctx := t.Context()
	nokey := newServer(t, memoryKind, hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true}), hds.WithShutdown(ctx))
	alice := nokey.token("alice")
	nokey.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	status, _, env := nokey.do("POST", pathP("web")+"/webhooks", `{"url":"http://127.0.0.1:9/"}`, alice)
	wantError(t, "no credential key", status, env, http.StatusBadRequest, "VALIDATION_ERROR", "Validation failed")
	wantDetails(t, "no credential key", env, "no credential key is configured")

	forEachKind(t, func(t *testing.T, kind storeKind) {
		rc := newReceiver(t, nil)
		c := hookServer(t, kind, hds.Webhooks{})
		alice := c.token("alice")
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		const secret = "the-plain-secret-of-this-hook"
		h := c.createHook(alice, "web", `{"url":"`+rc.URL+`","actions":["record.create"],"secret":"`+secret+`"}`)
		assert.Equal(t, secret, h.Secret, "the answer shows it in clear, once")
		ws := c.store.(store.Webhooks)
		p := store.Path{Project: "web", Caller: store.Caller{UserID: c.ids["alice"]}, Need: store.RightAdmin}
		stored, err := ws.FindWebhook(ctx, p, h.ID)
		require.NoError(t, err)
		assert.True(t, stored.SecretSealed, "kept sealed")
		assert.NotContains(t, string(stored.Secret), secret, "the store never sees it in clear")
		c.mustDo("POST", pathP("web")+"/webhooks/"+h.ID+"/ping", "", alice, http.StatusAccepted)
		verifySignature(t, "a ping", rc.next(t, "a ping"), secret)

		// A secret that does not open: sealed with another key.
		bad, err := ws.CreateWebhook(ctx, p, &store.Webhook{URL: rc.URL, Secret: []byte(`"hds1:0000000000000000:AAAA"`),
			SecretSealed: true, CreatedBy: c.ids["alice"]})
		require.NoError(t, err)
		c.mustDo("POST", pathP("web")+"/webhooks/"+bad.ID+"/ping", "", alice, http.StatusAccepted)
		ds := c.waitDeliveries(t, alice, "web", bad.ID, func(ds []deliveryJSON) bool {
			return len(ds) == 1 && ds[0].Status == "failed"
		})
		assert.Equal(t, 1, ds[0].Attempts, "failed at once, not retried")
		if assert.NotNil(t, ds[0].LastError) {
			assert.Contains(t, *ds[0].LastError, "secret does not open")
		}
		assert.Nil(t, ds[0].LastStatusCode, "nothing was sent")
		assert.Equal(t, 1, rc.count(), "only the first ping reached the receiver")
	})
}

// TestRotateWebhookSecrets: credentials rotate seals a secret kept in
// clear by an earlier version and re-seals one sealed with the old key,
// counting them; its final check counts a secret written behind it under
// the old key; afterwards a server that knows only the new key signs
// with both secrets as they were.
func TestRotateWebhookSecrets(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		ctx := t.Context()
		oldKey, newKey := testKey, bytes.Repeat([]byte{0x6e}, 32)
		rc := newReceiver(t, nil)
		// The first server's dispatcher stops at once: the pings below
		// are for the second one, which knows only the new key.
		stopped, stop := context.WithCancel(ctx)
		stop()
		c := newServer(t, kind, hds.WithCredentialKey(oldKey), hds.WithShutdown(stopped),
			hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true}))
		alice := c.token("alice")
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		sealed := c.createHook(alice, "web", `{"url":"`+rc.URL+`","actions":["record.create"],"secret":"sealed-with-the-old-key"}`)
		ws := c.store.(store.Webhooks)
		p := store.Path{Project: "web", Caller: store.Caller{UserID: c.ids["alice"]}, Need: store.RightAdmin}
		clear, err := ws.CreateWebhook(ctx, p, &store.Webhook{URL: rc.URL, Actions: []store.Action{store.ActionRecordCreate},
			Secret: []byte("kept-in-clear-by-v1.2"), CreatedBy: c.ids["alice"]})
		require.NoError(t, err, "a webhook as v1.2 kept it")

		st := c.store.(store.Store)
		got, err := hds.RotateCredentials(ctx, st, hds.Rotation{Primary: newKey, Previous: [][]byte{oldKey}})
		require.NoError(t, err, "RotateCredentials")
		assert.Equal(t, 2, got.WebhooksResealed, "one sealed, one re-sealed")
		assert.Zero(t, got.WebhooksRemaining)
		for _, id := range []string{sealed.ID, clear.ID} {
			w, err := ws.FindWebhook(ctx, p, id)
			require.NoError(t, err)
			assert.True(t, w.SecretSealed, "sealed now")
			assert.NotContains(t, string(w.Secret), "kept-in-clear", "no secret in clear")
		}
		again, err := hds.RotateCredentials(ctx, st, hds.Rotation{Primary: newKey, Previous: [][]byte{oldKey}})
		require.NoError(t, err, "a second rotation")
		assert.Zero(t, again.WebhooksResealed, "nothing left to do")

		// A server that knows only the new key signs with each secret.
		c2 := c.attach(hds.WithCredentialKey(newKey), hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true}),
			hds.WithShutdown(ctx))
		for _, h := range []struct{ id, secret string }{{sealed.ID, "sealed-with-the-old-key"}, {clear.ID, "kept-in-clear-by-v1.2"}} {
			c2.mustDo("POST", pathP("web")+"/webhooks/"+h.id+"/ping", "", alice, http.StatusAccepted)
			req := rc.next(t, "a ping after the rotation")
			var body struct {
				Webhook string `json:"webhook"`
			}
			require.NoError(t, json.Unmarshal(req.body, &body))
			if body.Webhook == h.id {
				verifySignature(t, "ping of "+h.id, req, h.secret)
			} else {
				t.Errorf("a ping of %s, want %s", body.Webhook, h.id)
			}
		}

		// A secret written in clear behind the rotation: the final check counts it.
		_, err = ws.CreateWebhook(ctx, p, &store.Webhook{URL: rc.URL, Actions: []store.Action{store.ActionRecordCreate},
			Secret: []byte("written-in-clear-later"), CreatedBy: c.ids["alice"]})
		require.NoError(t, err)
		late, err := hds.RotateCredentials(ctx, failingReseal{st.(webhookStore)}, hds.Rotation{Primary: newKey, Previous: [][]byte{oldKey}})
		require.ErrorIs(t, err, hds.ErrRotationIncomplete, "a secret left in clear")
		assert.Equal(t, 1, late.WebhooksRemaining, "counted by the final check")
	})
}

// failingReseal is a store whose webhooks are never re-sealed: its
// ResealWebhooks reads them but writes nothing, as if every secret had
// been written behind the rotation.
type failingReseal struct{ webhookStore }

// webhookStore is a store with webhooks.
type webhookStore interface {
	store.Store
	store.Webhooks
}

func (f failingReseal) ResealWebhooks(ctx context.Context, reseal func(*store.Webhook) ([]byte, bool, error)) (int, error) {
	return f.webhookStore.ResealWebhooks(ctx, func(w *store.Webhook) ([]byte, bool, error) {
		_, _, err := reseal(w)
		return nil, false, err
	})
}
