-- hds schema, version 13: bounds on webhooks' outboxes and sealed webhook
-- secrets (API.md section 23, v1.3).

-- finished_at is when a delivery succeeded or failed: finished
-- deliveries are deleted webhooks.keep_deliveries after it. Those that
-- finished before this version take their creation time.
ALTER TABLE hds_webhook_deliveries ADD COLUMN finished_at timestamptz;
UPDATE hds_webhook_deliveries SET finished_at = created_at WHERE status <> 'pending';
CREATE INDEX hds_webhook_deliveries_finished ON hds_webhook_deliveries (finished_at) WHERE status <> 'pending';
-- A webhook's pending deliveries, counted against webhooks.max_pending.
CREATE INDEX hds_webhook_deliveries_pending ON hds_webhook_deliveries (webhook_id, seq) WHERE status = 'pending';

-- secret_sealed: the secret is sealed like credential values, or in
-- clear as written before this version (false) until a credential
-- rotation seals it.
ALTER TABLE hds_webhooks ADD COLUMN secret_sealed boolean NOT NULL DEFAULT false;

-- Settings that the instances sharing the database share: the last one
-- set holds. webhooks.max_pending bounds each webhook's pending
-- deliveries (missing: 10000; 0 or less: no bound).
CREATE TABLE hds_settings (
    name  text PRIMARY KEY,
    value bigint NOT NULL
);

-- hds_webhook_bound fails, once the webhook holds more pending
-- deliveries than webhooks.max_pending, the oldest ones that no lease
-- holds, with 'queue full'. The outbox trigger calls it after each
-- delivery it adds, and a ping after its own: in the statement that adds
-- the new one.
CREATE FUNCTION hds_webhook_bound(hook uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    max_pending bigint;
    pending bigint;
BEGIN
    SELECT value INTO max_pending FROM hds_settings WHERE name = 'webhooks.max_pending';
    max_pending := coalesce(max_pending, 10000);
    IF max_pending <= 0 THEN
        RETURN;
    END IF;
    SELECT count(*) INTO pending FROM hds_webhook_deliveries WHERE webhook_id = hook AND status = 'pending';
    IF pending <= max_pending THEN
        RETURN;
    END IF;
    UPDATE hds_webhook_deliveries SET status = 'failed', last_error = 'queue full', next_attempt_at = NULL,
        finished_at = clock_timestamp(), lease_owner = NULL, lease_until = NULL
    WHERE seq IN (SELECT seq FROM hds_webhook_deliveries
        WHERE webhook_id = hook AND status = 'pending' AND (lease_until IS NULL OR lease_until <= clock_timestamp())
        ORDER BY seq LIMIT pending - max_pending);
END
$$;

CREATE OR REPLACE FUNCTION hds_webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    hook uuid;
BEGIN
    FOR hook IN
        INSERT INTO hds_webhook_deliveries (id, webhook_id, project_id, revision, action, status, next_attempt_at, created_at)
        SELECT hds_uuid7(), w.id, NEW.project_id, NEW.revision, NEW.action, 'pending', NEW.at, NEW.at
        FROM hds_webhooks w
        WHERE w.project_id = NEW.project_id AND NEW.revision > w.after_revision
            AND (cardinality(w.actions) = 0 OR NEW.action = ANY (w.actions))
            AND (w.collection = '' OR w.collection = NEW.collection)
            AND (w.cluster = '' OR w.cluster = NEW.cluster)
        ORDER BY w.created_at, w.id
        RETURNING webhook_id
    LOOP
        PERFORM hds_webhook_bound(hook);
    END LOOP;
    RETURN NULL;
END
$$;
