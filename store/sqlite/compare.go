package sqlite

import (
	"context"
	"iter"

	"github.com/hds-go/hds/store"
)

// compareRecords is CompareRecords: a long read (longread.go); one read
// transaction is the snapshot (WAL: writers go on while visit runs), and
// each side is one statement whose rows, ordered by cluster and name, are merged as they
// are read (two cursors open on one connection), so that a comparison of
// any size runs four statements besides the path's and holds one row of
// each side at a time.
func (s *Store) compareRecords(ctx context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
	return s.longRead(ctx, func(t *tx) error {
		pr, err := t.project(p)
		if err != nil {
			return err
		}
		var ids [2]string
		for i, side := range []store.Side{from, to} {
			c, err := t.collectionIn(pr, side.Collection)
			if err != nil {
				return err
			}
			ids[i] = c.ID
			if side.Cluster != "" {
				k, err := t.clusterIn(c, side.Cluster)
				if err != nil {
					return err
				}
				ids[i] = k.ID
			}
		}
		revision, err := t.changeRevision(pr)
		if err != nil {
			return err
		}
		if err := visit(store.Pair{Revision: revision}); err != nil {
			return err
		}
		return store.MergeSides(from, t.side(from, ids[0], "a"), t.side(to, ids[1], "b"), visit)
	})
}

// side streams the records of one side of a comparison, id the id of its
// collection or cluster, in cluster and name order. The two sides' queries
// differ by their label (a comment), so that they are two prepared
// statements: one statement cannot run twice at once.
func (t *tx) side(side store.Side, id, label string) iter.Seq2[store.SideRecord, error] {
	query := `SELECT k.name, ` + recordCols + ` FROM hds_clusters k JOIN hds_records r ON r.cluster_id = k.id
		WHERE k.collection_id = ? ORDER BY k.name, r.name -- side ` + label
	if side.Cluster != "" {
		query = `SELECT '', ` + recordCols + ` FROM hds_records r WHERE r.cluster_id = ? ORDER BY r.name -- side ` + label
	}
	return t.sideRows(query, id)
}

// sideRows streams the records query selects, each prefixed by its
// cluster's name, as one side of a comparison.
func (t *tx) sideRows(query string, args ...any) iter.Seq2[store.SideRecord, error] {
	return func(yield func(store.SideRecord, error) bool) {
		rows, err := t.rows(query, args...)
		if err != nil {
			yield(store.SideRecord{}, err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			var cluster string
			r, err := scanRecord(prefixed{rows, &cluster})
			if err != nil {
				yield(store.SideRecord{}, err)
				return
			}
			if !yield(store.SideRecord{Cluster: cluster, Record: r}, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(store.SideRecord{}, err)
		}
	}
}

// prefixed scans one column into first before the ones a scanner for the
// rest of the row expects.
type prefixed struct {
	row   scanner
	first any
}

func (p prefixed) Scan(dest ...any) error { return p.row.Scan(append([]any{p.first}, dest...)...) }
