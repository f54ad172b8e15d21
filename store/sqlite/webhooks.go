package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/hds-go/hds/store"
)

var _ store.Webhooks = (*Store)(nil)

// webhooksMigration is the migration that adds the webhooks' tables,
// boundsMigration the one that bounds their outboxes.
const (
	webhooksMigration = "migrations/0004_webhooks.sql"
	boundsMigration   = "migrations/0005_webhook_bounds.sql"
)

const webhookCols = `w.id, w.project_id, w.url, w.actions, w.collection, w.cluster, w.secret, w.secret_sealed, w.created_at,
	w.created_by`

func scanWebhook(row scanner) (*store.Webhook, error) {
	var w store.Webhook
	var actions string
	var created int64
	if err := row.Scan(&w.ID, &w.ProjectID, &w.URL, &actions, &w.Collection, &w.Cluster, &w.Secret, &w.SecretSealed, &created,
		&w.CreatedBy); err != nil {
		return nil, err
	}
	w.CreatedAt = fromMicros(created)
	w.Actions = actionsOf(actions)
	return &w, nil
}

// actionsOf reads the actions column: actions separated by spaces.
func actionsOf(actions string) []store.Action {
	var out []store.Action
	for _, a := range strings.Fields(actions) {
		out = append(out, store.Action(a))
	}
	return out
}

const deliveryCols = `d.id, d.webhook_id, d.project_id, d.revision, d.action, d.status, d.attempts, d.last_status_code,
	d.last_error, d.next_attempt_at, d.created_at`

func scanDelivery(row scanner) (*store.Delivery, error) {
	var d store.Delivery
	var revision, code, next sql.NullInt64
	var lastError sql.NullString
	var action, status string
	var created int64
	if err := row.Scan(&d.ID, &d.WebhookID, &d.ProjectID, &revision, &action, &status, &d.Attempts, &code,
		&lastError, &next, &created); err != nil {
		return nil, err
	}
	d.Revision, d.Action, d.Status = revision.Int64, store.Action(action), store.DeliveryStatus(status)
	d.LastStatusCode, d.LastError, d.NextAttemptAt, d.CreatedAt = int(code.Int64), lastError.String, timePtr(next), fromMicros(created)
	return &d, nil
}

// hookRow is what the outbox reads of a webhook: what it receives
// (w.ID, w.Actions, w.Collection, w.Cluster) and its after_revision.
type hookRow struct {
	w     *store.Webhook
	after int64
}

// projectHooks returns the webhooks of the project id in the order of
// their creation: read once per batch or lean group of writes (t.hooks),
// else at each call.
func (t *tx) projectHooks(id string) ([]hookRow, error) {
	if hooks, ok := t.hooks[id]; ok {
		return hooks, nil
	}
	rows, err := t.rows(`SELECT w.id, w.actions, w.collection, w.cluster, w.after_revision FROM hds_webhooks w
		WHERE w.project_id = ? ORDER BY w.created_at, w.id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hooks []hookRow
	for rows.Next() {
		h := hookRow{w: &store.Webhook{}}
		var actions string
		if err := rows.Scan(&h.w.ID, &actions, &h.w.Collection, &h.w.Cluster, &h.after); err != nil {
			return nil, err
		}
		h.w.Actions = actionsOf(actions)
		hooks = append(hooks, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if t.hooks != nil {
		t.hooks[id] = hooks
	}
	return hooks, nil
}

// outbox adds, in t, a pending delivery of the entry e to each webhook of
// its project that receives it: t.audit calls it with every entry, so
// that the deliveries commit (or roll back) with the change.
func (t *tx) outbox(e *store.AuditEntry) error {
	if !e.Action.IsEvent() || t.s.lastMigration != "" && t.s.lastMigration < webhooksMigration {
		return nil // an upgrade test's older schema has no webhooks
	}
	all, err := t.projectHooks(e.ProjectID)
	if err != nil {
		return err
	}
	var hooks []string
	for _, h := range all {
		if h.after < e.Revision && h.w.Matches(e) {
			hooks = append(hooks, h.w.ID)
		}
	}
	for _, id := range hooks {
		if _, err := t.exec(`INSERT INTO hds_webhook_deliveries (id, webhook_id, project_id, revision, action, status,
			next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
			store.NewID(), id, e.ProjectID, e.Revision, string(e.Action), micros(e.Time), micros(e.Time)); err != nil {
			return err
		}
		if err := t.boundQueue(id); err != nil {
			return err
		}
	}
	return nil
}

