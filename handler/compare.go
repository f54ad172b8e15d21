package handler

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/store"
)

// GET P/diff and POST P/promote (docs/api.md#compare-and-promote): two
// collections, or two clusters, of a project compared record by record in
// one snapshot (store.Compare), and B made to hold what A holds in one
// store.Store.Apply conditioned on that snapshot's revision.

// The changes of a comparison.
const (
	changeAdded     = "added"
	changeRemoved   = "removed"
	changeChanged   = "changed"
	changeUnchanged = "unchanged"
)

// parseSides reads the two sides of a comparison: both COLLECTION or both
// COLLECTION/CLUSTER, and not the same.
func parseSides(from, to *string) (store.Side, store.Side, error) {
	if from == nil || to == nil || *from == "" || *to == "" {
		return store.Side{}, store.Side{}, envelope.BadRequest("from and to are required: two collections (COLLECTION) or two clusters (COLLECTION/CLUSTER)")
	}
	a, err := parseSide("from", *from)
	if err != nil {
		return a, a, err
	}
	b, err := parseSide("to", *to)
	switch {
	case err != nil:
		return a, b, err
	case (a.Cluster == "") != (b.Cluster == ""):
		return a, b, envelope.BadRequest("from and to must be two collections or two clusters, not one of each")
	case a == b:
		return a, b, envelope.BadRequest("from and to must differ")
	}
	return a, b, nil
}

// parseSidesOrSnapshot reads the sides of a comparison whose from side may
// be a snapshot (docs/api.md#snapshots-and-rollback-v13): from and to
// as parseSides reads them, or a snapshot's name and to (then from is
// left zero, for the caller to resolve); both from and a snapshot, or
// neither, is 400.
func parseSidesOrSnapshot(from, snapshot, to *string) (store.Side, store.Side, error) {
	switch {
	case snapshot == nil:
		return parseSides(from, to)
	case from != nil:
		return store.Side{}, store.Side{}, envelope.BadRequest("give from or from_snapshot, not both")
	case *snapshot == "":
		return store.Side{}, store.Side{}, envelope.BadRequest("from_snapshot must name a snapshot")
	case to == nil || *to == "":
		return store.Side{}, store.Side{}, envelope.BadRequest("to is required: a collection (COLLECTION) or a cluster (COLLECTION/CLUSTER)")
	}
	b, err := parseSide("to", *to)
	return store.Side{}, b, err
}

// parseSide reads COLLECTION or COLLECTION/CLUSTER.
func parseSide(param, v string) (store.Side, error) {
	c, k, isCluster := strings.Cut(v, "/")
	if c == "" || isCluster && (k == "" || strings.Contains(k, "/")) {
		return store.Side{}, envelope.BadRequest(param + " must be COLLECTION or COLLECTION/CLUSTER")
	}
	return store.Side{Collection: c, Cluster: k}, nil
}

// queryParam returns the parameter name of query, or nil when it is not
// given.
func queryParam(query url.Values, name string) *string {
	if !query.Has(name) {
		return nil
	}
	v := query.Get(name)
	return &v
}

// change says how a pair of a comparison differs: added (only in A),
// removed (only in B), changed (type or value) or unchanged. Credentials
// of one type are compared on their plain values.
func (rec records) change(pr store.Pair) (string, error) {
	switch {
	case pr.To == nil:
		return changeAdded, nil
	case pr.From == nil:
		return changeRemoved, nil
	case pr.From.Type != pr.To.Type:
		return changeChanged, nil
	case !pr.From.Type.IsCredential():
		if string(pr.From.Value) == string(pr.To.Value) { // both canonical
			return changeUnchanged, nil
		}
		return changeChanged, nil
	case rec.creds.ring == nil:
		return "", errNoCredentialKey
	}
	a, err := rec.creds.visible(pr.From, true)
	if err != nil {
		return "", err
	}
	b, err := rec.creds.visible(pr.To, true)
	if err != nil {
		return "", err
	}
	if sameValue(pr.From.Type, a, b) {
		return changeUnchanged, nil
	}
	return changeChanged, nil
}

// errStop ends a comparison at its first step: the sides exist.
var errStop = errors.New("stop")

// errClientGone ends a comparison whose client went away.
var errClientGone = errors.New("the client went away")

