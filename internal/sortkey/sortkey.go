// Package sortkey orders and range-filters records by value, as
// store.ValueKey documents: Compare and InRange for stores that sort in
// Go, Decimal and EpochDecimal for stores that hand the order to a SQL
// database as exact numeric values.
package sortkey

import (
	"cmp"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/hds-go/hds/internal/timetext"
	"github.com/hds-go/hds/store"
)

// Compare orders two keys ascending as sortBy=value does: by group,
// numbers by exact numeric value, texts byte-wise. It returns -1, 0 or +1.
func Compare(a, b store.ValueKey) int {
	if a.Group != b.Group {
		if a.Group < b.Group {
			return -1
		}
		return 1
	}
	switch a.Group {
	case store.GroupNumber:
		return compareNumbers(a, b)
	case store.GroupText:
		return strings.Compare(a.Text, b.Text)
	}
	return 0
}

func compareNumbers(a, b store.ValueKey) int {
	switch {
	case a.IsInt && b.IsInt:
		return cmp.Compare(a.Int, b.Int)
	case !a.IsInt && !b.IsInt:
		return cmp.Compare(a.Float, b.Float) // finite: no NaN
	}
	// An int64 and a float64: compare exactly, float64 cannot hold every
	// int64.
	return exact(a).Cmp(exact(b))
}

func exact(k store.ValueKey) *big.Float {
	f := new(big.Float).SetPrec(128)
	if k.IsInt {
		return f.SetInt64(k.Int)
	}
	return f.SetFloat64(k.Float)
}

// Decimal returns the exact decimal value of a GroupNumber key (an int64,
// or every digit of a float64's binary value), so that a database can
// order integers and floats together exactly as Compare does.
func Decimal(k store.ValueKey) string {
	if k.IsInt {
		return strconv.FormatInt(k.Int, 10)
	}
	s := new(big.Float).SetFloat64(k.Float).Text('f', 1100)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// CompareRange compares the values of two keys of values of the range
// type t as the range filters do: -1, 0 or +1.
func CompareRange(t store.DataType, a, b store.ValueKey) int {
	switch t {
	case store.Integer, store.Float:
		return Compare(a, b)
	case store.DateTime:
		return timetext.Instant(a.Text).Compare(timetext.Instant(b.Text))
	}
	return strings.Compare(a.Text, b.Text)
}

// InRange reports whether k, the key of a record of type q.Type, lies
// within q's range filters (true when there are none).
func InRange(q store.RecordQuery, k store.ValueKey) bool {
	return (q.Min == nil || CompareRange(q.Type, k, *q.Min) >= 0) &&
		(q.Max == nil || CompareRange(q.Type, k, *q.Max) <= 0)
}

// EpochDecimal returns t as exact decimal seconds since 1970-01-01 UTC,
// in a form SQL numeric input takes (e.g. "1700000000500000000e-9").
func EpochDecimal(t time.Time) string {
	n := new(big.Int).Mul(big.NewInt(t.Unix()), big.NewInt(1e9))
	n.Add(n, big.NewInt(int64(t.Nanosecond())))
	return n.String() + "e-9"
}
