-- hds SQLite schema, version 4: webhooks and the outbox of their
-- deliveries (API.md section 23).

-- A project's webhooks; deleted with the project. actions are the
-- actions received, separated by spaces (empty: every one). collection
-- and cluster narrow the scope (empty: not narrowed). after_revision is
-- the revision of the webhook's own webhook.create entry: it receives
-- the entries above it.
CREATE TABLE hds_webhooks (
    id             TEXT PRIMARY KEY,
    project_id     TEXT NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    url            TEXT NOT NULL,
    actions        TEXT NOT NULL,
    collection     TEXT NOT NULL,
    cluster        TEXT NOT NULL,
    secret         BLOB NOT NULL,
    created_at     INTEGER NOT NULL,
    created_by     TEXT NOT NULL,
    after_revision INTEGER NOT NULL
);
CREATE INDEX hds_webhooks_project ON hds_webhooks (project_id, created_at, id);

-- The outbox: one row per event (or ping) and webhook, written in the
-- transaction that writes the audit entry. seq orders a webhook's
-- deliveries; revision is NULL for a ping. lease_owner and lease_until
-- mark a delivery in flight.
CREATE TABLE hds_webhook_deliveries (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    webhook_id       TEXT NOT NULL REFERENCES hds_webhooks (id) ON DELETE CASCADE,
    project_id       TEXT NOT NULL,
    revision         INTEGER,
    action           TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    last_error       TEXT,
    next_attempt_at  INTEGER,
    created_at       INTEGER NOT NULL,
    lease_owner      TEXT,
    lease_until      INTEGER
);
CREATE INDEX hds_webhook_deliveries_webhook ON hds_webhook_deliveries (webhook_id, seq);
CREATE INDEX hds_webhook_deliveries_due ON hds_webhook_deliveries (status, next_attempt_at);
