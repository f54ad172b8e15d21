package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// The rules of docs/api.md#concurrency-control-and-record-history
// (conditional writes) and 14 (history) as the Store interface states them.

// setValue returns an update func that sets the INTEGER value n.
func setValue(n int) func(*store.Record) error {
	return func(r *store.Record) error {
		r.Value = json.RawMessage(strconv.Itoa(n))
		return nil
	}
}

// assertPrecondition checks that err is a *PreconditionError naming cur.
func assertPrecondition(t *testing.T, err error, cur *store.Record, what string) {
	t.Helper()
	var pe *store.PreconditionError
	if assert.ErrorAs(t, err, &pe, "%s: a *store.PreconditionError", what) {
		assert.ErrorIs(t, err, store.ErrPreconditionFailed, "%s: matches ErrPreconditionFailed", what)
		assert.Equal(t, cur.Version, pe.Version, "%s: names the current version", what)
		assert.Equal(t, cur.ETag(), pe.ETag, "%s: names the current tag", what)
		assert.Equal(t, "current version is "+strconv.FormatInt(cur.Version, 10), pe.Error(), "%s: message", what)
	}
}

// versionsOf lists every state of the record at p, newest first.
func versionsOf(t *testing.T, s store.Store, p store.Path) []*store.RecordVersion {
	t.Helper()
	q := store.NewListQuery()
	q.Limit = store.MaxLimit
	vs, total, err := s.FindRecordVersions(t.Context(), p, q)
	require.NoError(t, err, "FindRecordVersions")
	require.Len(t, vs, total, "FindRecordVersions: total counts every state")
	return vs
}

// versionNumbers lists the versions of vs.
func versionNumbers(vs []*store.RecordVersion) []int64 {
	out := []int64{}
	for _, v := range vs {
		out = append(out, v.Version)
	}
	return out
}

// versionValues lists the values of vs.
func versionValues(vs []*store.RecordVersion) []string {
	out := []string{}
	for _, v := range vs {
		out = append(out, string(v.Value))
	}
	return out
}

