package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lib/pq"

	"github.com/hds-go/hds/store"
)

var _ store.Webhooks = (*Store)(nil)

// The outbox is written by a trigger on hds_audit (migration 0012): every
// audit entry a webhook receives gets its pending delivery in the
// statement, and so the transaction, that writes the entry.

const webhookColumns = `id, project_id, url, actions, collection, cluster, secret, secret_sealed, created_at, created_by`

func scanWebhook(row interface{ Scan(...any) error }, extra ...any) (*store.Webhook, error) {
	var w store.Webhook
	var actions []string
	err := row.Scan(append([]any{&w.ID, &w.ProjectID, &w.URL, pq.Array(&actions), &w.Collection, &w.Cluster, &w.Secret,
		&w.SecretSealed, &w.CreatedAt, &w.CreatedBy}, extra...)...)
	w.CreatedAt = w.CreatedAt.UTC()
	for _, a := range actions {
		w.Actions = append(w.Actions, store.Action(a))
	}
	return &w, err
}

const deliveryColumns = `d.id, d.webhook_id, d.project_id, d.revision, d.action, d.status, d.attempts, d.last_status_code,
	d.last_error, d.next_attempt_at, d.created_at`

func scanDelivery(row interface{ Scan(...any) error }, extra ...any) (*store.Delivery, error) {
	var d store.Delivery
	var revision, code sql.NullInt64
	var lastError sql.NullString
	var next sql.NullTime
	err := row.Scan(append([]any{&d.ID, &d.WebhookID, &d.ProjectID, &revision, &d.Action, &d.Status, &d.Attempts, &code,
		&lastError, &next, &d.CreatedAt}, extra...)...)
	d.Revision, d.LastStatusCode, d.LastError = revision.Int64, int(code.Int64), lastError.String
	d.CreatedAt = d.CreatedAt.UTC()
	d.NextAttemptAt = utcOrNil(next)
	return &d, err
}

// CreateWebhook implements store.Webhooks, in one transaction: the audit
// entry first, so that the webhook receives the entries after its own.
func (s *Store) CreateWebhook(ctx context.Context, p store.Path, w *store.Webhook) (_ *store.Webhook, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	c := *w
	c.CreatedAt = s.now()
	if c.ID == "" {
		c.ID = store.NewID()
	}
	actions := make([]string, 0, len(c.Actions))
	for _, a := range c.Actions {
		actions = append(actions, string(a))
	}
	err = s.inTx(ctx, func(q queryer) error {
		scope, depth := p, levelProject
		scope.Collection, scope.Cluster = c.Collection, c.Cluster
		switch {
		case c.Cluster != "":
			depth = levelCluster
		case c.Collection != "":
			depth = levelCollection
		}
		r, err := q.resolve(ctx, scope, depth)
		if err != nil {
			return err
		}
		c.ProjectID = r.project
		e, err := q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionWebhookCreate, Target: c.ID})
		if err != nil {
			return err
		}
		// The entry took the project's row lock: the count holds until
		// the commit.
		n, err := q.count(ctx, `SELECT count(*) FROM hds_webhooks WHERE project_id = $1`, r.project)
		if err != nil {
			return err
		}
		if err := s.currentQuotas().CheckWebhooks(n); err != nil {
			return err
		}
		return q.insert(ctx, "webhook", c.ID, "project", p.Project, `INSERT INTO hds_webhooks (`+webhookColumns+`, after_revision)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING RETURNING 1`,
			c.ID, c.ProjectID, c.URL, pq.Array(actions), c.Collection, c.Cluster, c.Secret, c.SecretSealed, c.CreatedAt,
			c.CreatedBy, e.Revision)
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// FindWebhooks implements store.Webhooks.
func (s *Store) FindWebhooks(ctx context.Context, p store.Path, lq store.ListQuery) ([]*store.Webhook, int, error) {
	return findProjectList(ctx, s, p, lq, "hds_webhooks", webhookColumns,
		func(rows *sql.Rows, total *int) (*store.Webhook, error) { return scanWebhook(rows, total) })
}

// findWebhook returns the webhook id of the project projectID.
func (q queryer) findWebhook(ctx context.Context, projectID, id string) (*store.Webhook, error) {
	if _, ok := store.CanonicalUUID(id); !ok {
		return nil, &store.NotFoundError{Kind: "webhook", Name: id}
	}
	row, err := q.row(ctx, `SELECT `+webhookColumns+` FROM hds_webhooks WHERE id = $1 AND project_id = $2`, id, projectID)
	if err != nil {
		return nil, err
	}
	w, err := scanWebhook(row)
	if err != nil {
		return nil, notFoundOr(err, "webhook", id)
	}
	return w, nil
}

// FindWebhook implements store.Webhooks.
func (s *Store) FindWebhook(ctx context.Context, p store.Path, id string) (_ *store.Webhook, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	q := s.q()
	r, err := q.resolve(ctx, p, levelProject)
	if err != nil {
		return nil, err
	}
	return q.findWebhook(ctx, r.project, id)
}

// DeleteWebhook implements store.Webhooks, in one transaction; the
// deliveries go with the webhook (ON DELETE CASCADE).
func (s *Store) DeleteWebhook(ctx context.Context, p store.Path, id string) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.inProjectTx(ctx, p, func(q queryer, r resolved) error {
		if _, ok := store.CanonicalUUID(id); !ok {
			return &store.NotFoundError{Kind: "webhook", Name: id}
		}
		if err := q.execOne(ctx, "webhook", id, `DELETE FROM hds_webhooks WHERE id = $1 AND project_id = $2`, id, r.project); err != nil {
			return err
		}
		_, err := q.audit(ctx, r.project, p.Caller, store.AuditEntry{Action: store.ActionWebhookDelete, Target: id})
		return err
	})
}

