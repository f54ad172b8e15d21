package sqlite

import "context"

// MigrateTo runs the migrations up to the one named last (a file name
// under migrations/), for upgrade tests.
func (s *Store) MigrateTo(ctx context.Context, last string) error { return s.migrate(ctx, last) }

// Exec runs a statement on the writing connection, for tests.
func (s *Store) Exec(ctx context.Context, query string, args ...any) error {
	_, err := s.w.ExecContext(ctx, query, args...)
	return err
}
