package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store/postgres"
)

// TestTxRetriesDeadlock provokes a real deadlock between a transaction
// of the Store (InTx, as every write runs) and another one, and checks
// that the Store's transaction, chosen as the victim, runs again and
// succeeds, and the other one too: no error surfaces.
//
// The order is forced, not timed: B locks row 2; A locks row 1; B asks
// for row 1 and waits (seen in pg_locks); A asks for row 2, which closes
// the cycle. A checks for deadlocks after 10ms, B only after a minute, so
// A is the victim.
func TestTxRetriesDeadlock(t *testing.T) {
	db := pgtest.New(t)
	ctx := t.Context()
	_, err := db.Exec(`CREATE TABLE deadlock_test (id int PRIMARY KEY, n int NOT NULL DEFAULT 0);
		INSERT INTO deadlock_test (id) VALUES (1), (2)`)
	require.NoError(t, err)
	s := postgres.New(db)

	b, err := db.BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = b.Rollback() }()
	_, err = b.Exec(`SET LOCAL deadlock_timeout = '60s'`)
	require.NoError(t, err)
	var bPID int
	require.NoError(t, b.Get(&bPID, `SELECT pg_backend_pid()`))
	_, err = b.Exec(`UPDATE deadlock_test SET n = n + 1 WHERE id = 2`)
	require.NoError(t, err, "B locks row 2")

	attempts := 0
	bDone := make(chan error, 1)
	var bErr error
	bWaited := false
	err = s.InTx(ctx, func(tx *sqlx.Tx) error {
		attempts++
		if attempts > 1 && !bWaited {
			// A's rollback woke B: let B take row 1 and commit before A
			// runs again, or on a loaded machine A's retry can take row 1
			// first and close the same cycle once more.
			bErr, bWaited = <-bDone, true
		}
		if _, err := tx.Exec(`SET LOCAL deadlock_timeout = '10ms'`); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE deadlock_test SET n = n + 10 WHERE id = 1`); err != nil {
			return err
		}
		if attempts == 1 {
			go func() {
				_, err := b.Exec(`UPDATE deadlock_test SET n = n + 1 WHERE id = 1`) // waits for A
				if err == nil {
					err = b.Commit()
				}
				bDone <- err
			}()
			waitForLock(t, db, bPID)
		}
		_, err := tx.Exec(`UPDATE deadlock_test SET n = n + 10 WHERE id = 2`) // the deadlock, on attempt 1
		return err
	})
	require.NoError(t, err, "the Store's transaction ran again after the deadlock")
	if !bWaited {
		bErr = <-bDone
	}
	require.NoError(t, bErr, "the other transaction committed")
	assert.Equal(t, 2, attempts, "the deadlock victim ran twice")
	var ns []int
	require.NoError(t, db.Select(&ns, `SELECT n FROM deadlock_test ORDER BY id`))
	assert.Equal(t, []int{11, 11}, ns, "both transactions applied, once each")
}

// waitForLock returns once the backend pid waits for a lock.
func waitForLock(t *testing.T, db *sqlx.DB, pid int) {
	t.Helper()
	for {
		var waiting bool
		require.NoError(t, db.Get(&waiting, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted)`, pid))
		if waiting {
			return
		}
		time.Sleep(time.Millisecond) // polling for a state, not a timed assertion
	}
}

// TestTxRetryClassification checks which errors make InTx run a
// transaction again: a deadlock (40P01) and a serialization failure
// (40001), up to postgres.TxAttempts runs in all, the last error
// returned; any other error at once.
func TestTxRetryClassification(t *testing.T) {
	s := postgres.New(pgtest.New(t))
	for _, tc := range []struct {
		name     string
		err      error
		attempts int
	}{
		{"deadlock 40P01", &pq.Error{Code: "40P01"}, postgres.TxAttempts},
		{"serialization failure 40001", &pq.Error{Code: "40001"}, postgres.TxAttempts},
		{"unique violation 23505", &pq.Error{Code: "23505"}, 1},
		{"lock timeout 55P03", &pq.Error{Code: "55P03"}, 1},
		{"another error", errors.New("boom"), 1},
	} {
		attempts := 0
		err := s.InTx(t.Context(), func(*sqlx.Tx) error { attempts++; return tc.err })
		assert.ErrorIs(t, err, tc.err, "%s: the last error is returned", tc.name)
		assert.Equal(t, tc.attempts, attempts, "%s: runs", tc.name)
	}

	attempts := 0
	err := s.InTx(t.Context(), func(*sqlx.Tx) error {
		attempts++
		if attempts == 1 {
			return &pq.Error{Code: "40P01"}
		}
		return nil
	})
	require.NoError(t, err, "a deadlock once, then success")
	assert.Equal(t, 2, attempts, "a deadlock once, then success: runs")

	ctx, cancel := context.WithCancel(t.Context())
	attempts = 0
	err = s.InTx(ctx, func(*sqlx.Tx) error { attempts++; cancel(); return &pq.Error{Code: "40P01"} })
	assert.Error(t, err, "a canceled context")
	assert.Equal(t, 1, attempts, "a canceled context is not run again")
}
