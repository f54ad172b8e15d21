package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hds-go/hds/store"
)

// The creates of a batch or an import are written set-based (issue 38):
// a run of creates is held, checked in Go as it comes, and written in a
// few multi-row INSERTs (records, then audit entries), one statement per
// bulkRows records instead of several per record. A statement is also
// what SQLite wraps in a statement journal and what makes the trigram
// index (hds_records_text, filled by a trigger) flush its pending terms
// to disk: per record, that was half of an import's time.
//
// The outcome is that of running the ops one by one (Apply's contract):
// an op the held run cannot take exactly as createRecord would (not a
// create, a cluster not yet resolved, a name or id already used in the
// batch, a quota reached, a name that is not valid) first writes the run
// held, then runs alone through tx.apply, which finds its error the way a
// single write does. Whether a held record's name (or id) exists in the
// database is checked at once for the whole run before it is written; a
// conflict runs that record alone, after the records before it, and so
// fails it with the error createRecord gives.

// bulkRows is the records one INSERT writes at most, bulkBytes about
// the bytes of values a run holds before it is written (a run of big
// values is written sooner: its statement's arguments stay bounded).
const (
	bulkRows  = 256
	bulkBytes = 4 << 20
)

// bulkLadder are the row counts of the INSERT statements a run is cut
// into (largest first): a few statement texts, each prepared once.
var bulkLadder = []int{bulkRows, 64, 16, 4, 1}

// heldCreate is a create of the run: its op's index, cluster, record as
// it will be written, and the bytes it counts.
type heldCreate struct {
	index int
	op    store.Op
	k     *clus
	r     *store.Record
	n     int64
	id    bool // the op gave the record's id
}

// bulkCreates is the run of creates of one Apply.
type bulkCreates struct {
	t    *tx
	pr   *proj
	c    store.Caller
	held []heldCreate
	size int
	// names holds cluster id + "/" + name of every record this run
	// created (held or written); ids the record ids, with their cluster.
	names map[string]bool
	ids   map[string]string
	// fresh tells, by cluster id, whether the cluster held no record
	// when the run first saw it and only the run's creates were written
	// to it since: names and ids then know all its records, and the
	// database is not asked.
	fresh map[string]bool
}

func newBulkCreates(t *tx, pr *proj, c store.Caller) *bulkCreates {
	return &bulkCreates{t: t, pr: pr, c: c, names: map[string]bool{}, ids: map[string]string{}, fresh: map[string]bool{}}
}

// add holds op, the op of index i, when it is a create the run takes,
// and returns its result; ok is false when the op is to run alone (after
// flush).
func (bc *bulkCreates) add(i int, op store.Op) (res store.OpResult, ok bool) {
	t := bc.t
	if op.Kind != store.OpCreate || op.New == nil || t.clusters == nil {
		return res, false
	}
	k, cached := t.clusters[[2]string{op.Collection, op.Cluster}]
	if !cached || store.ValidateName(op.Record) != nil {
		return res, false
	}
	if _, seen := bc.fresh[k.ID]; !seen {
		bc.fresh[k.ID] = k.records == 0
	}
	key := k.ID + "/" + op.Record
	if bc.names[key] {
		return res, false
	}
	if id, ok := store.CanonicalUUID(op.Record); ok && bc.ids[id] == k.ID {
		return res, false
	}
	in := op.New
	quotas := t.s.quotas.Load()
	n := size(op.Record, in.Value)
	if quotas.CheckRecords(k.records) != nil || quotas.CheckBytes(k.c.pr.bytes, n) != nil {
		return res, false
	}
	id := in.ID
	if id == "" {
		id = store.NewID()
	} else {
		canon, ok := store.CanonicalUUID(id)
		if !ok {
			return res, false
		}
		id = canon
		if _, used := bc.ids[id]; used {
			return res, false
		}
	}
	r := &store.Record{ID: id, Name: op.Record, Type: in.Type, Value: append(json.RawMessage(nil), in.Value...), Version: 1,
		CreatedAt: t.now, UpdatedAt: t.now, UpdatedBy: bc.c.ID()}
	bc.held = append(bc.held, heldCreate{index: i, op: op, k: k, r: r, n: n, id: in.ID != ""})
	bc.size += len(r.Value)
	bc.names[key] = true
	bc.ids[id] = k.ID
	k.records++
	k.c.pr.bytes += n
	t.dirty = k.c.pr
	return store.OpResult{Record: r, Created: true}, true
}

