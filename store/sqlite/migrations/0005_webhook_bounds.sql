-- hds SQLite schema, version 5: bounds on webhooks' outboxes and sealed
-- webhook secrets (API.md section 23, v1.3).

-- finished_at is when a delivery succeeded or failed: finished
-- deliveries are deleted webhooks.keep_deliveries after it. Those that
-- finished before this version take their creation time.
ALTER TABLE hds_webhook_deliveries ADD COLUMN finished_at INTEGER;
UPDATE hds_webhook_deliveries SET finished_at = created_at WHERE status <> 'pending';
CREATE INDEX hds_webhook_deliveries_finished ON hds_webhook_deliveries (finished_at) WHERE status <> 'pending';
-- A webhook's pending deliveries, counted against webhooks.max_pending.
CREATE INDEX hds_webhook_deliveries_pending ON hds_webhook_deliveries (webhook_id, seq) WHERE status = 'pending';

-- secret_sealed: the secret is sealed like credential values (1), or in
-- clear as written before this version (0) until a credential rotation
-- seals it.
ALTER TABLE hds_webhooks ADD COLUMN secret_sealed INTEGER NOT NULL DEFAULT 0;
