package handler

import (
	"context"
	"time"

	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/internal/webhook"
	"github.com/hds-go/hds/store"
)

// setBoundTimeout bounds the store call that sets webhooks.max_pending.
const setBoundTimeout = 10 * time.Second

// webhookRoutes registers the webhook routes (docs/api.md#22-webhooks)
// when Config.Webhooks is set and, when there is a store to send from, the
// dispatcher as background work of the router.
func (d *deps) webhookRoutes(rt *router) {
	cfg, protect := d.cfg, d.protect
	wc := cfg.Webhooks
	if wc == nil {
		return
	}
	ws := wc.Store
	if ws == nil {
		ws, _ = cfg.Store.(store.Webhooks)
	}
	guard := webhook.Guard{AllowPrivate: wc.AllowPrivateAddresses}
	sealer := cfg.Sealer
	h := hooks{store: cfg.Store, webhooks: ws, guard: guard, sealer: sealer, sender: webhook.New(webhook.Config{
		Store: ws, Timeout: wc.Timeout, MaxBackoff: wc.MaxBackoff, MaxAttempts: wc.MaxAttempts, Guard: guard,
		KeepDeliveries: wc.KeepDeliveries,
		Body:           func(e *store.AuditEntry) []byte { return appendAudit(nil, e) }, Logger: cfg.Logger,
		Secret: func(w *store.Webhook) ([]byte, error) { return openSecret(sealer, w) },
	})}
	if ws != nil {
		// The bound is the store's: it fails the oldest delivery in the
		// write that passes it. A store that cannot take it now keeps
		// the one it has (store.DefaultMaxPending unless set).
		ctx, cancel := context.WithTimeout(context.Background(), setBoundTimeout)
		if err := ws.SetMaxPending(ctx, wc.MaxPending); err != nil {
			cfg.Logger.Error("webhooks: set webhooks.max_pending", "error", err)
		}
		cancel()
		rt.background = append(rt.background, func() { h.sender.Run(cfg.Shutdown) })
	}
	const (
		path = pathP + "/webhooks"
		one  = path + "/{id}"
		who  = " Admins and the owner only; API tokens may not (403)."
	)
	rt.handle("POST "+path, store.RightAdmin, protect(h.handleCreate()), openapi.Operation{
		ID: "createWebhook", Tag: "webhooks", Summary: "Create a webhook",
		Description: "url is an absolute http or https URL; actions (default: every action of the change feed) and collection and cluster (a scope, as for API tokens: 404 when it does not exist) choose the events it receives; secret is 16 to 256 bytes, a random one when left out. The answer holds the secret: shown this once. A missing url is 400 INVALID_REQUEST. Unless webhooks.allow_private_addresses, a url whose host is, or resolves to, an address that is not globally routable unicast (loopback, private, link-local, multicast, unspecified, the special-use ranges, IPv6 forms holding such an IPv4 address) is 400 VALIDATION_ERROR (details say why); with it, multicast, 255.255.255.255, 0.0.0.0/8 and :: stay refused. Without a credential key it is 400 VALIDATION_ERROR (the secret is kept sealed like credential values). A project holds at most limits.max_webhooks_per_project webhooks (default 20): one more is 403 QUOTA_EXCEEDED. The webhook receives the events committed after its creation, each POSTed with X-Hds-Event, X-Hds-Delivery and X-Hds-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\" keyed with the secret>." + who,
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Body: "WebhookCreate", Status: 201, Success: "WebhookCreated",
		Errors: underProject,
	})
	rt.handle("GET "+path, store.RightAdmin, protect(h.handleList()), openapi.Operation{
		ID: "listWebhooks", Tag: "webhooks", Summary: "List the webhooks of a project",
		Description: "Oldest first, without their secrets; limit and offset apply." + who,
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Query: []string{"limit", "offset"}, Status: 200, Success: "WebhookList",
		Errors: underProject,
	})
	rt.handle("GET "+one, store.RightAdmin, protect(h.handleGet()), openapi.Operation{
		ID: "getWebhook", Tag: "webhooks", Summary: "Read a webhook",
		Description: "Without its secret. An unknown id is 404." + who,
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Status: 200, Success: "Webhook",
		Errors: underProject,
	})
	rt.handle("DELETE "+one, store.RightAdmin, protect(h.handleDelete()), openapi.Operation{
		ID: "deleteWebhook", Tag: "webhooks", Summary: "Delete a webhook",
		Description: "Its deliveries stop at once: nothing is sent after the answer. An unknown id is 404." + who,
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Status: 204, Success: "NoContent",
		Errors: underProject,
	})
	rt.handle("POST "+one+"/ping", store.RightAdmin, protect(h.handlePing()), openapi.Operation{
		ID: "pingWebhook", Tag: "webhooks", Summary: "Send a ping event to a webhook",
		Description: "Sends one event ping (body {\"webhook\": id, \"time\"}) at once, waiting for no other delivery; the answer is the delivery. An unknown id is 404." + who,
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Status: 202, Success: "PingQueued",
		Errors: underProject,
	})
	rt.handle("GET "+one+"/deliveries", store.RightAdmin, protect(h.handleDeliveries()), openapi.Operation{
		ID: "listWebhookDeliveries", Tag: "webhooks", Summary: "List a webhook's deliveries",
		Description: "Newest first; limit and offset apply. status is pending, succeeded or failed; revision is null for a ping. A webhook holds at most webhooks.max_pending deliveries not yet succeeded or failed: past it the oldest one not in flight fails with last_error \"queue full\". Finished deliveries are kept webhooks.keep_deliveries (default 7 days). An unknown id is 404." + who,
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Query: []string{"limit", "offset"}, Status: 200, Success: "DeliveryList",
		Errors: underProject,
	})
}
