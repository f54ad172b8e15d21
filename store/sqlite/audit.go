package sqlite

import (
	"context"
	"database/sql"

	"github.com/hds-go/hds/store"
)

var (
	_ store.AuditLog    = (*Store)(nil)
	_ store.EventSource = (*Store)(nil)
)

// auditCols are the columns scanAudit reads.
const auditCols = `a.project_id, a.revision, a.at, a.action, a.actor, a.actor_name, a.project, a.collection, a.cluster,
	a.record, a.record_id, a.version, a.target, a.request_id`

func scanAudit(row scanner) (*store.AuditEntry, error) {
	var e store.AuditEntry
	var at int64
	var action string
	var actor, actorName, collection, cluster, record, recordID, target, requestID sql.NullString
	var version sql.NullInt64
	if err := row.Scan(&e.ProjectID, &e.Revision, &at, &action, &actor, &actorName, &e.Project, &collection, &cluster,
		&record, &recordID, &version, &target, &requestID); err != nil {
		return nil, err
	}
	e.Time, e.Action = fromMicros(at), store.Action(action)
	e.Actor, e.ActorName, e.Collection, e.Cluster = actor.String, actorName.String, collection.String, cluster.String
	e.Record, e.RecordID, e.Version, e.Target, e.RequestID = record.String, recordID.String, version.Int64, target.String, requestID.String
	return &e, nil
}

// FindAuditEntries implements store.AuditLog: the log is read newest
// first and filtered as the other stores filter it (AuditQuery.Matches).
func (s *Store) FindAuditEntries(ctx context.Context, p store.Path, q store.AuditQuery) ([]*store.AuditEntry, int, error) {
	out := []*store.AuditEntry{}
	total := 0
	err := s.read(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		before := q.Before
		q.Before = 0
		rows, err := t.rows(`SELECT `+auditCols+` FROM hds_audit a WHERE a.project_id = ? ORDER BY a.revision DESC`, pr.ID)
		if err != nil {
			return err
		}
		defer rows.Close()
		skip := q.Offset
		for rows.Next() {
			e, err := scanAudit(rows)
			if err != nil {
				return err
			}
			if !q.Matches(e) {
				continue
			}
			total++
			if before > 0 && e.Revision >= before {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			if len(out) < q.Limit {
				out = append(out, e)
			} else if q.NoCount {
				break
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	if q.NoCount {
		total = store.NotCounted
	}
	return out, total, nil
}

// RecordReveal implements store.AuditLog.
func (s *Store) RecordReveal(ctx context.Context, p store.Path, r *store.Record, through ...store.RevealedRecord) error {
	return s.write(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		for _, e := range store.RevealEntries(p, r, through) {
			if err := t.audit(pr, p.Caller, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// AuditEntriesAfter implements store.EventSource.
func (s *Store) AuditEntriesAfter(ctx context.Context, projectID string, after int64, limit int) ([]*store.AuditEntry, error) {
	var out []*store.AuditEntry
	err := s.read(ctx, func(t *tx) error {
		rows, err := t.rows(`SELECT `+auditCols+` FROM hds_audit a WHERE a.project_id = ? AND a.revision > ?
			ORDER BY a.revision LIMIT ?`, projectID, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanAudit(rows)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	return out, err
}

// Subscribe implements store.EventSource. Entries are published in
// process once their transaction commits: one server process owns the
// database file (Lock), and the commands that may write beside it write
// no audit entry.
func (s *Store) Subscribe(ctx context.Context, projectID string, deliver func(*store.AuditEntry)) (func(), error) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	var revision int64
	err := s.read(ctx, func(t *tx) error {
		err := t.row(`SELECT revision FROM hds_projects WHERE id = ?`, projectID).Scan(&revision)
		if err == sql.ErrNoRows {
			return &store.NotFoundError{Kind: "project", Name: projectID}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.hub.Subscribe(projectID, revision, deliver), nil
}