// full reports whether the run is to be written now.
func (bc *bulkCreates) full() bool { return len(bc.held) >= bulkRows || bc.size >= bulkBytes }

// ranAlone notes that an op ran alone: it may have written any record,
// so the database is asked about names and ids again.
func (bc *bulkCreates) ranAlone() {
	for id := range bc.fresh {
		bc.fresh[id] = false
	}
}

// flush writes the run held. A record whose name or id turns out to be
// used runs alone, after those before it: its error is the
// *store.OpError flush returns.
func (bc *bulkCreates) flush() error {
	held := bc.held
	bc.held, bc.size = bc.held[:0], 0
	if len(held) == 0 {
		return nil
	}
	first, err := bc.conflict(held)
	if err != nil {
		return err
	}
	bc.t.advance()
	if first < 0 {
		return bc.write(held)
	}
	// Give back what the conflicting record and those after it counted,
	// write those before it, and run it alone as a single create.
	for _, h := range held[first:] {
		h.k.records--
		h.k.c.pr.bytes -= h.n
	}
	if err := bc.write(held[:first]); err != nil {
		return err
	}
	h := held[first]
	_, err = bc.t.createRecord(h.k, h.op.Record, h.op.New, bc.c)
	if err == nil {
		err = fmt.Errorf("sqlite: the create of %q was held back for a conflict it did not have", h.op.Record)
	}
	return &store.OpError{Index: h.index, Err: err}
}

// conflict returns the position in held of the first record whose name,
// name as an id, or given id is already used in the database, or -1.
func (bc *bulkCreates) conflict(held []heldCreate) (int, error) {
	used := map[int]bool{}
	byCluster := map[*clus][]int{}
	var given []int
	for i, h := range held {
		if !bc.fresh[h.k.ID] {
			byCluster[h.k] = append(byCluster[h.k], i)
		}
		if h.id {
			given = append(given, i)
		}
	}
	for k, idx := range byCluster {
		args := []any{k.ID}
		var uuids []any
		at := map[string]int{}
		for _, i := range idx {
			name := held[i].op.Record
			args = append(args, name)
			at[name] = i
			if id, ok := store.CanonicalUUID(name); ok {
				uuids = append(uuids, id)
				at["id:"+id] = i
			}
		}
		q := `SELECT name FROM hds_records WHERE cluster_id = ? AND name IN (` + placeholders(len(idx)) + `)`
		if len(uuids) > 0 {
			q += ` UNION ALL SELECT 'id:' || id FROM hds_records WHERE cluster_id = ? AND id IN (` + placeholders(len(uuids)) + `)`
			args = append(append(args, k.ID), uuids...)
		}
		if err := bc.found(q, args, func(s string) { used[at[s]] = true }); err != nil {
			return 0, err
		}
	}
	if len(given) > 0 {
		args := make([]any, len(given))
		at := map[string]int{}
		for j, i := range given {
			args[j] = held[i].r.ID
			at[held[i].r.ID] = i
		}
		q := `SELECT id FROM hds_records WHERE id IN (` + placeholders(len(given)) + `)`
		if err := bc.found(q, args, func(s string) { used[at[s]] = true }); err != nil {
			return 0, err
		}
	}
	first := -1
	for i := range used {
		if first < 0 || i < first {
			first = i
		}
	}
	return first, nil
}

// found calls f with the text each row of query returns. The statement
// is not prepared: its text varies with the run.
func (bc *bulkCreates) found(query string, args []any, f func(string)) error {
	t := bc.t
	rows, err := t.QueryContext(t.stmtContext(), query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		f(s)
	}
	return rows.Err()
}

