package store

import (
	"context"
	"iter"
)

// Streamer is implemented by stores that can hand the records of a list,
// of a cluster and of a record's history to the caller as they are read,
// so that answering a request never holds a whole list of values in
// memory (docs/api.md#limits-rate-limits-and-quotas). The handler uses it
// when the store has it and falls back to the Find methods otherwise; both
// shipped stores have it.
//
// Each method checks the path and counts (the int, or the Cluster's
// RecordCount) before it returns, with the errors of the matching Find
// method; the sequence then yields the items of the page in order. The
// store holds no lock and no database connection while the caller's loop
// body runs, so a slow reader blocks no writer.
//
// The items yielded are read-only: they may be shared with the store
// (whose values are never changed in place) and must not be modified. A
// failure while reading is yielded once, as (nil, err), and ends the
// sequence. Items changed by concurrent writes while the sequence runs may
// show in their old or their new state; a sequence is not a snapshot of
// the whole list (the PostgreSQL store reads it in bounded batches).
type Streamer interface {
	// StreamRecords is FindRecords, streamed.
	StreamRecords(ctx context.Context, p Path, q RecordQuery) (int, iter.Seq2[*Record, error], error)
	// StreamClusterRecords is FindCluster with records, streamed: the
	// cluster (without Records), and every record of it in name order.
	StreamClusterRecords(ctx context.Context, p Path) (*Cluster, iter.Seq2[*Record, error], error)
	// StreamRecordVersions is FindRecordVersions, streamed.
	StreamRecordVersions(ctx context.Context, p Path, q ListQuery) (int, iter.Seq2[*RecordVersion, error], error)
}

// Items returns a sequence over items with no error, for stores without
// Streamer and for tests.
func Items[T any](items []T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, it := range items {
			if !yield(it, nil) {
				return
			}
		}
	}
}

// StreamRecords streams the records of p.Cluster matching q from s: with
// s's Streamer when it has one, else from FindRecords.
func StreamRecords(ctx context.Context, s Store, p Path, q RecordQuery) (int, iter.Seq2[*Record, error], error) {
	if st, ok := s.(Streamer); ok {
		return st.StreamRecords(ctx, p, q)
	}
	items, total, err := s.FindRecords(ctx, p, q)
	return total, Items(items), err
}

// StreamClusterRecords streams the cluster p.Cluster and its records from
// s: with s's Streamer when it has one, else from FindCluster.
func StreamClusterRecords(ctx context.Context, s Store, p Path) (*Cluster, iter.Seq2[*Record, error], error) {
	if st, ok := s.(Streamer); ok {
		return st.StreamClusterRecords(ctx, p)
	}
	k, err := s.FindCluster(ctx, p, true)
	if err != nil {
		return nil, nil, err
	}
	recs := k.Records
	k.Records = nil
	return k, Items(recs), nil
}

// StreamRecordVersions streams the states of the record p.Record from s:
// with s's Streamer when it has one, else from FindRecordVersions.
func StreamRecordVersions(ctx context.Context, s Store, p Path, q ListQuery) (int, iter.Seq2[*RecordVersion, error], error) {
	if st, ok := s.(Streamer); ok {
		return st.StreamRecordVersions(ctx, p, q)
	}
	items, total, err := s.FindRecordVersions(ctx, p, q)
	return total, Items(items), err
}
