package postgres_test

import (
	"testing"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/storetest"
)

// BenchmarkDiff compares two collections of 10,000 records each
// (storetest.BenchmarkCompare).
func BenchmarkDiff(b *testing.B) {
	storetest.BenchmarkCompare(b, postgres.New(pgtest.New(b)))
}