// FindDeliveries implements store.Webhooks.
func (s *Store) FindDeliveries(ctx context.Context, p store.Path, id string, lq store.ListQuery) ([]*store.Delivery, int, error) {
	return findWithin(ctx, s, p, levelProject, func(ctx context.Context, q queryer, r resolved) ([]*store.Delivery, int, error) {
		if _, err := q.findWebhook(ctx, r.project, id); err != nil {
			return nil, 0, err
		}
		rows, err := q.rows(ctx, `SELECT `+deliveryColumns+`, count(*) OVER () FROM hds_webhook_deliveries d
			WHERE d.webhook_id = $1 ORDER BY d.seq DESC LIMIT $2 OFFSET $3`, id, lq.Limit, lq.Offset)
		if err != nil {
			return nil, 0, err
		}
		return scanList(rows, func(rows *sql.Rows, total *int) (*store.Delivery, error) { return scanDelivery(rows, total) },
			func() (int, error) {
				return q.count(ctx, `SELECT count(*) FROM hds_webhook_deliveries WHERE webhook_id = $1`, id)
			})
	})
}

// PingWebhook implements store.Webhooks.
func (s *Store) PingWebhook(ctx context.Context, p store.Path, id string) (_ *store.Delivery, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	var d *store.Delivery
	err = s.inProjectTx(ctx, p, func(q queryer, r resolved) error {
		if _, err := q.findWebhook(ctx, r.project, id); err != nil {
			return err
		}
		row, err := q.row(ctx, `INSERT INTO hds_webhook_deliveries AS d (id, webhook_id, project_id, revision, action, status,
			next_attempt_at, created_at) VALUES ($1, $2, $3, NULL, $4, 'pending', $5, $5) RETURNING `+deliveryColumns,
			store.NewID(), id, r.project, string(store.ActionPing), s.now())
		if err != nil {
			return err
		}
		if d, err = scanDelivery(row); err != nil {
			return classify(err)
		}
		_, err = q.exec(ctx, `SELECT hds_webhook_bound($1)`, id)
		return err
	})
	return d, err
}

// claimSQL leases due deliveries to one owner. A delivery is due when it
// is pending, its next attempt has come and no lease holds it; an event
// delivery also needs no earlier pending event delivery of its webhook
// (revision order). FOR UPDATE SKIP LOCKED lets instances claim at once
// without waiting on, or taking, each other's rows.
const claimSQL = `WITH due AS (
	SELECT d.seq FROM hds_webhook_deliveries d
	WHERE d.status = 'pending' AND d.next_attempt_at <= $2 AND (d.lease_until IS NULL OR d.lease_until <= $2)
		AND (d.revision IS NULL OR NOT EXISTS (SELECT 1 FROM hds_webhook_deliveries e
			WHERE e.webhook_id = d.webhook_id AND e.status = 'pending' AND e.revision IS NOT NULL AND e.seq < d.seq))
	ORDER BY d.next_attempt_at, d.seq LIMIT $4
	FOR UPDATE SKIP LOCKED
), claimed AS (
	UPDATE hds_webhook_deliveries d SET lease_owner = $1, lease_until = $3
	FROM due WHERE d.seq = due.seq
	RETURNING d.*
)
SELECT ` + deliveryColumns + `, w.url, w.actions, w.collection, w.cluster, w.secret, w.secret_sealed, w.created_at, w.created_by,
	a.project_id, a.project, a.revision, a.at, a.action, a.actor, a.actor_name, a.collection, a.cluster, a.record,
	a.record_id, a.version, a.target, a.request_id
FROM claimed d JOIN hds_webhooks w ON w.id = d.webhook_id
LEFT JOIN hds_audit a ON a.project_id = d.project_id AND a.revision = d.revision
ORDER BY d.seq`