// recordRow is the placeholders of a row of hds_records the INSERTs of
// write fill.
const recordRow = `(?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// auditRow is the placeholders of a row of hds_audit.
const auditRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// write inserts the records held (counted already in their clusters and
// project in memory), adds them to their clusters' counters and writes
// their audit entries, in order.
func (bc *bulkCreates) write(held []heldCreate) error {
	if len(held) == 0 {
		return nil
	}
	t := bc.t
	var seq int64 // seq numbers a record in hds_records_text (migration 0003)
	if err := t.row(`SELECT coalesce(max(seq), 0) FROM hds_records`).Scan(&seq); err != nil {
		return err
	}
	args := make([]any, 0, 15*min(len(held), bulkRows))
	counts := map[*clus]int{}
	var clusters []*clus
	err := ladder(len(held), func(from, to int) error {
		args = args[:0]
		for _, h := range held[from:to] {
			r := h.r
			seq++
			vk, rk, vtext, vlower := recordKeys(r.Type, r.Value)
			args = append(args, r.ID, h.k.ID, r.Name, lower(r.Name), string(r.Type), string(r.Value), vtext, vlower, vk, rk, h.n,
				micros(t.now), micros(t.now), r.UpdatedBy, seq)
			if counts[h.k] == 0 {
				clusters = append(clusters, h.k)
			}
			counts[h.k]++
		}
		_, err := t.exec(`INSERT INTO hds_records (id, cluster_id, name, name_lower, type, value, version, vtext, vtext_lower,
			vkey, rkey, bytes, created_at, updated_at, updated_by, seq) VALUES `+repeatRow(recordRow, to-from), args...)
		t.advance() // a statement done is progress (writeFor's deadline)
		return err
	})
	if err != nil {
		return err
	}
	for _, k := range clusters {
		if _, err := t.exec(`UPDATE hds_clusters SET records = records + ? WHERE id = ?`, counts[k], k.ID); err != nil {
			return err
		}
	}
	return bc.audit(held)
}

// audit writes the record.create entries of held, in order, as t.audit
// writes one (the project's revision moves on in memory: Apply writes
// it once).
func (bc *bulkCreates) audit(held []heldCreate) error {
	t, pr := bc.t, bc.pr
	if !t.deferProject {
		return errors.New("sqlite: a set-based create outside a batch")
	}
	entries := make([]*store.AuditEntry, len(held))
	for i, h := range held {
		pr.Revision++
		e := store.AuditEntry{Action: store.ActionRecordCreate, Collection: h.k.c.Name, Cluster: h.k.Name,
			Record: h.r.Name, RecordID: h.r.ID, Version: 1,
			ProjectID: pr.ID, Project: pr.Name, Revision: pr.Revision, Time: t.now}
		e.Stamp(bc.c)
		entries[i] = &e
	}
	t.dirty = pr
	args := make([]any, 0, 14*min(len(held), bulkRows))
	err := ladder(len(entries), func(from, to int) error {
		args = args[:0]
		for _, e := range entries[from:to] {
			args = append(args, e.ProjectID, e.Revision, micros(e.Time), string(e.Action), nullString(e.Actor),
				nullString(e.ActorName), e.Project, nullString(e.Collection), nullString(e.Cluster), nullString(e.Record),
				nullString(e.RecordID), e.Version, nullString(e.Target), nullString(e.RequestID))
		}
		_, err := t.exec(`INSERT INTO hds_audit (project_id, revision, at, action, actor, actor_name, project,
			collection, cluster, record, record_id, version, target, request_id) VALUES `+repeatRow(auditRow, to-from), args...)
		t.advance() // a statement done is progress (writeFor's deadline)
		return err
	})
	if err != nil {
		return err
	}
	for _, e := range entries {
		t.written = append(t.written, e)
		if err := t.outbox(e); err != nil {
			return err
		}
	}
	return nil
}

// ladder calls write with consecutive ranges [from, to) covering n
// items, each of a size of bulkLadder.
func ladder(n int, write func(from, to int) error) error {
	from := 0
	for _, size := range bulkLadder {
		for n-from >= size {
			if err := write(from, from+size); err != nil {
				return err
			}
			from += size
		}
	}
	return nil
}

// repeatRow is n copies of row, separated by commas.
func repeatRow(row string, n int) string {
	return strings.Repeat(row+", ", n-1) + row
}

// placeholders is n "?" separated by commas.
func placeholders(n int) string {
	return strings.Repeat("?, ", n-1) + "?"
}
