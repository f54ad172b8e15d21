-- hds schema, version 12: webhooks and the outbox of their deliveries
-- (API.md section 23).

-- A project's webhooks; deleted with the project. actions empty: every
-- action of the change feed. collection and cluster narrow the scope
-- (empty: not narrowed). secret keys the signature of each delivery.
-- after_revision is the revision of the webhook's own webhook.create
-- entry: it receives the entries above it.
CREATE TABLE hds_webhooks (
    id             uuid PRIMARY KEY,
    project_id     uuid NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    url            text NOT NULL,
    actions        text[] NOT NULL,
    collection     text COLLATE "C" NOT NULL,
    cluster        text COLLATE "C" NOT NULL,
    secret         bytea NOT NULL,
    created_at     timestamptz NOT NULL,
    created_by     text NOT NULL,
    after_revision bigint NOT NULL
);
CREATE INDEX hds_webhooks_project ON hds_webhooks (project_id, created_at, id);

-- The outbox: one row per event (or ping) and webhook, written by the
-- trigger below in the transaction that writes the audit entry, so that
-- no committed change misses its deliveries and no rolled-back one has
-- any. seq orders a webhook's deliveries (revision order: revisions are
-- allocated under the project's row lock). revision is NULL for a ping.
-- lease_owner and lease_until mark a delivery in flight: claims skip it
-- until the lease ends.
CREATE TABLE hds_webhook_deliveries (
    seq              bigserial PRIMARY KEY,
    id               uuid NOT NULL UNIQUE,
    webhook_id       uuid NOT NULL REFERENCES hds_webhooks (id) ON DELETE CASCADE,
    project_id       uuid NOT NULL,
    revision         bigint,
    action           text NOT NULL,
    status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    last_status_code integer,
    last_error       text,
    next_attempt_at  timestamptz,
    created_at       timestamptz NOT NULL,
    lease_owner      text,
    lease_until      timestamptz
);
CREATE INDEX hds_webhook_deliveries_webhook ON hds_webhook_deliveries (webhook_id, seq);
CREATE INDEX hds_webhook_deliveries_due ON hds_webhook_deliveries (next_attempt_at) WHERE status = 'pending';

-- A UUID of version 7 (RFC 9562): the time in milliseconds, then random
-- bits, so that ids sort by creation as the API's ids do.
CREATE FUNCTION hds_uuid7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
    SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING
        substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
        52, 1), 53, 1), 'hex')::uuid
$$;

CREATE FUNCTION hds_webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO hds_webhook_deliveries (id, webhook_id, project_id, revision, action, status, next_attempt_at, created_at)
    SELECT hds_uuid7(), w.id, NEW.project_id, NEW.revision, NEW.action, 'pending', NEW.at, NEW.at
    FROM hds_webhooks w
    WHERE w.project_id = NEW.project_id AND NEW.revision > w.after_revision
        AND (cardinality(w.actions) = 0 OR NEW.action = ANY (w.actions))
        AND (w.collection = '' OR w.collection = NEW.collection)
        AND (w.cluster = '' OR w.cluster = NEW.cluster)
    ORDER BY w.created_at, w.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER hds_webhook_outbox AFTER INSERT ON hds_audit
    FOR EACH ROW WHEN (NEW.action <> 'credential.reveal') EXECUTE FUNCTION hds_webhook_outbox();
