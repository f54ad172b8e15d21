package store

import "context"

// PendingCounter is a Webhooks that counts its outbox: the deliveries not
// yet succeeded or failed, of every project, as the observer's webhook
// backlog reports them (hds.Observer.WebhookPending). It is optional: the
// sender asks only a store that implements it. The stores of this module
// do; storetest.RunWebhooks checks it.
type PendingCounter interface {
	// CountPendingDeliveries returns how many deliveries are pending
	// (DeliveryPending), in flight or waiting, of every webhook.
	CountPendingDeliveries(ctx context.Context) (int, error)
}
