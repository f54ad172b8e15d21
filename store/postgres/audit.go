package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/hds-go/hds/store"
)

var (
	_ store.AuditLog       = (*Store)(nil)
	_ store.AuditLogSetter = (*Store)(nil)
)

// eventsChannel is the channel of the NOTIFY every audited transaction
// sends: "<project id> <revision> <entry>" (auditSQL: the entry as the
// JSON array notifiedEntry reads, so that a listener need not read it back
// from hds_audit, where a deletion that follows at once would have taken
// it), "<project id> <revision>" (the newest revision it wrote, when the
// entries are not in the payload: a batch's, or one that would pass
// PostgreSQL's 8000-byte limit), or "<project id> 0" when the project was
// deleted. PostgreSQL delivers it at commit, to every instance listening,
// in commit order.
const eventsChannel = "hds_events"

// auditSQL writes one audit entry: it bumps the project's revision (the
// row lock orders the project's writers until commit, so revisions are
// gap-free and in commit order), inserts the entry with it, and notifies
// the listeners with the entry, all in one statement.
const auditSQL = `WITH rev AS (
	UPDATE hds_projects SET revision = revision + 1 WHERE id = $1 RETURNING revision, name
), ins AS (
	INSERT INTO hds_audit (project_id, revision, at, action, actor, actor_name, project,
		collection, cluster, record, record_id, version, target, request_id)
	SELECT $1, rev.revision, $2, $3, $4, $5, rev.name, $6, $7, $8, $9, $10, $11, $12 FROM rev
	RETURNING *
)
SELECT ins.revision, ins.project, pg_notify('` + eventsChannel + `',
	CASE WHEN octet_length(n.full) < 8000 THEN n.full ELSE ins.project_id::text || ' ' || ins.revision END)::text
FROM ins, LATERAL (SELECT ins.project_id::text || ' ' || ins.revision || ' ' || json_build_array(ins.at, ins.action,
	ins.actor, ins.actor_name, ins.project, ins.collection, ins.cluster, ins.record, ins.record_id, ins.version,
	ins.target, ins.request_id)::text AS full) n`

// notifiedEntry reads the entry of a notification's payload (auditSQL's
// JSON array) of the project with id, at revision rev.
func notifiedEntry(id string, rev int64, payload string) (*store.AuditEntry, error) {
	var f struct {
		at                                                                       time.Time
		action                                                                   string
		actor, actorName, project, collection, cluster, record, recordID, target *string
		version                                                                  *int64
		requestID                                                                *string
	}
	fields := []any{&f.at, &f.action, &f.actor, &f.actorName, &f.project, &f.collection, &f.cluster, &f.record,
		&f.recordID, &f.version, &f.target, &f.requestID}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(payload), &raw); err != nil {
		return nil, err
	}
	if len(raw) != len(fields) {
		return nil, fmt.Errorf("a notified entry of %d fields, want %d", len(raw), len(fields))
	}
	for i, r := range raw {
		if err := json.Unmarshal(r, fields[i]); err != nil {
			return nil, err
		}
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	e := &store.AuditEntry{ProjectID: id, Project: str(f.project), Revision: rev, Time: f.at.UTC(),
		Action: store.Action(f.action), Actor: str(f.actor), ActorName: str(f.actorName), Collection: str(f.collection),
		Cluster: str(f.cluster), Record: str(f.record), RecordID: str(f.recordID), Target: str(f.target),
		RequestID: str(f.requestID)}
	if f.version != nil {
		e.Version = *f.version
	}
	return e, nil
}

