package sqlite

import (
	"context"
	"iter"

	"github.com/hds-go/hds/store"
)

var _ store.Streamer = (*Store)(nil)

// StreamRecords implements store.Streamer: the page is read in one
// statement (at most store.MaxLimit records) and handed out from memory,
// so that no transaction stays open while the caller writes it out.
func (s *Store) StreamRecords(ctx context.Context, p store.Path, q store.RecordQuery) (int, iter.Seq2[*store.Record, error], error) {
	items, total, err := s.FindRecords(ctx, p, q)
	if err != nil {
		return 0, nil, err
	}
	return total, store.Items(items), nil
}

// StreamClusterRecords implements store.Streamer: the cluster and its
// records in name order, read in one snapshot.
func (s *Store) StreamClusterRecords(ctx context.Context, p store.Path) (*store.Cluster, iter.Seq2[*store.Record, error], error) {
	k, err := s.FindCluster(ctx, p, true)
	if err != nil {
		return nil, nil, err
	}
	recs := k.Records
	k.Records = nil
	return k, store.Items(recs), nil
}

// StreamRecordVersions implements store.Streamer.
func (s *Store) StreamRecordVersions(ctx context.Context, p store.Path, q store.ListQuery) (int, iter.Seq2[*store.RecordVersion, error], error) {
	items, total, err := s.FindRecordVersions(ctx, p, q)
	if err != nil {
		return 0, nil, err
	}
	return total, store.Items(items), nil
}
