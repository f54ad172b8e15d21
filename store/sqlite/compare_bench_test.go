package sqlite_test

import (
	"testing"

	"github.com/hds-go/hds/store/storetest"
)

// BenchmarkDiff compares two collections of 10,000 records each
// (storetest.BenchmarkCompare).
func BenchmarkDiff(b *testing.B) {
	storetest.BenchmarkCompare(b, open(b))
}