// audit writes e, made by c, as the next entry of the audit log of the
// project with projectID, in q's transaction, and returns it. It is the
// one way an entry is written: every change calls it in the transaction
// that makes the change. The entry is logged once the transaction
// commits.
func (q queryer) audit(ctx context.Context, projectID string, c store.Caller, e store.AuditEntry) (*store.AuditEntry, error) {
	e.ProjectID, e.Time = projectID, q.s.now()
	e.Stamp(c)
	row, err := q.row(ctx, auditSQL, projectID, e.Time, string(e.Action), null(e.Actor), null(e.ActorName),
		null(e.Collection), null(e.Cluster), null(e.Record), null(e.RecordID), nullVersion(e.Version),
		null(e.Target), null(e.RequestID))
	if err != nil {
		return nil, err
	}
	var notified string
	if err := row.Scan(&e.Revision, &e.Project, &notified); err != nil {
		return nil, notFoundOr(err, "project", projectID)
	}
	if q.written != nil {
		*q.written = append(*q.written, &e)
	}
	return &e, nil
}

// auditAllSQL writes entries as auditSQL writes one: the project's
// revision bumped by their number ($2), the entries numbered from the
// revision it had, in the order of the arrays.
const auditAllSQL = `WITH rev AS (
	UPDATE hds_projects SET revision = revision + $2::bigint WHERE id = $1 RETURNING revision - $2::bigint AS base, name
), ins AS (
	INSERT INTO hds_audit (project_id, revision, at, action, actor, actor_name, project,
		collection, cluster, record, record_id, version, target, request_id)
	SELECT $1, rev.base + u.n, $3, u.action, $4, $5, rev.name, u.collection, u.cluster, u.record, u.record_id, u.version, NULL, $6
	FROM rev, unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::uuid[], $12::bigint[])
		WITH ORDINALITY u(action, collection, cluster, record, record_id, version, n)
	RETURNING revision, project
)
SELECT revision, project, pg_notify('` + eventsChannel + `', $1::text || ' ' || revision)::text
FROM ins ORDER BY revision DESC LIMIT 1`

// auditAll writes entries, made by c, as the next entries of the audit
// log of the project with projectID, in order, in one statement (a
// batch's changes), as audit writes one.
func (q queryer) auditAll(ctx context.Context, projectID string, c store.Caller, entries []store.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	now := q.s.now()
	var actions, collections, clusters, records, recordIDs []sql.NullString
	var versions []sql.NullInt64
	for i := range entries {
		e := &entries[i]
		e.ProjectID, e.Time = projectID, now
		e.Stamp(c)
		actions = append(actions, sql.NullString{String: string(e.Action), Valid: true})
		for _, f := range []struct {
			to *[]sql.NullString
			v  string
		}{{&collections, e.Collection}, {&clusters, e.Cluster}, {&records, e.Record}, {&recordIDs, e.RecordID}} {
			*f.to = append(*f.to, sql.NullString{String: f.v, Valid: f.v != ""})
		}
		versions = append(versions, sql.NullInt64{Int64: e.Version, Valid: e.Version != 0})
	}
	row, err := q.row(ctx, auditAllSQL, projectID, len(entries), now, null(c.ID()), null(c.Name), null(c.RequestID),
		pq.Array(actions), pq.Array(collections), pq.Array(clusters), pq.Array(records), pq.Array(recordIDs), pq.Array(versions))
	if err != nil {
		return err
	}
	var last int64
	var project, notified string
	if err := row.Scan(&last, &project, &notified); err != nil {
		return notFoundOr(err, "project", projectID)
	}
	for i := range entries {
		e := &entries[i]
		e.Revision, e.Project = last-int64(len(entries)-1-i), project
		if q.written != nil {
			*q.written = append(*q.written, e)
		}
	}
	return nil
}