// boundQueue fails the oldest pending deliveries of the webhook id that
// no lease holds until no more than the store's max pending are pending
// (store.QueueFull), in t, after a delivery was added.
func (t *tx) boundQueue(id string) error {
	limit := int(t.s.maxPending.Load())
	if limit <= 0 || t.s.lastMigration != "" && t.s.lastMigration < boundsMigration {
		return nil
	}
	var n int
	if err := t.row(`SELECT count(*) FROM hds_webhook_deliveries WHERE webhook_id = ? AND status = 'pending'`, id).Scan(&n); err != nil {
		return err
	}
	if n <= limit {
		return nil
	}
	now := micros(t.now)
	_, err := t.exec(`UPDATE hds_webhook_deliveries SET status = 'failed', last_error = ?, next_attempt_at = NULL,
		finished_at = ?, lease_owner = NULL, lease_until = NULL
		WHERE seq IN (SELECT seq FROM hds_webhook_deliveries WHERE webhook_id = ? AND status = 'pending'
			AND (lease_until IS NULL OR lease_until <= ?) ORDER BY seq LIMIT ?)`,
		store.QueueFull, now, id, now, n-limit)
	return err
}

// webhook returns the webhook id of the project pr.
func (t *tx) webhook(pr *proj, id string) (*store.Webhook, error) {
	w, err := scanWebhook(t.row(`SELECT `+webhookCols+` FROM hds_webhooks w WHERE w.id = ? AND w.project_id = ?`, id, pr.ID))
	if err == sql.ErrNoRows {
		return nil, &store.NotFoundError{Kind: "webhook", Name: id}
	}
	return w, err
}