// handleDiff serves GET P/diff?from=A&to=B&unchanged=&reveal=: the items
// are written as the store's snapshot is read.
func (rec records) handleDiff() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		reveal, err := parseReveal(query)
		var unchanged bool
		if err == nil {
			unchanged, err = parseBool(query, "unchanged")
		}
		var from, to store.Side
		snapshot := queryParam(query, "from_snapshot")
		if err == nil {
			from, to, err = parseSidesOrSnapshot(queryParam(query, "from"), snapshot, queryParam(query, "to"))
		}
		if err != nil {
			rec.rejectRevealing(w, r, query, err)
			return
		}
		p := rec.revealing(pathOf(r), reveal)
		if snapshot != nil {
			if from, err = rec.snapshotSide(r, p, *snapshot, to); err != nil {
				rec.rejectRevealing(w, r, query, err)
				return
			}
		}
		if reveal && rec.audit != nil {
			// The reveal's entry is written only once the sides are known
			// to exist, before the snapshot is taken; the revision
			// answered does not count it (a reveal changes nothing: a
			// promote with that if_revision applies).
			err := store.Compare(r.Context(), rec.store, p, from, to, func(store.Pair) error { return errStop })
			if errors.Is(err, errStop) {
				err = rec.revealed(r, reveal, p, nil)
			}
			if err != nil {
				envelope.Error(w, r, err)
				return
			}
		}
		dw := diffWriter{rec: rec, from: from, to: to, reveal: reveal, unchanged: unchanged}
		err = store.Compare(r.Context(), rec.store, p, from, to, func(pr store.Pair) error { return dw.visit(w, r, pr) })
		switch {
		case err == nil:
			dw.finish()
		case dw.out == nil:
			envelope.Error(w, r, err)
		case errors.Is(err, errClientGone):
			dw.out.release()
		default:
			dw.out.fail(err)
		}
	}
}

// parseBool reads an optional true or false parameter.
func parseBool(query url.Values, name string) (bool, error) {
	switch v := query.Get(name); {
	case !query.Has(name), v == "false":
		return false, nil
	case v == "true":
		return true, nil
	}
	return false, envelope.BadRequest(name + " must be true or false")
}

// diffWriter writes the answer of GET P/diff pair by pair.
type diffWriter struct {
	rec       records
	from, to  store.Side
	reveal    bool
	unchanged bool
	out       *stream
	first     bool
	counts    map[string]int
}

// visit writes the head (at the revision, the first step) or one item.
func (dw *diffWriter) visit(w http.ResponseWriter, r *http.Request, pr store.Pair) error {
	if dw.out == nil {
		dw.out = newStream(w, r, http.StatusOK)
		dw.counts = map[string]int{}
		b := append(dw.out.b, `{"from":`...)
		b = jsonstr.Append(b, dw.from.String())
		b = append(b, `,"to":`...)
		b = jsonstr.Append(b, dw.to.String())
		b = append(b, `,"revision":`...)
		b = strconv.AppendInt(b, pr.Revision, 10)
		dw.out.b = append(b, `,"items":[`...)
		dw.first = true
		return nil
	}
	c, err := dw.rec.change(pr)
	if err != nil {
		return err
	}
	dw.counts[c]++
	if c == changeUnchanged && !dw.unchanged {
		return nil
	}
	b := dw.out.b
	if !dw.first {
		b = append(b, ',')
	}
	dw.first = false
	b = append(b, `{"cluster":`...)
	b = jsonstr.Append(b, pr.Cluster)
	b = append(b, `,"record":`...)
	b = jsonstr.Append(b, pr.Name)
	b = append(b, `,"change":"`...)
	b = append(b, c...)
	b = append(b, `","from":`...)
	if b, err = dw.side(b, pr.From); err != nil {
		return err
	}
	b = append(b, `,"to":`...)
	if b, err = dw.side(b, pr.To); err != nil {
		return err
	}
	dw.out.b = append(b, '}')
	if !dw.out.more() {
		return errClientGone
	}
	return nil
}

// side appends one side of an item: {"type", "value", "version"} or null.
func (dw *diffWriter) side(b []byte, rec *store.Record) ([]byte, error) {
	if rec == nil {
		return append(b, "null"...), nil
	}
	v, err := dw.rec.creds.visible(rec, dw.reveal)
	if err != nil {
		return b, err
	}
	b = append(b, `{"type":`...)
	b = jsonstr.Append(b, string(rec.Type))
	b = append(b, `,"value":`...)
	b = append(b, v...)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, rec.Version, 10)
	return append(b, '}'), nil
}

// finish writes the summary and ends the answer.
func (dw *diffWriter) finish() {
	b := append(dw.out.b, `],"summary":{`...)
	for i, c := range []string{changeAdded, changeRemoved, changeChanged, changeUnchanged} {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, c...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(dw.counts[c]), 10)
	}
	dw.out.b = append(b, "}}"...)
	dw.out.end("OK")
}

// promoteBody is the body of POST P/promote.
type promoteBody struct {
	From *string `json:"from"`
	// FromSnapshot, instead of From, promotes a snapshot
	// (docs/api.md#snapshots-and-rollback-v13).
	FromSnapshot *string  `json:"from_snapshot"`
	To           *string  `json:"to"`
	Records      []string `json:"records"`
	Delete       bool     `json:"delete"`
	DryRun       bool     `json:"dry_run"`
	IfRevision   *int64   `json:"if_revision"`
}

