package sqlite_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/store/sqlite"
)

func TestReadConns(t *testing.T) {
	assert.Equal(t, max(4, 2*runtime.GOMAXPROCS(0)), sqlite.DefaultReadConns(), "twice the CPUs Go uses, at least 4")
	assert.Equal(t, sqlite.DefaultReadConns(), open(t).ReadConns(), "the default")
	assert.Equal(t, 7, open(t, sqlite.WithReadConns(7)).ReadConns(), "WithReadConns")
	assert.Equal(t, sqlite.DefaultReadConns(), open(t, sqlite.WithReadConns(0)).ReadConns(), "WithReadConns(0) keeps the default")
}

// TestReadsFirstComeFirstServed checks that reads waiting for a read
// connection get one in the order they came (database/sql hands a free
// connection to a random waiter: a few reads waited seconds while others
// passed, the tail of a GET at 32 connections).
func TestReadsFirstComeFirstServed(t *testing.T) {
	s := open(t, sqlite.WithReadConns(1))
	ctx := context.Background()
	release := s.HoldReader()
	const readers = 10
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			err := s.ReadFunc(ctx, func() {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
			})
			assert.NoError(t, err, "read %d", i)
		})
		deadline := time.Now().Add(time.Minute)
		for s.ReadsQueued() < int64(i+1) {
			if time.Now().After(deadline) {
				t.Fatalf("%d reads queued, want %d", s.ReadsQueued(), i+1)
			}
			time.Sleep(time.Millisecond)
		}
	}
	release()
	wg.Wait()
	want := make([]int, readers)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, order, "the reads in the order they came")
}