// null is s, or NULL when empty.
func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullVersion is v, or NULL when 0.
func nullVersion(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

// SetAuditLogger implements store.AuditLogSetter.
func (s *Store) SetAuditLogger(logger *slog.Logger) { s.logger.Store(logger) }

const auditColumns = `project_id, project, revision, at, action, actor, actor_name, collection, cluster, record,
	record_id, version, target, request_id`

func scanAudit(row interface{ Scan(...any) error }, extra ...any) (*store.AuditEntry, error) {
	var e store.AuditEntry
	var action string
	var actor, actorName, coll, clus, rec, recID, target, reqID sql.NullString
	var version sql.NullInt64
	err := row.Scan(append([]any{&e.ProjectID, &e.Project, &e.Revision, &e.Time, &action, &actor, &actorName,
		&coll, &clus, &rec, &recID, &version, &target, &reqID}, extra...)...)
	e.Time = e.Time.UTC()
	e.Action = store.Action(action)
	e.Actor, e.ActorName, e.Collection, e.Cluster = actor.String, actorName.String, coll.String, clus.String
	e.Record, e.RecordID, e.Version, e.Target, e.RequestID = rec.String, recID.String, version.Int64, target.String, reqID.String
	return &e, err
}

// FindAuditEntries implements store.AuditLog.
func (s *Store) FindAuditEntries(ctx context.Context, p store.Path, aq store.AuditQuery) ([]*store.AuditEntry, int, error) {
	return findWithin(ctx, s, p, levelProject, func(ctx context.Context, q queryer, r resolved) ([]*store.AuditEntry, int, error) {
		args := []any{r.project, aq.After}
		var where strings.Builder
		where.WriteString("project_id = $1 AND revision > $2")
		filter := func(cond string, arg any) {
			args = append(args, arg)
			where.WriteString(" AND " + strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
		}
		if aq.Action != "" {
			filter("action = $?", string(aq.Action))
		}
		if aq.Actor != "" {
			filter("actor = $?", aq.Actor)
		}
		// Entry times have microseconds; PostgreSQL would round a finer
		// bound to the nearest one, so the bounds are cut inwards first:
		// at >= since is at >= since rounded up, at <= until is at <=
		// until rounded down.
		if !aq.Since.IsZero() {
			filter("at >= $?", ceilMicro(aq.Since))
		}
		if !aq.Until.IsZero() {
			filter("at <= $?", aq.Until.Truncate(time.Microsecond))
		}
		// The total counts every match, also those a cursor (Before) skips:
		// an uncorrelated subquery, run once.
		counted, countArgs := where.String(), len(args)
		lq := store.ListQuery{NoCount: aq.NoCount}
		total := totalColumn(lq, "hds_audit", counted)
		if aq.Before == 0 && !aq.NoCount {
			total = `count(*) OVER ()`
		}
		if aq.Before > 0 {
			filter("revision < $?", aq.Before)
		}
		n := len(args)
		rows, err := q.rows(ctx, `SELECT `+auditColumns+`, `+total+` FROM hds_audit WHERE `+where.String()+
			` ORDER BY revision DESC LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2), append(args, aq.Limit, aq.Offset)...)
		if err != nil {
			return nil, 0, err
		}
		return scanList(rows, func(rows *sql.Rows, total *int) (*store.AuditEntry, error) { return scanAudit(rows, total) },
			counter(lq, func() (int, error) {
				return q.count(ctx, `SELECT count(*) FROM hds_audit WHERE `+counted, args[:countArgs]...)
			}))
	})
}

// RecordReveal implements store.AuditLog.
func (s *Store) RecordReveal(ctx context.Context, p store.Path, r *store.Record, through ...store.RevealedRecord) (err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	return s.inProjectTx(ctx, p, func(q queryer, res resolved) error {
		for _, e := range store.RevealEntries(p, r, through) {
			if _, err := q.audit(ctx, res.project, p.Caller, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// ceilMicro rounds t up to a whole microsecond.
func ceilMicro(t time.Time) time.Time {
	if c := t.Truncate(time.Microsecond); c.Before(t) {
		return c.Add(time.Microsecond)
	}
	return t
}

// changeRevision is the project's newest revision whose entry changes
// something (not credential.reveal), 0 when none: the revision of a
// comparison and what Batch.IfRevision is checked against
// (docs/api.md#compare-and-promote). The audit table's primary key,
// (project_id, revision), is read backwards from the newest entry and
// stops at the first that is not a reveal.
func (q queryer) changeRevision(ctx context.Context, projectID string) (int64, error) {
	return q.sum(ctx, `SELECT coalesce((SELECT revision FROM hds_audit WHERE project_id = $1 AND action <> 'credential.reveal'
		ORDER BY revision DESC LIMIT 1), 0)`, projectID)
}
