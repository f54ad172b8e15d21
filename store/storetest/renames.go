package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// renameRacers is how many goroutines rename one resource at once, and
// renameTrials how many times each level is tried.
const (
	renameRacers = 10
	renameTrials = 5
)

// renameLevel creates, finds and renames the resource at one level of
// the fixture, reduced to its id and name.
type renameLevel struct {
	kind   string
	level  int
	create func(f *fixture, name string) (id string, err error)
	find   func(f *fixture, name string) (id, gotName string, err error)
	rename func(f *fixture, name, newName string) (id, gotName string, err error)
}

var renameLevels = []renameLevel{
	{
		kind: "project", level: 0,
		create: func(f *fixture, name string) (string, error) {
			p, err := f.s.CreateProject(f.ctx, setLevel(f.path(0), 0, name))
			return idOf(p, err, func() string { return p.ID })
		},
		find: func(f *fixture, name string) (string, string, error) {
			p, err := f.s.FindProject(f.ctx, setLevel(f.path(0), 0, name))
			return idName(err, func() (string, string) { return p.ID, p.Name })
		},
		rename: func(f *fixture, name, newName string) (string, string, error) {
			p, err := f.s.RenameProject(f.ctx, setLevel(f.path(0), 0, name), newName)
			return idName(err, func() (string, string) { return p.ID, p.Name })
		},
	},
	{
		kind: "collection", level: 1,
		create: func(f *fixture, name string) (string, error) {
			c, err := f.s.CreateCollection(f.ctx, setLevel(f.path(1), 1, name))
			return idOf(c, err, func() string { return c.ID })
		},
		find: func(f *fixture, name string) (string, string, error) {
			c, err := f.s.FindCollection(f.ctx, setLevel(f.path(1), 1, name))
			return idName(err, func() (string, string) { return c.ID, c.Name })
		},
		rename: func(f *fixture, name, newName string) (string, string, error) {
			c, err := f.s.RenameCollection(f.ctx, setLevel(f.path(1), 1, name), newName)
			return idName(err, func() (string, string) { return c.ID, c.Name })
		},
	},
	{
		kind: "cluster", level: 2,
		create: func(f *fixture, name string) (string, error) {
			k, err := f.s.CreateCluster(f.ctx, setLevel(f.path(2), 2, name))
			return idOf(k, err, func() string { return k.ID })
		},
		find: func(f *fixture, name string) (string, string, error) {
			k, err := f.s.FindCluster(f.ctx, setLevel(f.path(2), 2, name), false)
			return idName(err, func() (string, string) { return k.ID, k.Name })
		},
		rename: func(f *fixture, name, newName string) (string, string, error) {
			k, err := f.s.RenameCluster(f.ctx, setLevel(f.path(2), 2, name), newName)
			return idName(err, func() (string, string) { return k.ID, k.Name })
		},
	},
	{
		kind: "record", level: 3,
		create: func(f *fixture, name string) (string, error) {
			r, err := f.s.CreateRecord(f.ctx, setLevel(f.path(3), 3, name), &store.Record{Type: store.Integer, Value: json.RawMessage("7")}, store.Write{})
			return idOf(r, err, func() string { return r.ID })
		},
		find: func(f *fixture, name string) (string, string, error) {
			r, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, name))
			return idName(err, func() (string, string) { return r.ID, r.Name })
		},
		rename: func(f *fixture, name, newName string) (string, string, error) {
			r, err := f.s.UpdateRecord(f.ctx, setLevel(f.path(3), 3, name), store.Write{}, func(r *store.Record) error {
				r.Name = newName
				return nil
			})
			return idName(err, func() (string, string) { return r.ID, r.Name })
		},
	},
}

func idOf(v any, err error, id func() string) (string, error) {
	if err != nil {
		return "", err
	}
	return id(), nil
}

func idName(err error, get func() (string, string)) (string, string, error) {
	if err != nil {
		return "", "", err
	}
	id, name := get()
	return id, name, nil
}

// testConcurrentRenames renames one resource at every level from many
// goroutines at once, each to its own new name: exactly one rename
// succeeds and answers the new name; the others find no resource of the
// old name (ErrNotFound naming it); the resource keeps its id and ends
// with the winner's name.
func testConcurrentRenames(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, lv := range renameLevels {
		t.Run(lv.kind, func(t *testing.T) {
			f := newFixture(t, newStore(t))
			for trial := range renameTrials {
				old := fmt.Sprintf("race%d", trial)
				id, err := lv.create(f, old)
				require.NoError(t, err, "create %s %q", lv.kind, old)
				newName := func(i int) string { return fmt.Sprintf("race%d-by%d", trial, i) }
				type result struct {
					id, name string
					err      error
				}
				results := make([]result, renameRacers)
				race(renameRacers, func(i int) error {
					gotID, gotName, err := lv.rename(f, old, newName(i))
					results[i] = result{gotID, gotName, err}
					return err
				})
				winner, wins := -1, 0
				for i, r := range results {
					switch {
					case r.err == nil:
						winner = i
						wins++
						assert.Equal(t, id, r.id, "trial %d: the rename by %d answers the %s's id", trial, i, lv.kind)
						assert.Equal(t, newName(i), r.name, "trial %d: the rename by %d answers its own new name", trial, i)
					case errors.Is(r.err, store.ErrNotFound):
						assertNotFound(t, r.err, lv.kind, old, "trial %d: a losing rename by %d finds no %s of the old name", trial, i, lv.kind)
					default:
						assert.Fail(t, "unexpected error", "trial %d: rename of %s %q by %d: %v (want nil or ErrNotFound)", trial, lv.kind, old, i, r.err)
					}
				}
				if !assert.Equal(t, 1, wins, "trial %d: exactly one of %d concurrent renames of one %s succeeds", trial, renameRacers, lv.kind) {
					continue
				}
				gotID, gotName, err := lv.find(f, newName(winner))
				if assert.NoError(t, err, "trial %d: the %s is found by the winner's name", trial, lv.kind) {
					assert.Equal(t, id, gotID, "trial %d: the %s keeps its id", trial, lv.kind)
					assert.Equal(t, newName(winner), gotName, "trial %d: the %s has the winner's name", trial, lv.kind)
				}
				_, _, err = lv.find(f, old)
				assertNotFound(t, err, lv.kind, old, "trial %d: the old name is gone", trial)
				for i := range renameRacers {
					if i != winner {
						_, _, err := lv.find(f, newName(i))
						assertNotFound(t, err, lv.kind, newName(i), "trial %d: a loser's name %q names nothing", trial, newName(i))
					}
				}
			}
		})
	}
}
