package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strconv"

	"github.com/lib/pq"

	"github.com/hds-go/hds/store"
)

// Streaming (store.Streamer). A page is read with every value of at most
// inlineBytes in it; larger values are left out of it (their size is read
// without reading them) and fetched by id when the caller reaches them,
// in batches of at most batchBytes (at least one value). Each statement
// runs on its own, with the store's deadline, and its rows are read to
// the end before anything is yielded: no connection is held while the
// caller writes to its client. Cluster data is read in pages of
// clusterPageRows records by name (keyset), so that a cluster of any size
// costs a page at a time.
const (
	inlineBytes     = 4 << 10
	batchBytes      = 1 << 20
	clusterPageRows = 500
)

var _ store.Streamer = (*Store)(nil)

// inlineValue returns the value column of a page (table alias t): the
// value when it is small, else NULL; its size follows it.
func inlineValue(t string) string {
	return `CASE WHEN octet_length(` + t + `.value) <= ` + strconv.Itoa(inlineBytes) + ` THEN ` + t + `.value END, octet_length(` + t + `.value)`
}

// nullable scans a text column that may be NULL into a value, copying
// it once.
type nullable struct {
	value *json.RawMessage
	null  *bool
}

// Scan implements sql.Scanner.
func (n nullable) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n.null = true
	case []byte:
		*n.value = append(json.RawMessage(nil), v...)
	case string:
		*n.value = json.RawMessage(v)
	default:
		return fmt.Errorf("postgres: unexpected value of type %T", src)
	}
	return nil
}

// lazy is an item of a page whose value may have been left out (missing).
type lazy[T any] struct {
	item    T
	size    int64
	missing bool
}

// streamPage yields the items of page in order, filling the values left
// out by fetch: fetch gets a run of such items whose sizes sum to at most
// batchBytes (at least one) and returns them in the same order, each
// filled, or nil when it is gone (deleted meanwhile: skipped).
func streamPage[T comparable](page []lazy[T], fetch func([]T) ([]T, error), yield func(T, error) bool) bool {
	var zero T
	for i := 0; i < len(page); {
		if !page[i].missing {
			if !yield(page[i].item, nil) {
				return false
			}
			page[i].item = zero // let it go
			i++
			continue
		}
		j, sum := i, int64(0)
		var run []T
		for j < len(page) && page[j].missing && (j == i || sum+page[j].size <= batchBytes) {
			run = append(run, page[j].item)
			sum += page[j].size
			j++
		}
		got, err := fetch(run)
		if err != nil {
			yield(zero, err)
			return false
		}
		for k, it := range got {
			page[i+k].item = zero
			if it == zero {
				continue
			}
			if !yield(it, nil) {
				return false
			}
		}
		i = j
	}
	return true
}

// scanLazyRecord scans recordColumns with the value as inlineValue reads
// it, then extra.
func scanLazyRecord(row interface{ Scan(...any) error }, extra ...any) (lazy[*store.Record], error) {
	var r store.Record
	var typ string
	var size int64
	var null bool
	err := row.Scan(append([]any{&r.ID, &r.Name, &typ, nullable{&r.Value, &null}, &size, &r.Version, &r.CreatedAt, &r.UpdatedAt, &r.UpdatedBy}, extra...)...)
	r.Type, r.CreatedAt, r.UpdatedAt = store.DataType(typ), r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return lazy[*store.Record]{item: &r, size: size, missing: null}, err
}

// lazyRecordColumns are recordColumns with the value as inlineValue.
var lazyRecordColumns = `r.id, r.name, r.type, ` + inlineValue("r") + `, r.version, r.created_at, r.updated_at, r.updated_by`

// fetchRecords reads the records of run again, whole, in one statement.
func (s *Store) fetchRecords(ctx context.Context, run []*store.Record) (_ []*store.Record, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	ids := make([]string, len(run))
	for i, r := range run {
		ids[i] = r.ID
	}
	rows, err := s.q().rows(ctx, `SELECT `+recordColumns+` FROM hds_records r WHERE r.id = ANY($1::uuid[])`, pq.Array(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[string]*store.Record, len(run))
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, classify(err)
		}
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	out := make([]*store.Record, len(run))
	for i, r := range run {
		out[i] = byID[r.ID]
	}
	return out, nil
}