// ClaimDeliveries implements store.Webhooks.
func (s *Store) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) (_ []*store.Claim, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	rows, err := s.q().rows(ctx, claimSQL, owner, now, now.Add(lease), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Claim
	for rows.Next() {
		var w store.Webhook
		var actions []string
		var e struct {
			projectID, project, action                           sql.NullString
			revision, version                                    sql.NullInt64
			actor, actorName, coll, clus, rec, recID, tgt, reqID sql.NullString
			time                                                 sql.NullTime
		}
		d, err := scanDelivery(rows, &w.URL, pq.Array(&actions), &w.Collection, &w.Cluster, &w.Secret, &w.SecretSealed,
			&w.CreatedAt, &w.CreatedBy,
			&e.projectID, &e.project, &e.revision, &e.time, &e.action, &e.actor, &e.actorName, &e.coll, &e.clus, &e.rec,
			&e.recID, &e.version, &e.tgt, &e.reqID)
		if err != nil {
			return nil, classify(err)
		}
		w.ID, w.ProjectID, w.CreatedAt = d.WebhookID, d.ProjectID, w.CreatedAt.UTC()
		for _, a := range actions {
			w.Actions = append(w.Actions, store.Action(a))
		}
		c := &store.Claim{Delivery: d, Webhook: &w}
		if e.revision.Valid {
			c.Entry = &store.AuditEntry{ProjectID: e.projectID.String, Project: e.project.String, Revision: e.revision.Int64,
				Time: e.time.Time.UTC(), Action: store.Action(e.action.String), Actor: e.actor.String, ActorName: e.actorName.String,
				Collection: e.coll.String, Cluster: e.clus.String, Record: e.rec.String, RecordID: e.recID.String,
				Version: e.version.Int64, Target: e.tgt.String, RequestID: e.reqID.String}
		}
		out = append(out, c)
	}
	return out, classify(rows.Err())
}

// FinishAttempt implements store.Webhooks.
func (s *Store) FinishAttempt(ctx context.Context, id, owner string, a store.Attempt) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	var next any
	if a.Status == store.DeliveryPending {
		next = a.NextAttemptAt.UTC().Truncate(time.Microsecond)
	}
	var code any
	if a.StatusCode != 0 {
		code = a.StatusCode
	}
	var finished any
	if a.Status != store.DeliveryPending {
		finished = s.now()
	}
	_, err = s.q().exec(ctx, `UPDATE hds_webhook_deliveries SET attempts = attempts + 1, status = $3, last_status_code = $4,
		last_error = $5, next_attempt_at = $6, finished_at = $7, lease_owner = NULL, lease_until = NULL
		WHERE id = $1 AND lease_owner = $2`,
		id, owner, string(a.Status), code, null(a.Error), next, finished)
	return err
}

// SetMaxPending implements store.Webhooks: the bound is kept in
// hds_settings, which the outbox trigger reads, so instances sharing the
// database share it (the last one set holds).
func (s *Store) SetMaxPending(ctx context.Context, n int) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	if n == 0 {
		n = store.DefaultMaxPending
	}
	_, err = s.q().exec(ctx, `INSERT INTO hds_settings (name, value) VALUES ('webhooks.max_pending', $1)
		ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`, n)
	return err
}

// PruneDeliveries implements store.Webhooks.
func (s *Store) PruneDeliveries(ctx context.Context, before time.Time) (_ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	res, err := s.q().exec(ctx, `DELETE FROM hds_webhook_deliveries WHERE status <> 'pending' AND finished_at < $1`, before)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ResealWebhooks implements store.Webhooks, one transaction per webhook
// (its row locked while reseal runs).
func (s *Store) ResealWebhooks(ctx context.Context, reseal func(w *store.Webhook) ([]byte, bool, error)) (_ int, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	rows, err := s.q().rows(ctx, `SELECT id FROM hds_webhooks ORDER BY id`)
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, classify(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, classify(err)
	}
	n := 0
	for _, id := range ids {
		err := s.inTx(ctx, func(q queryer) error {
			row, err := q.row(ctx, `SELECT `+webhookColumns+` FROM hds_webhooks WHERE id = $1 FOR UPDATE`, id)
			if err != nil {
				return err
			}
			w, err := scanWebhook(row)
			if errors.Is(err, sql.ErrNoRows) {
				return nil // deleted meanwhile
			} else if err != nil {
				return classify(err)
			}
			secret, write, err := reseal(w)
			if err != nil || !write {
				return err
			}
			n++
			_, err = q.exec(ctx, `UPDATE hds_webhooks SET secret = $2, secret_sealed = true WHERE id = $1`, id, secret)
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