func testPreconditions(t *testing.T, newStore func(t *testing.T) store.Store) {
	keep := store.Write{MaxVersions: store.DefaultMaxVersions}
	ifMatch := func(tags ...string) store.Write { w := keep; w.IfMatch = append([]string{}, tags...); return w }

	t.Run("ETag", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		first := f.rec.ETag()
		assert.Regexp(t, `^"[\x21\x23-\x7e]+"$`, first, "a strong entity tag, quotes included")
		same, err := f.s.UpdateRecord(f.ctx, f.path(3), keep, setValue(1))
		require.NoError(t, err, "UpdateRecord to the same value")
		assert.NotEqual(t, first, same.ETag(), "an update to the same value changes the tag")
		renamed, err := f.s.UpdateRecord(f.ctx, f.path(3), keep, func(r *store.Record) error { r.Name = "moved"; return nil })
		require.NoError(t, err, "rename")
		assert.NotEqual(t, same.ETag(), renamed.ETag(), "a rename changes the tag")
		require.NoError(t, f.s.DeleteRecord(f.ctx, setLevel(f.path(3), 3, "moved"), store.Write{}), "DeleteRecord")
		again := mustRecord(t, f.s, setLevel(f.path(3), 3, "moved"), store.Integer, "1")
		assert.Equal(t, int64(1), again.Version, "a record created again starts at version 1")
		for _, old := range []string{first, same.ETag(), renamed.ETag()} {
			assert.NotEqual(t, old, again.ETag(), "a record deleted and created again under the same name has a new tag")
		}
		other := mustRecord(t, f.s, setLevel(f.path(3), 3, "other"), store.Integer, "1")
		assert.NotEqual(t, again.ETag(), other.ETag(), "two records at version 1 have different tags")
		got, err := f.s.FindRecord(f.ctx, setLevel(f.path(3), 3, "other"))
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, other.ETag(), got.ETag(), "the tag of a state is the same whoever reads it")
	})

	t.Run("ConditionalUpdate", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		stale := f.rec.ETag()
		cur, err := f.s.UpdateRecord(f.ctx, f.path(3), ifMatch(stale), setValue(2))
		require.NoError(t, err, "UpdateRecord with the current tag")
		assert.Equal(t, int64(2), cur.Version, "the write happened")

		for name, w := range map[string]store.Write{
			"stale tag":       ifMatch(stale),
			"unknown tags":    ifMatch(`"nope"`, `"x.2"`),
			"empty condition": ifMatch(),
		} {
			_, err := f.s.UpdateRecord(f.ctx, f.path(3), w, setValue(99))
			assertPrecondition(t, err, cur, name)
		}
		got, err := f.s.FindRecord(f.ctx, f.path(3))
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, viewRecord(cur), viewRecord(got), "a failed precondition changes nothing")
		assert.Equal(t, []int64{2, 1}, versionNumbers(versionsOf(t, f.s, f.path(3))), "nor the history")

		next, err := f.s.UpdateRecord(f.ctx, f.path(3), ifMatch(`"nope"`, stale, cur.ETag()), setValue(3))
		require.NoError(t, err, "one of several tags matches")
		assert.Equal(t, int64(3), next.Version, "the write happened")
		next, err = f.s.UpdateRecord(f.ctx, f.path(3), keep, setValue(4))
		require.NoError(t, err, "a nil IfMatch writes unconditionally")
		assert.Equal(t, int64(4), next.Version, "the write happened")
	})

	t.Run("ConditionalUpdateOrder", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		mustRecord(t, f.s, setLevel(f.path(3), 3, "taken"), store.Integer, "1")
		stale := ifMatch(`"stale"`)
		_, err := f.s.UpdateRecord(f.ctx, setLevel(f.path(3), 3, "missing"), stale, setValue(1))
		assertNotFound(t, err, "record", "missing", "a missing record before the precondition")
		bad := errors.New("bad input")
		_, err = f.s.UpdateRecord(f.ctx, f.path(3), stale, func(*store.Record) error { return bad })
		assert.ErrorIs(t, err, bad, "the update func's error before the precondition")
		_, err = f.s.UpdateRecord(f.ctx, f.path(3), stale, func(r *store.Record) error { r.Name = "taken"; return nil })
		assertExists(t, err, "record", "taken", "a taken name before the precondition")
		f.assertRecordUnchanged(t, "after refused conditional updates")
	})

	t.Run("ConditionalDelete", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		cur, err := f.s.UpdateRecord(f.ctx, f.path(3), keep, setValue(2))
		require.NoError(t, err, "UpdateRecord")
		err = f.s.DeleteRecord(f.ctx, f.path(3), ifMatch(f.rec.ETag()))
		assertPrecondition(t, err, cur, "DeleteRecord with a stale tag")
		err = f.s.DeleteRecord(f.ctx, f.path(3), ifMatch())
		assertPrecondition(t, err, cur, "DeleteRecord with an empty condition")
		got, err := f.s.FindRecord(f.ctx, f.path(3))
		if assert.NoError(t, err, "the record is still there") {
			assert.Equal(t, viewRecord(cur), viewRecord(got), "unchanged")
		}
		err = f.s.DeleteRecord(f.ctx, setLevel(f.path(3), 3, "missing"), ifMatch(cur.ETag()))
		assertNotFound(t, err, "record", "missing", "a missing record before the precondition")
		require.NoError(t, f.s.DeleteRecord(f.ctx, f.path(3), ifMatch(`"other"`, cur.ETag())), "DeleteRecord with the current tag")
		_, err = f.s.FindRecord(f.ctx, f.path(3))
		assertNotFound(t, err, "record", recName, "deleted")
	})

	t.Run("UpdatedBy", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		p := setLevel(f.path(3), 3, "authored")
		admin := p
		admin.Caller = store.Caller{}
		r, err := f.s.CreateRecord(f.ctx, admin, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
		require.NoError(t, err, "CreateRecord")
		assert.Empty(t, r.UpdatedBy, "CreateRecord by an administrative tool records no author")
		r, err = f.s.UpdateRecord(f.ctx, p, store.Write{MaxVersions: 10}, setValue(2))
		require.NoError(t, err, "UpdateRecord")
		assert.Equal(t, owner, r.UpdatedBy, "UpdateRecord records the caller")
		got, err := f.s.FindRecord(f.ctx, p)
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, owner, got.UpdatedBy, "FindRecord returns the author of the current state")
		vs := versionsOf(t, f.s, p)
		if assert.Len(t, vs, 2, "two states") {
			assert.Equal(t, owner, vs[0].ChangedBy, "the current state's author")
			assert.Empty(t, vs[1].ChangedBy, "the first state's author (none)")
		}
	})

	t.Run("ConcurrentConditionalUpdates", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		tag := f.rec.ETag()
		errs := race(racers, func(i int) error {
			_, err := f.s.UpdateRecord(f.ctx, f.path(3), ifMatch(tag), setValue(100+i))
			return err
		})
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrPreconditionFailed):
			default:
				assert.Fail(t, "unexpected error", "goroutine %d: %v", i, err)
			}
		}
		assert.Equal(t, 1, wins, "of %d concurrent updates with one tag exactly one succeeds", racers)
		got, err := f.s.FindRecord(f.ctx, f.path(3))
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, int64(2), got.Version, "one update was applied")
	})

	t.Run("ConcurrentConditionalDeletes", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		tag := f.rec.ETag()
		errs := race(racers, func(int) error { return f.s.DeleteRecord(f.ctx, f.path(3), ifMatch(tag)) })
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrPreconditionFailed), errors.Is(err, store.ErrNotFound):
			default:
				assert.Fail(t, "unexpected error", "goroutine %d: %v", i, err)
			}
		}
		assert.Equal(t, 1, wins, "of %d concurrent deletes with one tag exactly one succeeds", racers)
	})

	t.Run("ConcurrentUpdateAndDelete", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		tag := f.rec.ETag()
		errs := race(racers, func(i int) error {
			if i%2 == 0 {
				return f.s.DeleteRecord(f.ctx, f.path(3), ifMatch(tag))
			}
			_, err := f.s.UpdateRecord(f.ctx, f.path(3), ifMatch(tag), setValue(i))
			return err
		})
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
			case errors.Is(err, store.ErrPreconditionFailed), errors.Is(err, store.ErrNotFound):
			default:
				assert.Fail(t, "unexpected error", "goroutine %d: %v", i, err)
			}
		}
		assert.Equal(t, 1, wins, "of concurrent updates and deletes with one tag exactly one succeeds")
	})
}

