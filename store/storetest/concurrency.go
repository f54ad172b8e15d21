package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// racers is how many goroutines each concurrency test starts.
const racers = 20

// race runs fn(i) for i in [0, n) in n goroutines released together, and
// returns their errors by i.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// assertOneWinner checks that exactly one of errs is nil and every other
// is ErrAlreadyExists; it returns the winner's index.
func assertOneWinner(t *testing.T, errs []error, what string) int {
	t.Helper()
	winner, wins := -1, 0
	for i, err := range errs {
		switch {
		case err == nil:
			winner = i
			wins++
		case errors.Is(err, store.ErrAlreadyExists):
		default:
			assert.Fail(t, "unexpected error", "%s: goroutine %d: %v (want nil or ErrAlreadyExists)", what, i, err)
		}
	}
	assert.Equal(t, 1, wins, "%s: exactly one of %d concurrent creates succeeds, the others get ErrAlreadyExists", what, len(errs))
	return winner
}

func testConcurrency(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RenameSame", func(t *testing.T) { testConcurrentRenames(t, newStore) })

	t.Run("CreateSameProject", func(t *testing.T) {
		s := newStore(t)
		errs := race(racers, func(i int) error {
			_, err := s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: fmt.Sprintf("user%d", i)}, Project: "race"})
			return err
		})
		winner := assertOneWinner(t, errs, "CreateProject of one name by many users")
		p, err := s.FindProject(t.Context(), store.Path{Project: "race"})
		if assert.NoError(t, err, "the project exists") && winner >= 0 {
			assert.Equal(t, fmt.Sprintf("user%d", winner), p.OwnerID, "the winner owns the project")
		}
	})

	t.Run("CreateSameCollection", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		errs := race(racers, func(int) error {
			_, err := f.s.CreateCollection(f.ctx, setLevel(f.path(1), 1, "race"))
			return err
		})
		assertOneWinner(t, errs, "CreateCollection of one name")
		assertProjectCount(t, f.s, projName, 2, "after concurrent creates of one collection")
	})

	t.Run("CreateSameCluster", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		errs := race(racers, func(int) error {
			_, err := f.s.CreateCluster(f.ctx, setLevel(f.path(2), 2, "race"))
			return err
		})
		assertOneWinner(t, errs, "CreateCluster of one name")
		assertCollectionCounts(t, f.s, f.path(1), 2, 1, "after concurrent creates of one cluster")
	})

	t.Run("CreateSameRecord", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		errs := race(racers, func(i int) error {
			_, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, "race"), &store.Record{Type: store.Integer, Value: json.RawMessage(strconv.Itoa(i))}, store.Write{})

			return err
		})
		winner := assertOneWinner(t, errs, "CreateRecord of one name in one cluster")
		assertCollectionCounts(t, f.s, f.path(1), 1, 2, "after concurrent creates of one record")
		r, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, "race"))
		if assert.NoError(t, err, "the record exists") && winner >= 0 {
			assert.Equal(t, strconv.Itoa(winner), string(r.Value), "the record holds the winner's value")
			assert.Equal(t, int64(1), r.Version, "the record was created once")
		}
	})

	t.Run("DeleteSameProject", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		errs := race(racers, func(int) error { return f.s.DeleteProject(f.ctx, f.path(0)) })
		deleted := 0
		for i, err := range errs {
			switch {
			case err == nil:
				deleted++
			case errors.Is(err, store.ErrNotFound):
			default:
				assert.Fail(t, "unexpected error", "DeleteProject goroutine %d: %v (want nil or ErrNotFound)", i, err)
			}
		}
		assert.Equal(t, 1, deleted, "exactly one of %d concurrent deletes succeeds, the others get ErrNotFound", racers)
	})

	t.Run("UpdateSameRecord", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		versions := make([]int64, racers)
		errs := race(racers, func(i int) error {
			r, err := f.s.UpdateRecord(f.ctx, f.path(3), store.Write{}, func(r *store.Record) error {
				n, err := strconv.Atoi(string(r.Value))
				if err != nil {
					return err
				}
				r.Value = json.RawMessage(strconv.Itoa(n + 1))
				return nil
			})
			if err == nil {
				versions[i] = r.Version
			}
			return err
		})
		for i, err := range errs {
			assert.NoError(t, err, "UpdateRecord goroutine %d", i)
		}
		r, err := f.s.FindRecord(f.ctx, f.path(3))
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, int64(racers+1), r.Version, "%d concurrent updates of a record at Version 1", racers)
		assert.Equal(t, strconv.Itoa(racers+1), string(r.Value), "no update is lost: each saw the one before")
		slices.Sort(versions)
		want := make([]int64, racers)
		for i := range want {
			want[i] = int64(i + 2)
		}
		assert.Equal(t, want, versions, "each update returns its own Version")
	})

	t.Run("DifferentRecords", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		const workers, updates = 10, 10
		errs := race(workers, func(i int) error {
			p := setLevel(f.path(3), 3, fmt.Sprintf("r%d", i))
			if _, err := f.s.CreateRecord(f.ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("0")}, store.Write{}); err != nil {
				return fmt.Errorf("create: %w", err)
			}
			for range updates {
				if _, err := f.s.UpdateRecord(f.ctx, p, store.Write{}, func(r *store.Record) error {
					n, err := strconv.Atoi(string(r.Value))
					r.Value = json.RawMessage(strconv.Itoa(n + 1))
					return err
				}); err != nil {
					return fmt.Errorf("update: %w", err)
				}
				if _, err := f.s.FindRecord(f.ctx, p); err != nil {
					return fmt.Errorf("find: %w", err)
				}
				if _, _, err := f.s.FindRecords(f.ctx, f.path(2), recordQuery()); err != nil {
					return fmt.Errorf("list: %w", err)
				}
				if _, err := f.s.FindCluster(f.ctx, f.path(2), true); err != nil {
					return fmt.Errorf("find cluster: %w", err)
				}
				if _, err := f.s.FindCollection(f.ctx, f.path(1)); err != nil {
					return fmt.Errorf("find collection: %w", err)
				}
			}
			return nil
		})
		for i, err := range errs {
			assert.NoError(t, err, "worker %d", i)
		}
		for i := range workers {
			r, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, fmt.Sprintf("r%d", i)))
			if assert.NoError(t, err, "record r%d", i) {
				assert.Equal(t, int64(updates+1), r.Version, "record r%d Version", i)
				assert.Equal(t, strconv.Itoa(updates), string(r.Value), "record r%d value", i)
			}
		}
		assertCollectionCounts(t, f.s, f.path(1), 1, workers+1, "after concurrent work on different records")
	})

	t.Run("MixedLevels", func(t *testing.T) {
		s := newStore(t)
		errs := race(racers, func(i int) error {
			p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: fmt.Sprintf("p%d", i%4), Collection: fmt.Sprintf("c%d", i), Cluster: "k", Record: "r"}
			if _, err := s.CreateProject(t.Context(), p); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
				return err
			}
			if _, err := s.CreateCollection(t.Context(), p); err != nil {
				return err
			}
			if _, err := s.CreateCluster(t.Context(), p); err != nil {
				return err
			}
			if _, err := s.CreateRecord(t.Context(), p, &store.Record{Type: store.Null, Value: json.RawMessage("null")}, store.Write{}); err != nil {
				return err
			}
			if _, _, err := s.FindProjects(t.Context(), owner, store.NewListQuery()); err != nil {
				return err
			}
			_, _, err := s.FindCollections(t.Context(), p, store.NewListQuery())
			return err
		})
		for i, err := range errs {
			assert.NoError(t, err, "goroutine %d", i)
		}
		ps, n, err := s.FindProjects(t.Context(), owner, store.NewListQuery())
		require.NoError(t, err, "FindProjects")
		assert.Equal(t, 4, n, "four projects")
		total := 0
		for _, p := range ps {
			total += p.CollectionCount
		}
		assert.Equal(t, racers, total, "every collection was created once")
	})
}