// promoteChange is one entry of a promote's change list.
type promoteChange struct {
	Action     string `json:"action"`
	Collection string `json:"collection"`
	Cluster    string `json:"cluster"`
	Record     string `json:"record"`
}

// promoteResult is the answer of POST P/promote, shaped as an import's
// (docs/api.md#batch-export-and-import).
type promoteResult struct {
	Created   int             `json:"created"`
	Updated   int             `json:"updated"`
	Deleted   int             `json:"deleted"`
	Unchanged int             `json:"unchanged"`
	Changes   []promoteChange `json:"changes"`
	// Revision is the project's audit revision after the promote: the
	// newest entry it wrote, or, when it wrote none (a dry run, nothing
	// to change), the revision of the snapshot it was planned on.
	Revision int64 `json:"revision"`
	// Snapshot names the automatic snapshot the promote took
	// (docs/api.md#snapshots-and-rollback-v13); nil for a dry run,
	// when nothing changed, or when none is kept.
	Snapshot *string `json:"snapshot"`
}

// handlePromote serves POST P/promote: the comparison is planned into
// ops (planPromote) and applied in one store.Store.Apply whose IfRevision
// is the snapshot's, so that exactly the comparison read is applied, or
// nothing: a project whose revision moved on is 412. Without if_revision,
// the ops alone are conditioned on what they change, and a promote that
// raced with a write to them is planned again (replan.go).
func (rec records) handlePromote() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		var body promoteBody
		present, err := envelope.Decode(r, &body)
		if err == nil && !present {
			err = envelope.BadRequest(`the body must be {"from", "to"} with two collections or two clusters`)
		}
		var from, to store.Side
		var names map[string]bool
		if err == nil {
			from, to, names, err = checkPromote(&body)
		}
		if err != nil {
			reject(w, r, rec.store, err)
			return
		}
		p := pathOf(r)
		if body.FromSnapshot != nil {
			if from, err = rec.snapshotSide(r, p, *body.FromSnapshot, to); err == nil && names != nil && to.Cluster == "" {
				err = envelope.BadRequest("records narrows a promote between two clusters only")
			}
			if err != nil {
				reject(w, r, rec.store, err)
				return
			}
		}
		var res promoteResult
		err = untilApplied(r.Context(), func() (bool, error) {
			var ops []store.Op
			var revision int64
			var err error
			res, ops, revision, err = rec.planPromote(r, p, from, to, names, body.Delete)
			if err == nil && from.Snapshot != "" && to.Cluster == "" {
				var ensure []store.Op
				ensure, err = rec.emptyClustersToCreate(r, p, from.Snapshot, to.Collection)
				ops = append(ensure, ops...)
			}
			if err == nil && body.IfRevision != nil && *body.IfRevision != revision {
				err = &store.RevisionError{Revision: revision}
			}
			if err != nil || len(ops) == 0 {
				return false, err
			}
			var ifRevision int64
			if body.IfRevision != nil {
				ifRevision = revision
			}
			var auto *store.AutoSnapshot
			if _, ok := rec.store.(store.Snapshots); ok && rec.keepAutomatic > 0 {
				auto = &store.AutoSnapshot{Side: to, Keep: rec.keepAutomatic}
			}
			applied, err := rec.store.Apply(r.Context(), p, store.Batch{Ops: ops, CreateParents: true, DryRun: body.DryRun,
				IfRevision: ifRevision, Write: store.Write{MaxVersions: rec.pre.maxVersions}, Snapshot: auto})
			if err == nil && !body.DryRun {
				res.Revision = applied[0].Revision
				if name := applied[0].Snapshot; name != "" {
					res.Snapshot = &name
				}
			}
			var oe *store.OpError
			if errors.As(err, &oe) {
				err = oe.Err // the ops are the plan's, not the client's
			}
			return body.IfRevision == nil && raced(err), err
		})
		extendWriteDeadline(w, r) // a big promote may take longer than the write timeout to apply
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		message := "Promote applied"
		if body.DryRun {
			message = "Dry run: nothing changed"
		}
		envelope.OK(w, http.StatusOK, res, message)
	}
}

// checkPromote checks the body of a promote: its sides, records only for
// a pair of clusters, a positive if_revision.
func checkPromote(body *promoteBody) (store.Side, store.Side, map[string]bool, error) {
	from, to, err := parseSidesOrSnapshot(body.From, body.FromSnapshot, body.To)
	if err != nil {
		return from, to, nil, err
	}
	if body.IfRevision != nil && *body.IfRevision < 1 {
		return from, to, nil, envelope.BadRequest("if_revision must be a positive integer")
	}
	if body.Records == nil {
		return from, to, nil, nil
	}
	if to.Cluster == "" {
		return from, to, nil, envelope.BadRequest("records narrows a promote between two clusters only")
	}
	names := make(map[string]bool, len(body.Records))
	for _, n := range body.Records {
		names[n] = true
	}
	return from, to, names, nil
}