// assertRecordUnchanged checks that the fixture's record and its history
// are as newFixture made them.
func (f *fixture) assertRecordUnchanged(t *testing.T, msg string) {
	t.Helper()
	got, err := f.s.FindRecord(f.ctx, f.path(3))
	if assert.NoError(t, err, "%s: FindRecord", msg) {
		assert.Equal(t, viewRecord(f.rec), viewRecord(got), "%s: record unchanged", msg)
	}
	assert.Equal(t, []int64{1}, versionNumbers(versionsOf(t, f.s, f.path(3))), "%s: no history", msg)
}

func testHistory(t *testing.T, newStore func(t *testing.T) store.Store) {
	keep := func(n int) store.Write { return store.Write{MaxVersions: n} }

	t.Run("KeepsReplacedStates", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		tick()
		r2, err := f.s.UpdateRecord(f.ctx, f.path(3), keep(10), func(r *store.Record) error {
			r.Type, r.Value = store.String, json.RawMessage(`"two"`)
			return nil
		})
		require.NoError(t, err, "change type and value")
		tick()
		r3, err := f.s.UpdateRecord(f.ctx, f.path(3), keep(10), func(r *store.Record) error { r.Name = "renamed"; return nil })
		require.NoError(t, err, "rename")
		p := setLevel(f.path(3), 3, "renamed")
		vs := versionsOf(t, f.s, p)
		require.Len(t, vs, 3, "current state and two kept versions")
		want := []struct {
			version     int64
			name, value string
			typ         store.DataType
			rec         *store.Record
		}{
			{3, "renamed", `"two"`, store.String, r3},
			{2, recName, `"two"`, store.String, r2},
			{1, recName, "1", store.Integer, f.rec},
		}
		for i, w := range want {
			v := vs[i]
			assert.Equal(t, w.version, v.Version, "item %d: newest first", i)
			assert.Equal(t, w.name, v.Name, "item %d: the name of that state (renaming keeps history)", i)
			assert.Equal(t, w.typ, v.Type, "item %d: type", i)
			assert.Equal(t, w.value, string(v.Value), "item %d: value", i)
			assert.Equal(t, stamp(w.rec.UpdatedAt), stamp(v.ChangedAt), "item %d: changed_at is when that state was written", i)
			assert.Equal(t, f.rec.ID, v.RecordID, "item %d: the record's id", i)
		}
		// Paging.
		q := store.NewListQuery()
		q.Limit, q.Offset = 1, 1
		page, total, err := f.s.FindRecordVersions(f.ctx, p, q)
		require.NoError(t, err, "FindRecordVersions limit 1 offset 1")
		assert.Equal(t, 3, total, "total counts every state")
		assert.Equal(t, []int64{2}, versionNumbers(page), "the second state")
		q.Limit, q.Offset = 2, 0
		page, _, err = f.s.FindRecordVersions(f.ctx, p, q)
		require.NoError(t, err, "FindRecordVersions limit 2")
		assert.Equal(t, []int64{3, 2}, versionNumbers(page), "the first two states")
		q.Limit, q.Offset = 10, 3
		page, total, err = f.s.FindRecordVersions(f.ctx, p, q)
		require.NoError(t, err, "FindRecordVersions past the end")
		assert.Empty(t, page, "no states past the end")
		assert.Equal(t, 3, total, "total past the end")

		// One version.
		old, err := f.s.FindRecordVersion(f.ctx, p, 1)
		require.NoError(t, err, "FindRecordVersion 1")
		assert.Equal(t, recordView{f.rec.ID, recName, store.Integer, "1", 1, stamp(f.rec.CreatedAt), stamp(f.rec.UpdatedAt), owner},
			viewRecord(old), "the record as it was at version 1")
		assert.Equal(t, f.rec.ETag(), old.ETag(), "with the tag it had then")
		cur, err := f.s.FindRecordVersion(f.ctx, p, 3)
		require.NoError(t, err, "FindRecordVersion of the current version")
		assert.Equal(t, viewRecord(r3), viewRecord(cur), "the current record")
		for _, n := range []int64{4, 1000, 0, -1} {
			_, err := f.s.FindRecordVersion(f.ctx, p, n)
			assertNotFound(t, err, "version", strconv.FormatInt(n, 10), "version %d was never reached", n)
		}
		_, err = f.s.FindRecordVersion(f.ctx, setLevel(f.path(3), 3, "missing"), 1)
		assertNotFound(t, err, "record", "missing", "FindRecordVersion of a missing record")
		_, _, err = f.s.FindRecordVersions(f.ctx, setLevel(f.path(3), 3, "missing"), store.NewListQuery())
		assertNotFound(t, err, "record", "missing", "FindRecordVersions of a missing record")
		_, _, err = f.s.FindRecordVersions(f.ctx, setLevel(f.path(3), 2, "missing"), store.NewListQuery())
		assertNotFound(t, err, "cluster", "missing", "FindRecordVersions in a missing cluster")
		stranger := p
		stranger.Caller.UserID = "mallory"
		_, _, err = f.s.FindRecordVersions(f.ctx, stranger, store.NewListQuery())
		assert.ErrorIs(t, err, store.ErrPermissionDenied, "FindRecordVersions under someone else's project")
	})

	t.Run("Pruning", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		for i := 2; i <= 7; i++ {
			_, err := f.s.UpdateRecord(f.ctx, f.path(3), keep(3), setValue(i))
			require.NoError(t, err, "update %d", i)
		}
		vs := versionsOf(t, f.s, f.path(3))
		assert.Equal(t, []int64{7, 6, 5, 4}, versionNumbers(vs), "the current state and the newest 3 versions")
		assert.Equal(t, []string{"7", "6", "5", "4"}, versionValues(vs), "their values")
		for _, n := range []int64{1, 3} {
			_, err := f.s.FindRecordVersion(f.ctx, f.path(3), n)
			assertNotFound(t, err, "version", strconv.Itoa(int(n)), "version %d was dropped", n)
			_, err = f.s.RestoreRecord(f.ctx, f.path(3), n, keep(3))
			assertNotFound(t, err, "version", strconv.Itoa(int(n)), "restoring dropped version %d", n)
		}
		_, err := f.s.UpdateRecord(f.ctx, f.path(3), keep(1), setValue(8))
		require.NoError(t, err, "update with fewer versions kept")
		assert.Equal(t, []int64{8, 7}, versionNumbers(versionsOf(t, f.s, f.path(3))), "a smaller limit drops more")
		_, err = f.s.UpdateRecord(f.ctx, f.path(3), keep(0), setValue(9))
		require.NoError(t, err, "update keeping none")
		assert.Equal(t, []int64{9}, versionNumbers(versionsOf(t, f.s, f.path(3))), "0 keeps none")
		_, err = f.s.FindRecordVersion(f.ctx, f.path(3), 8)
		assertNotFound(t, err, "version", "8", "nothing kept")
	})

	t.Run("Restore", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		_, err := f.s.UpdateRecord(f.ctx, f.path(3), keep(10), func(r *store.Record) error {
			r.Name, r.Type, r.Value = "renamed", store.String, json.RawMessage(`"two"`)
			return nil
		})
		require.NoError(t, err, "update")
		p := setLevel(f.path(3), 3, "renamed")
		tick()
		r, err := f.s.RestoreRecord(f.ctx, p, 1, store.Write{MaxVersions: 10})
		require.NoError(t, err, "RestoreRecord 1")
		assert.Equal(t, int64(3), r.Version, "a restore is a new version")
		assert.Equal(t, "renamed", r.Name, "the name stays")
		assert.Equal(t, store.Integer, r.Type, "the type of version 1")
		assert.Equal(t, "1", string(r.Value), "the value of version 1")
		assert.Equal(t, owner, r.UpdatedBy, "the restorer wrote it")
		assert.True(t, r.UpdatedAt.After(f.rec.UpdatedAt), "UpdatedAt moves")
		got, err := f.s.FindRecord(f.ctx, p)
		require.NoError(t, err, "FindRecord")
		assert.Equal(t, viewRecord(r), viewRecord(got), "FindRecord returns the restored record")
		vs := versionsOf(t, f.s, p)
		assert.Equal(t, []int64{3, 2, 1}, versionNumbers(vs), "the replaced state is kept")
		assert.Equal(t, []string{"1", `"two"`, "1"}, versionValues(vs), "values")

		again, err := f.s.RestoreRecord(f.ctx, p, 3, keep(10))
		require.NoError(t, err, "restoring the current version")
		assert.Equal(t, int64(4), again.Version, "is a new version too")
		assert.Equal(t, "1", string(again.Value), "with the same value")

		_, err = f.s.RestoreRecord(f.ctx, p, 2, store.Write{IfMatch: []string{r.ETag()}, MaxVersions: 10})
		assertPrecondition(t, err, again, "RestoreRecord with a stale tag")
		_, err = f.s.RestoreRecord(f.ctx, p, 9, store.Write{IfMatch: []string{r.ETag()}})
		assertNotFound(t, err, "version", "9", "a version never reached before the precondition")
		_, err = f.s.RestoreRecord(f.ctx, setLevel(f.path(3), 3, "missing"), 1, keep(10))
		assertNotFound(t, err, "record", "missing", "RestoreRecord of a missing record")
		restored, err := f.s.RestoreRecord(f.ctx, p, 2, store.Write{IfMatch: []string{again.ETag()}, MaxVersions: 10})
		require.NoError(t, err, "RestoreRecord with the current tag")
		assert.Equal(t, `"two"`, string(restored.Value), "version 2's value")
		assert.Equal(t, store.String, restored.Type, "version 2's type")
	})

	t.Run("DeleteDropsHistory", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		for i := 2; i <= 4; i++ {
			_, err := f.s.UpdateRecord(f.ctx, f.path(3), keep(10), setValue(i))
			require.NoError(t, err, "update %d", i)
		}
		require.NoError(t, f.s.DeleteRecord(f.ctx, f.path(3), store.Write{}), "DeleteRecord")
		mustRecord(t, f.s, f.path(3), store.Integer, "1")
		vs := versionsOf(t, f.s, f.path(3))
		assert.Equal(t, []int64{1}, versionNumbers(vs), "a record created again under the name has no history")
		_, err := f.s.FindRecordVersion(f.ctx, f.path(3), 2)
		assertNotFound(t, err, "version", "2", "the deleted record's versions are gone")
		// Deleting the cluster drops everything beneath it too.
		_, err = f.s.UpdateRecord(f.ctx, f.path(3), keep(10), setValue(5))
		require.NoError(t, err, "update")
		require.NoError(t, f.s.DeleteCluster(f.ctx, f.path(2)), "DeleteCluster")
		_, _, err = f.s.FindRecordVersions(f.ctx, f.path(3), store.NewListQuery())
		assertNotFound(t, err, "cluster", clusName, "after DeleteCluster")
	})

	t.Run("ConcurrentUpdatesKeepEveryState", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		errs := race(racers, func(i int) error {
			_, err := f.s.UpdateRecord(f.ctx, f.path(3), keep(racers), setValue(100+i))
			return err
		})
		for i, err := range errs {
			assert.NoError(t, err, "goroutine %d", i)
		}
		vs := versionsOf(t, f.s, f.path(3))
		want := make([]int64, 0, racers+1)
		for v := int64(racers + 1); v >= 1; v-- {
			want = append(want, v)
		}
		assert.Equal(t, want, versionNumbers(vs), "every state is kept once, in order")
	})

	t.Run("Reseal", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		p := setLevel(f.path(3), 3, "secret")
		r := mustRecord(t, f.s, p, store.Credential, `"sealed-old-1"`)
		_, err := f.s.UpdateRecord(f.ctx, p, keep(10), func(r *store.Record) error {
			r.Value = json.RawMessage(`"sealed-old-2"`)
			return nil
		})
		require.NoError(t, err, "update")
		_, err = f.s.UpdateRecord(f.ctx, p, keep(10), func(r *store.Record) error {
			r.Type, r.Value = store.String, json.RawMessage(`"plain"`)
			return nil
		})
		require.NoError(t, err, "to STRING")
		last, err := f.s.UpdateRecord(f.ctx, p, keep(10), func(r *store.Record) error {
			r.Type, r.Value = store.ArrayOf(store.Credential), json.RawMessage(`["sealed-old-3"]`)
			return nil
		})
		require.NoError(t, err, "to []CREDENTIAL")
		before := versionsOf(t, f.s, p)

		var seen []string
		changed, err := f.s.ResealRecord(f.ctx, r.ID, func(typ store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
			seen = append(seen, string(typ)+" "+string(v))
			return json.RawMessage(strings.ReplaceAll(string(v), "old", "new")), true, nil
		})
		require.NoError(t, err, "ResealRecord")
		assert.True(t, changed, "ResealRecord reports a change")
		assert.ElementsMatch(t, []string{`[]CREDENTIAL ["sealed-old-3"]`, `CREDENTIAL "sealed-old-2"`, `CREDENTIAL "sealed-old-1"`}, seen,
			"reseal sees every credential state, and no other")
		got, err := f.s.FindRecord(f.ctx, p)
		require.NoError(t, err, "FindRecord")
		want := viewRecord(last)
		want.Value = `["sealed-new-3"]`
		assert.Equal(t, want, viewRecord(got), "only the value changed: version, timestamps and author stay")
		assert.Equal(t, last.ETag(), got.ETag(), "the tag stays")
		after := versionsOf(t, f.s, p)
		require.Len(t, after, len(before), "the history keeps its length")
		for i := range before {
			b, a := before[i], after[i]
			assert.Equal(t, []any{b.Version, b.Name, b.Type, stamp(b.ChangedAt), b.ChangedBy},
				[]any{a.Version, a.Name, a.Type, stamp(a.ChangedAt), a.ChangedBy}, "version %d: only the value changes", b.Version)
		}
		assert.Equal(t, []string{`["sealed-new-3"]`, `"plain"`, `"sealed-new-2"`, `"sealed-new-1"`}, versionValues(after),
			"credential versions re-sealed, others untouched")

		changed, err = f.s.ResealRecord(f.ctx, r.ID, func(_ store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
			return v, false, nil
		})
		require.NoError(t, err, "ResealRecord with nothing to do")
		assert.False(t, changed, "nothing changed")
		boom := errors.New("does not open")
		calls := 0
		_, err = f.s.ResealRecord(f.ctx, r.ID, func(_ store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
			calls++
			if calls == 2 {
				return nil, false, boom
			}
			return json.RawMessage(`"changed"`), true, nil
		})
		assert.ErrorIs(t, err, boom, "reseal's error is returned")
		assert.Equal(t, []string{`["sealed-new-3"]`, `"plain"`, `"sealed-new-2"`, `"sealed-new-1"`}, versionValues(versionsOf(t, f.s, p)),
			"an error changes nothing")
		_, err = f.s.ResealRecord(f.ctx, store.NewID(), func(_ store.DataType, v json.RawMessage) (json.RawMessage, bool, error) {
			return v, false, nil
		})
		assert.ErrorIs(t, err, store.ErrNotFound, "ResealRecord of an unknown id")
	})

	t.Run("CredentialInHistoryIsListed", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		p := setLevel(f.path(3), 3, "was-secret")
		r := mustRecord(t, f.s, p, store.Credential, `"sealed"`)
		_, err := f.s.UpdateRecord(f.ctx, p, keep(10), func(r *store.Record) error {
			r.Type, r.Value = store.Integer, json.RawMessage("5")
			return nil
		})
		require.NoError(t, err, "CREDENTIAL to INTEGER")
		refs, err := f.s.FindCredentialRecords(f.ctx, "", 10)
		require.NoError(t, err, "FindCredentialRecords")
		assert.Equal(t, []string{r.ID}, refIDs(refs), "a record whose history holds a credential is listed")
		_, err = f.s.UpdateRecord(f.ctx, p, keep(0), setValue(6))
		require.NoError(t, err, "update dropping the history")
		refs, err = f.s.FindCredentialRecords(f.ctx, "", 10)
		require.NoError(t, err, "FindCredentialRecords")
		assert.Empty(t, refIDs(refs), "once the credential version is dropped, it is not")
	})

	t.Run("Copies", func(t *testing.T) {
		f := newFixture(t, newStore(t))
		_, err := f.s.UpdateRecord(f.ctx, f.path(3), keep(10), setValue(2))
		require.NoError(t, err, "update")
		vs := versionsOf(t, f.s, f.path(3))
		for _, v := range vs {
			v.Value[0] = 'X'
			v.Name = "changed"
		}
		old, err := f.s.FindRecordVersion(f.ctx, f.path(3), 1)
		require.NoError(t, err, "FindRecordVersion")
		old.Value[0] = 'X'
		assert.Equal(t, []string{"2", "1"}, versionValues(versionsOf(t, f.s, f.path(3))), "changing returned versions changes nothing")
		assert.Equal(t, fmt.Sprint([]string{recName, recName}), fmt.Sprint(func() []string {
			var names []string
			for _, v := range versionsOf(t, f.s, f.path(3)) {
				names = append(names, v.Name)
			}
			return names
		}()), "names unchanged")
	})
}
