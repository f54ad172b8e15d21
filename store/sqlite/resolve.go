package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/hds-go/hds/store"
)

// Path resolution in one statement. A path (project, collection,
// cluster and, for a record, the record) is found by one statement of
// LEFT JOINs, each one primary-key or unique-index probe: the project by
// name with the caller's member role, the collection, the cluster and
// the record (by id first, when the name is one, then by name). Its
// columns of a level are NULL when the level, or one above it, does not
// exist, and the errors are then returned in the order of the Store
// contract: the caller's deferred session check, the project, the
// caller's access (store.Path.Check), then each missing level below.
//
// The deferred session check (store.SessionChecker): when a Caller's
// Session is due, the statement also reads the user and whether the
// session is live (the user active, the session not ended, begun in the
// user's current generation), from a one-row base, so that it answers a
// row even when the project does not exist. The session is judged first.

// depth is how far down a path resolve goes.
type depth int

// The depths of resolve.
const (
	toProject depth = iota
	toCollection
	toCluster
	toRecord
)

// resolveSQL are the statements of resolve, by depth and by whether they
// check a deferred session.
var resolveSQL = func() (out [toRecord + 1][2]string) {
	for d := toProject; d <= toRecord; d++ {
		for session := range 2 {
			out[d][session] = buildResolveSQL(d, session == 1)
		}
	}
	return out
}()

// buildResolveSQL is the statement that resolves a path to d, with the
// session columns first when session. Its parameters, in order: (with
// session) the session's generation, its id and the user id; the
// project's name, the member's user id, then the collection's name, the
// cluster's name, the record's id (NULL when the name is no UUID) and
// name as d reaches them.
func buildResolveSQL(d depth, session bool) string {
	cols := `p.id, p.name, p.owner_id, p.created_at, p.updated_at, p.revision, p.bytes, m.role`
	from := ` hds_projects p LEFT JOIN hds_members m ON m.project_id = p.id AND m.user_id = ?`
	if d >= toCollection {
		cols += `, c.id, c.name, c.created_at, c.updated_at`
		from += ` LEFT JOIN hds_collections c ON c.project_id = p.id AND c.name = ?`
	}
	if d >= toCluster {
		cols += `, k.id, k.name, k.created_at, k.updated_at, k.records, k.state`
		from += ` LEFT JOIN hds_clusters k ON k.collection_id = c.id AND k.name = ?`
	}
	if d >= toRecord {
		cols += `, ` + recordCols
		// By id first (hds_records_cluster_id), then by name (the
		// unique index): coalesce stops at the first that finds one.
		from += ` LEFT JOIN hds_records r ON r.rowid = coalesce(
			(SELECT x.rowid FROM hds_records x WHERE x.cluster_id = k.id AND x.id = ?),
			(SELECT x.rowid FROM hds_records x WHERE x.cluster_id = k.id AND x.name = ?))`
	}
	if !session {
		return `SELECT ` + cols + ` FROM` + from + ` WHERE p.name = ?`
	}
	// The project joins the one-row base by its name: the parameter
	// moves before the member's.
	from = ` (SELECT 1) one LEFT JOIN hds_users u ON u.id = ? LEFT JOIN hds_projects p ON p.name = ?` +
		from[len(` hds_projects p`):]
	return `SELECT u.username, u.active AND u.session_generation <= ?
		AND NOT EXISTS (SELECT 1 FROM hds_ended_sessions e WHERE e.user_id = u.id AND e.session_id = ?), ` + cols + ` FROM` + from
}

// resolved is what resolve found: each level is nil when it, or one
// above it, does not exist (and resolve returned its error).
type resolved struct {
	pr *proj
	c  *coll
	k  *clus
	r  *store.Record
}

// resolveRow holds the columns of a resolve statement, scanned into
// nullable values.
type resolveRow struct {
	username                            sql.NullString
	live                                sql.NullBool
	pID, pName, pOwner, role            sql.NullString
	pCreated, pUpdated, revision, bytes sql.NullInt64
	cID, cName                          sql.NullString
	cCreated, cUpdated                  sql.NullInt64
	kID, kName                          sql.NullString
	kCreated, kUpdated, records, state  sql.NullInt64
	rID, rName, rType, rValue, rUpdBy   sql.NullString
	rVersion, rCreated, rUpdated        sql.NullInt64
	dest                                [38]any
}

// targets returns the scan targets of a resolve statement of d.
func (w *resolveRow) targets(d depth, session bool) []any {
	dest := w.dest[:0]
	if session {
		dest = append(dest, &w.username, &w.live)
	}
	dest = append(dest, &w.pID, &w.pName, &w.pOwner, &w.pCreated, &w.pUpdated, &w.revision, &w.bytes, &w.role)
	if d >= toCollection {
		dest = append(dest, &w.cID, &w.cName, &w.cCreated, &w.cUpdated)
	}
	if d >= toCluster {
		dest = append(dest, &w.kID, &w.kName, &w.kCreated, &w.kUpdated, &w.records, &w.state)
	}
	if d >= toRecord {
		dest = append(dest, &w.rID, &w.rName, &w.rType, &w.rValue, &w.rVersion, &w.rCreated, &w.rUpdated, &w.rUpdBy)
	}
	return dest
}

