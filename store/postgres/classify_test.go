package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/store"
)

func TestClassify(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"dial refused", fmt.Errorf("query: %w", refused), true},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"EOF", io.EOF, true},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"bad connection", driver.ErrBadConn, true},
		{"connection done", sql.ErrConnDone, true},
		{"deadline", context.DeadlineExceeded, true},
		{"connection failure 08006", &pq.Error{Code: "08006"}, true},
		{"connection refused by server 08004", &pq.Error{Code: "08004"}, true},
		{"admin shutdown 57P01", &pq.Error{Code: "57P01"}, true},
		{"crash shutdown 57P02", &pq.Error{Code: "57P02"}, true},
		{"cannot connect now 57P03", &pq.Error{Code: "57P03"}, true},
		{"too many connections 53300", &pq.Error{Code: "53300"}, true},
		{"statement timeout 57014", &pq.Error{Code: "57014"}, true},

		{"scan bug", errors.New(`sql: Scan error on column index 2, name "x": converting NULL to string is unsupported`), false},
		{"no rows", sql.ErrNoRows, false},
		{"transaction done", sql.ErrTxDone, false},
		{"canceled by the caller", context.Canceled, false},
		{"unique violation 23505", &pq.Error{Code: "23505"}, false},
		{"undefined column 42703", &pq.Error{Code: "42703"}, false},
		{"syntax error 42601", &pq.Error{Code: "42601"}, false},
		{"invalid byte sequence 22021", &pq.Error{Code: "22021"}, false},
		{"authentication failed 28P01", &pq.Error{Code: "28P01"}, false},
	} {
		got := classify(tc.err)
		if tc.unavailable {
			assert.ErrorIs(t, got, store.ErrUnavailable, "%s is store.ErrUnavailable", tc.name)
		} else {
			assert.NotErrorIs(t, got, store.ErrUnavailable, "%s is not store.ErrUnavailable (an internal error)", tc.name)
		}
		assert.ErrorIs(t, got, tc.err, "%s: the cause stays wrapped", tc.name)
	}
	assert.NoError(t, classify(nil), "nil stays nil")

	// A full disk is a 503 whose details say so (docs/api.md#health).
	full := classify(fmt.Errorf("insert: %w", &pq.Error{Code: "53100"}))
	assert.ErrorIs(t, full, store.ErrStorageFull, "disk_full 53100 is store.ErrStorageFull")
	assert.ErrorIs(t, full, store.ErrUnavailable, "disk_full 53100 is store.ErrUnavailable")
}