// planPromote compares from with to in one snapshot: the result the
// promote has, the ops that make it so (the deletes first, then the
// creates and updates, each in the comparison's order), and the snapshot's revision (the
// result's, which applying the ops replaces). names, when not nil, are the
// only records it considers.
func (rec records) planPromote(r *http.Request, p store.Path, from, to store.Side, names map[string]bool,
	deletes bool) (promoteResult, []store.Op, int64, error) {
	res := promoteResult{Changes: []promoteChange{}}
	var deleteOps, ops []store.Op
	first := true
	err := store.Compare(r.Context(), rec.store, p, from, to, func(pr store.Pair) error {
		if first {
			first = false
			res.Revision = pr.Revision
			return nil
		}
		if names != nil && !names[pr.Name] {
			return nil
		}
		c, err := rec.change(pr)
		if err != nil {
			return err
		}
		cluster := pr.Cluster
		if to.Cluster != "" {
			cluster = to.Cluster
		}
		op := store.Op{Collection: to.Collection, Cluster: cluster}
		action := ""
		switch {
		case c == changeUnchanged:
			res.Unchanged++
			return nil
		case c == changeRemoved && !deletes:
			return nil
		case c == changeRemoved:
			action, res.Deleted = "delete", res.Deleted+1
			op.Kind, op.Record, op.IfMatch = store.OpDelete, pr.To.ID, []string{pr.To.ETag()}
		case c == changeAdded:
			id := store.NewID()
			v, err := rec.copySealed(pr.From, id)
			if err != nil {
				return err
			}
			action, res.Created = "create", res.Created+1
			op.Kind, op.Record, op.New = store.OpCreate, pr.Name, &store.Record{ID: id, Type: pr.From.Type, Value: v}
		default:
			v, err := rec.copySealed(pr.From, pr.To.ID)
			if err != nil {
				return err
			}
			action, res.Updated = "update", res.Updated+1
			typ := pr.From.Type
			op.Kind, op.Record, op.IfMatch = store.OpUpdate, pr.To.ID, []string{pr.To.ETag()}
			op.Update = func(r *store.Record) error {
				r.Type, r.Value = typ, v
				return nil
			}
		}
		res.Changes = append(res.Changes, promoteChange{Action: action, Collection: to.Collection, Cluster: cluster, Record: pr.Name})
		if op.Kind == store.OpDelete {
			deleteOps = append(deleteOps, op)
		} else {
			ops = append(ops, op)
		}
		return nil
	})
	// Deletes go first, as an import's do, so that what they free counts
	// for the quotas of what follows.
	return res, append(deleteOps, ops...), res.Revision, err
}

// copySealed returns the value of r as the record with id must hold it:
// as it is, or for a credential sealed again to id (a sealed value is
// bound to its record). The plain text goes no further than this.
func (rec records) copySealed(r *store.Record, id string) ([]byte, error) {
	if !r.Type.IsCredential() {
		return r.Value, nil
	}
	if rec.creds.ring == nil {
		return nil, errNoCredentialKey
	}
	plain, err := rec.creds.visible(r, true)
	if err != nil {
		return nil, err
	}
	return rec.creds.seal(r.Type, id, plain)
}

// emptyClustersToCreate returns an ensure-cluster op for each empty
// cluster the snapshot name holds that the collection lacks: a rollback
// creates the clusters the snapshot holds and the target lacks
// (docs/api.md#snapshots-and-rollback-v13), and those holding records
// are created by the records' own ops. A promote that needs none of them
// and changes no record changes nothing.
func (rec records) emptyClustersToCreate(r *http.Request, p store.Path, name, collection string) ([]store.Op, error) {
	sn, ok := rec.store.(store.Snapshots)
	if !ok {
		return nil, nil
	}
	var empty []string
	err := sn.SnapshotRecords(r.Context(), p, name, func(cluster string, got *store.Record) error {
		if got == nil {
			empty = append(empty, cluster)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	for _, cluster := range empty {
		at := p
		at.Collection, at.Cluster = collection, cluster
		_, err := rec.store.FindCluster(r.Context(), at, false)
		switch {
		case errors.Is(err, store.ErrNotFound):
			ops = append(ops, store.Op{Kind: store.OpEnsureCluster, Collection: collection, Cluster: cluster})
		case err != nil:
			return nil, err
		}
	}
	return ops, nil
}