// resolve finds p down to d in one statement and checks it in the order
// of the Store contract: the caller's deferred session, the project, the
// caller's access, then each level below (a missing record is a
// *store.NotFoundError too).
func (t *tx) resolve(p store.Path, d depth) (resolved, error) {
	check, err := p.Caller.Session.DueFor(p.Caller.UserID)
	if err != nil {
		return resolved{}, err
	}
	member := ""
	if p.Caller.TokenID == "" {
		member = p.Caller.UserID
	}
	// The parameters in the order of the statement (buildResolveSQL):
	// with the one-row base of a session check, the project's name comes
	// before the member's; without, it is the WHERE's, the last.
	args := make([]any, 0, 10)
	session := 0
	if check != nil {
		session = 1
		args = append(args, check.Generation, check.SessionID, check.UserID, p.Project)
	}
	args = append(args, member)
	if d >= toCollection {
		args = append(args, p.Collection)
	}
	if d >= toCluster {
		args = append(args, p.Cluster)
	}
	if d >= toRecord {
		var id any
		if u, ok := store.CanonicalUUID(p.Record); ok {
			id = u
		}
		args = append(args, id, p.Record)
	}
	if check == nil {
		args = append(args, p.Project)
	}
	var w resolveRow
	err = t.row(resolveSQL[d][session], args...).Scan(w.targets(d, check != nil)...)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return resolved{}, err
	}
	if check != nil {
		if err != nil || !w.live.Valid || !w.live.Bool {
			return resolved{}, check.Fail()
		}
		check.Pass(w.username.String)
	}
	return w.resolved(p, d)
}

// resolved turns a row of resolve into its levels, or the error of the
// first that is missing or refused.
func (w *resolveRow) resolved(p store.Path, d depth) (resolved, error) {
	var out resolved
	found := w.pID.Valid
	var standing store.Standing
	if found {
		standing = store.Standing{ProjectID: w.pID.String, OwnerID: w.pOwner.String, Member: store.Role(w.role.String)}
	}
	if err := p.Check(found, standing); err != nil {
		return out, err
	}
	out.pr = &proj{Project: store.Project{ID: w.pID.String, Name: w.pName.String, OwnerID: w.pOwner.String,
		CreatedAt: fromMicros(w.pCreated.Int64), UpdatedAt: fromMicros(w.pUpdated.Int64), Revision: w.revision.Int64},
		bytes: w.bytes.Int64, standing: standing}
	if d < toCollection {
		return out, nil
	}
	if !w.cID.Valid {
		return resolved{}, &store.NotFoundError{Kind: "collection", Name: p.Collection}
	}
	out.c = &coll{Collection: store.Collection{ID: w.cID.String, Name: w.cName.String, Project: out.pr.Name,
		CreatedAt: fromMicros(w.cCreated.Int64), UpdatedAt: fromMicros(w.cUpdated.Int64)}, pr: out.pr}
	if d < toCluster {
		return out, nil
	}
	if !w.kID.Valid {
		return resolved{}, &store.NotFoundError{Kind: "cluster", Name: p.Cluster}
	}
	out.k = &clus{Cluster: store.Cluster{ID: w.kID.String, Name: w.kName.String, Project: out.pr.Name,
		Collection: out.c.Name, CreatedAt: fromMicros(w.kCreated.Int64), UpdatedAt: fromMicros(w.kUpdated.Int64),
		RecordCount: int(w.records.Int64), State: w.state.Int64}, c: out.c, records: int(w.records.Int64)}
	if d < toRecord {
		return out, nil
	}
	if !w.rID.Valid {
		return resolved{}, &store.NotFoundError{Kind: "record", Name: p.Record}
	}
	out.r = &store.Record{ID: w.rID.String, Name: w.rName.String, Type: store.DataType(w.rType.String),
		Value: json.RawMessage(w.rValue.String), Version: w.rVersion.Int64, CreatedAt: fromMicros(w.rCreated.Int64),
		UpdatedAt: fromMicros(w.rUpdated.Int64), UpdatedBy: w.rUpdBy.String}
	return out, nil
}

var _ store.SessionChecker = (*Store)(nil)

// ChecksSessions implements store.SessionChecker: the store checks the
// sessions it keeps itself (the same *Store as the user directory), in
// the statement that resolves a path.
func (s *Store) ChecksSessions(sessions store.Sessions) bool {
	other, ok := sessions.(*Store)
	return ok && other == s
}