// CreateWebhook implements store.Webhooks.
func (s *Store) CreateWebhook(ctx context.Context, p store.Path, in *store.Webhook) (*store.Webhook, error) {
	var out *store.Webhook
	err := s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if err := t.scopeExists(pr, in.Collection, in.Cluster); err != nil {
			return err
		}
		var n int
		if err := t.row(`SELECT count(*) FROM hds_webhooks WHERE project_id = ?`, pr.ID).Scan(&n); err != nil {
			return err
		}
		if err := t.s.quotas.Load().CheckWebhooks(n); err != nil {
			return err
		}
		w := *in
		w.Actions = append([]store.Action(nil), in.Actions...)
		w.Secret = append([]byte(nil), in.Secret...)
		w.ProjectID, w.CreatedAt = pr.ID, t.now
		if w.ID == "" {
			w.ID = store.NewID()
		}
		if err := t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionWebhookCreate, Target: w.ID}); err != nil {
			return err
		}
		actions := make([]string, 0, len(w.Actions))
		for _, a := range w.Actions {
			actions = append(actions, string(a))
		}
		if _, err := t.exec(`INSERT INTO hds_webhooks (id, project_id, url, actions, collection, cluster, secret, secret_sealed,
			created_at, created_by, after_revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.ID, w.ProjectID, w.URL,
			strings.Join(actions, " "), w.Collection, w.Cluster, w.Secret, w.SecretSealed, micros(w.CreatedAt), w.CreatedBy,
			pr.Revision); err != nil {
			return err
		}
		out = &w
		return nil
	})
	return out, err
}

// FindWebhooks implements store.Webhooks.
func (s *Store) FindWebhooks(ctx context.Context, p store.Path, q store.ListQuery) ([]*store.Webhook, int, error) {
	out := []*store.Webhook{}
	total := 0
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if err := t.row(`SELECT count(*) FROM hds_webhooks WHERE project_id = ?`, pr.ID).Scan(&total); err != nil {
			return err
		}
		rows, err := t.rows(`SELECT `+webhookCols+` FROM hds_webhooks w WHERE w.project_id = ?
			ORDER BY w.created_at, w.id LIMIT ? OFFSET ?`, pr.ID, q.Limit, q.Offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			w, err := scanWebhook(rows)
			if err != nil {
				return err
			}
			out = append(out, w)
		}
		return rows.Err()
	})
	return out, total, err
}

// FindWebhook implements store.Webhooks.
func (s *Store) FindWebhook(ctx context.Context, p store.Path, id string) (*store.Webhook, error) {
	var out *store.Webhook
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		out, err = t.webhook(pr, id)
		return err
	})
	return out, err
}

// DeleteWebhook implements store.Webhooks; the deliveries go with the
// webhook (ON DELETE CASCADE).
func (s *Store) DeleteWebhook(ctx context.Context, p store.Path, id string) error {
	return s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		res, err := t.exec(`DELETE FROM hds_webhooks WHERE id = ? AND project_id = ?`, id, pr.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return &store.NotFoundError{Kind: "webhook", Name: id}
		}
		return t.audit(pr, p.Caller, store.AuditEntry{Action: store.ActionWebhookDelete, Target: id})
	})
}

// FindDeliveries implements store.Webhooks.
func (s *Store) FindDeliveries(ctx context.Context, p store.Path, id string, q store.ListQuery) ([]*store.Delivery, int, error) {
	out := []*store.Delivery{}
	total := 0
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if _, err := t.webhook(pr, id); err != nil {
			return err
		}
		if err := t.row(`SELECT count(*) FROM hds_webhook_deliveries WHERE webhook_id = ?`, id).Scan(&total); err != nil {
			return err
		}
		rows, err := t.rows(`SELECT `+deliveryCols+` FROM hds_webhook_deliveries d WHERE d.webhook_id = ?
			ORDER BY d.seq DESC LIMIT ? OFFSET ?`, id, q.Limit, q.Offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return rows.Err()
	})
	return out, total, err
}

// PingWebhook implements store.Webhooks.
func (s *Store) PingWebhook(ctx context.Context, p store.Path, id string) (*store.Delivery, error) {
	var out *store.Delivery
	err := s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		if _, err := t.webhook(pr, id); err != nil {
			return err
		}
		now := t.now
		out = &store.Delivery{ID: store.NewID(), WebhookID: id, ProjectID: pr.ID, Action: store.ActionPing,
			Status: store.DeliveryPending, NextAttemptAt: &now, CreatedAt: now}
		_, err = t.exec(`INSERT INTO hds_webhook_deliveries (id, webhook_id, project_id, revision, action, status,
			next_attempt_at, created_at) VALUES (?, ?, ?, NULL, ?, 'pending', ?, ?)`,
			out.ID, id, pr.ID, string(store.ActionPing), micros(now), micros(now))
		if err != nil {
			return err
		}
		return t.boundQueue(id)
	})
	return out, err
}

// ClaimDeliveries implements store.Webhooks, in one write transaction
// (SQLite has one writer at a time, so no two claims overlap).
func (s *Store) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*store.Claim, error) {
	var out []*store.Claim
	err := s.write(ctx, func(t *tx) error {
		rows, err := t.rows(`SELECT `+deliveryCols+`, `+webhookCols+` FROM hds_webhook_deliveries d
			JOIN hds_webhooks w ON w.id = d.webhook_id
			WHERE d.status = 'pending' AND d.next_attempt_at <= ?1 AND (d.lease_until IS NULL OR d.lease_until <= ?1)
				AND (d.revision IS NULL OR NOT EXISTS (SELECT 1 FROM hds_webhook_deliveries e
					WHERE e.webhook_id = d.webhook_id AND e.status = 'pending' AND e.revision IS NOT NULL AND e.seq < d.seq))
			ORDER BY d.next_attempt_at, d.seq LIMIT ?2`, micros(now), limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			c, err := scanClaim(rows)
			if err != nil {
				rows.Close()
				return err
			}
			out = append(out, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range out {
			if _, err := t.exec(`UPDATE hds_webhook_deliveries SET lease_owner = ?, lease_until = ? WHERE id = ?`,
				owner, micros(now.Add(lease)), c.Delivery.ID); err != nil {
				return err
			}
			if c.Delivery.Revision != 0 {
				e, err := scanAudit(t.row(`SELECT `+auditCols+` FROM hds_audit a WHERE a.project_id = ? AND a.revision = ?`,
					c.Delivery.ProjectID, c.Delivery.Revision))
				if err != nil {
					return err
				}
				c.Entry = e
			}
		}
		return nil
	})
	return out, err
}

// scanClaim reads a delivery and its webhook.
func scanClaim(row scanner) (*store.Claim, error) {
	var d store.Delivery
	var w store.Webhook
	var revision, code, next sql.NullInt64
	var lastError sql.NullString
	var action, status, actions string
	var created, wcreated int64
	if err := row.Scan(&d.ID, &d.WebhookID, &d.ProjectID, &revision, &action, &status, &d.Attempts, &code,
		&lastError, &next, &created, &w.ID, &w.ProjectID, &w.URL, &actions, &w.Collection, &w.Cluster, &w.Secret,
		&w.SecretSealed, &wcreated, &w.CreatedBy); err != nil {
		return nil, err
	}
	d.Revision, d.Action, d.Status = revision.Int64, store.Action(action), store.DeliveryStatus(status)
	d.LastStatusCode, d.LastError, d.NextAttemptAt, d.CreatedAt = int(code.Int64), lastError.String, timePtr(next), fromMicros(created)
	w.CreatedAt = fromMicros(wcreated)
	for _, a := range strings.Fields(actions) {
		w.Actions = append(w.Actions, store.Action(a))
	}
	return &store.Claim{Delivery: &d, Webhook: &w}, nil
}

// FinishAttempt implements store.Webhooks.
func (s *Store) FinishAttempt(ctx context.Context, id, owner string, a store.Attempt) error {
	var next, code any
	if a.Status == store.DeliveryPending {
		next = micros(a.NextAttemptAt)
	}
	if a.StatusCode != 0 {
		code = a.StatusCode
	}
	return s.write(ctx, func(t *tx) error {
		var finished any
		if a.Status != store.DeliveryPending {
			finished = micros(t.now)
		}
		_, err := t.exec(`UPDATE hds_webhook_deliveries SET attempts = attempts + 1, status = ?, last_status_code = ?,
			last_error = ?, next_attempt_at = ?, finished_at = ?, lease_owner = NULL, lease_until = NULL
			WHERE id = ? AND lease_owner = ?`,
			string(a.Status), code, nullString(a.Error), next, finished, id, owner)
		return err
	})
}

// SetMaxPending implements store.Webhooks: the bound is this process's
// (one server process owns the file).
func (s *Store) SetMaxPending(_ context.Context, n int) error {
	if n == 0 {
		n = store.DefaultMaxPending
	}
	s.maxPending.Store(int64(n))
	return nil
}

// PruneDeliveries implements store.Webhooks.
func (s *Store) PruneDeliveries(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.write(ctx, func(t *tx) error {
		res, err := t.exec(`DELETE FROM hds_webhook_deliveries WHERE status <> 'pending' AND finished_at < ?`, micros(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// ResealWebhooks implements store.Webhooks, one write transaction per
// webhook.
func (s *Store) ResealWebhooks(ctx context.Context, reseal func(w *store.Webhook) ([]byte, bool, error)) (int, error) {
	var ids []string
	err := s.read(ctx, func(t *tx) error {
		rows, err := t.rows(`SELECT id FROM hds_webhooks ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		err := s.write(ctx, func(t *tx) error {
			w, err := scanWebhook(t.row(`SELECT `+webhookCols+` FROM hds_webhooks w WHERE w.id = ?`, id))
			if err == sql.ErrNoRows {
				return nil // deleted meanwhile
			} else if err != nil {
				return err
			}
			secret, write, err := reseal(w)
			if err != nil || !write {
				return err
			}
			n++
			_, err = t.exec(`UPDATE hds_webhooks SET secret = ?, secret_sealed = 1 WHERE id = ?`, secret, id)
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
