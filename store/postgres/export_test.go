package postgres

import "context"

// Exported for the tests of package postgres_test.
const SortTextPrefix = sortTextPrefix

// MigrateTo runs the migrations up to the one named last.
func (s *Store) MigrateTo(ctx context.Context, last string) error { return s.migrate(ctx, last) }