// StreamRecords implements store.Streamer: FindRecords' statement, with
// large values left out of it and fetched in batches as the caller reads.
func (s *Store) StreamRecords(ctx context.Context, p store.Path, rq store.RecordQuery) (int, iter.Seq2[*store.Record, error], error) {
	page, total, err := findRecords(s, ctx, p, rq, lazyRecordColumns, scanLazyRecord)
	if err != nil {
		return 0, nil, err
	}
	return total, func(yield func(*store.Record, error) bool) {
		streamPage(page, func(run []*store.Record) ([]*store.Record, error) { return s.fetchRecords(ctx, run) }, yield)
	}, nil
}

// StreamClusterRecords implements store.Streamer: the cluster, then its
// records in pages of clusterPageRows by name, large values fetched in
// batches.
func (s *Store) StreamClusterRecords(ctx context.Context, p store.Path) (*store.Cluster, iter.Seq2[*store.Record, error], error) {
	k, err := s.FindCluster(ctx, p, false)
	if err != nil {
		return nil, nil, err
	}
	return k, func(yield func(*store.Record, error) bool) {
		after := ""
		for {
			page, err := s.clusterPage(ctx, k.ID, after)
			if err != nil {
				yield(nil, err)
				return
			}
			if len(page) == 0 {
				return
			}
			after = page[len(page)-1].item.Name
			if !streamPage(page, func(run []*store.Record) ([]*store.Record, error) { return s.fetchRecords(ctx, run) }, yield) {
				return
			}
			if len(page) < clusterPageRows {
				return
			}
		}
	}, nil
}

// clusterPage reads the records of the cluster whose names sort after
// after, at most clusterPageRows of them.
func (s *Store) clusterPage(ctx context.Context, clusterID, after string) (_ []lazy[*store.Record], err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	rows, err := s.q().rows(ctx, `SELECT `+lazyRecordColumns+` FROM hds_records r
		WHERE r.cluster_id = $1 AND r.name > $2 ORDER BY r.name LIMIT `+strconv.Itoa(clusterPageRows), clusterID, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var page []lazy[*store.Record]
	for rows.Next() {
		it, err := scanLazyRecord(rows)
		if err != nil {
			return nil, classify(err)
		}
		page = append(page, it)
	}
	return page, classify(rows.Err())
}

// StreamRecordVersions implements store.Streamer: FindRecordVersions with
// large values of kept versions left out and fetched in batches.
func (s *Store) StreamRecordVersions(ctx context.Context, p store.Path, lq store.ListQuery) (int, iter.Seq2[*store.RecordVersion, error], error) {
	page, total, err := s.findRecordVersions(ctx, p, lq, true)
	if err != nil {
		return 0, nil, err
	}
	return total, func(yield func(*store.RecordVersion, error) bool) {
		streamPage(page, func(run []*store.RecordVersion) ([]*store.RecordVersion, error) {
			return s.fetchVersions(ctx, run)
		}, yield)
	}, nil
}

// lazyVersionColumns are versionColumns with the value as inlineValue.
var lazyVersionColumns = `v.version, v.name, v.type, ` + inlineValue("v") + `, v.changed_at, v.changed_by`

// scanLazyVersion scans lazyVersionColumns.
func scanLazyVersion(row interface{ Scan(...any) error }) (lazy[*store.RecordVersion], error) {
	var v store.RecordVersion
	var typ string
	var size int64
	var null bool
	err := row.Scan(&v.Version, &v.Name, &typ, nullable{&v.Value, &null}, &size, &v.ChangedAt, &v.ChangedBy)
	v.Type, v.ChangedAt = store.DataType(typ), v.ChangedAt.UTC()
	return lazy[*store.RecordVersion]{item: &v, size: size, missing: null}, err
}

// fetchVersions reads the kept versions of run again, whole.
func (s *Store) fetchVersions(ctx context.Context, run []*store.RecordVersion) (_ []*store.RecordVersion, err error) {
	ctx, end := s.call(ctx)
	defer end(&err)
	versions := make([]int64, len(run))
	for i, v := range run {
		versions[i] = v.Version
	}
	rows, err := s.q().rows(ctx, `SELECT `+versionColumns+` FROM hds_record_versions
		WHERE record_id = $1 AND version = ANY($2::bigint[])`, run[0].RecordID, pq.Array(versions))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byVersion := make(map[int64]*store.RecordVersion, len(run))
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, classify(err)
		}
		v.RecordID = run[0].RecordID
		byVersion[v.Version] = v
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	out := make([]*store.RecordVersion, len(run))
	for i, v := range run {
		out[i] = byVersion[v.Version]
	}
	return out, nil
}
