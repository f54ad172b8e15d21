package sqlite_test

// TestDescendingRunsLikeTheMemoryStore fills one cluster of the SQLite
// store and of the memory store (the reference) with the same ops under
// one fake clock (a batch's records share created_at or updated_at, and
// some consecutive batches share their time too), then compares random
// record lists: every sort both ways, the filters, limits, offsets,
// cursors (of records in the list, of others, of records since deleted
// or changed), walks by cursor, with and without the count. Written for
// descByRuns (migration 0008), it checks every list. DIFF_SEED, DIFF_N
// (records) and DIFF_Q (queries) run it otherwise; the seed is logged.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

func TestDescendingRunsLikeTheMemoryStore(t *testing.T) {
	seed := uint64(1)
	if v := os.Getenv("DIFF_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	n := 300
	if v := os.Getenv("DIFF_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	queries := 500
	if v := os.Getenv("DIFF_Q"); v != "" {
		queries, _ = strconv.Atoi(v)
	}
	t.Logf("seed %d n %d queries %d", seed, n, queries)
	rnd := rand.New(rand.NewPCG(seed, 1))
	ctx := context.Background()

	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { return clock }
	sq := open(t)
	sq.Now = now
	me := memory.New()
	me.Now = now
	stores := []store.Store{sq, me}
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k"}
	for _, s := range stores {
		_, err := s.CreateProject(ctx, p)
		require.NoError(t, err)
		_, err = s.Apply(ctx, p, store.Batch{CreateParents: true, Ops: []store.Op{{Kind: store.OpCreate, Collection: "c", Cluster: "k",
			Record: "taken", New: &store.Record{Type: store.Integer, Value: json.RawMessage("0")}}}})
		require.NoError(t, err)
	}
	types := []store.DataType{store.Integer, store.String, store.Boolean, store.Float, store.Null}
	value := func(typ store.DataType) string {
		switch typ {
		case store.Integer:
			return strconv.Itoa(rnd.IntN(6))
		case store.String:
			long := strings.Repeat("x", 70) // keys cut at 64 bytes, ordered by their texts (keyprefix.go)
			return strconv.Quote([]string{"abc", "ab", "xyz", "1a", "b", "Abcd", long + "a", long + "b", long + "ab", long}[rnd.IntN(10)])
		case store.Boolean:
			return []string{"true", "false"}[rnd.IntN(2)]
		case store.Float:
			return []string{"1.5", "2.5", "0.25"}[rnd.IntN(3)]
		}
		return "null"
	}
	apply := func(ops []store.Op) {
		for _, s := range stores {
			_, err := s.Apply(ctx, p, store.Batch{Ops: ops})
			require.NoError(t, err)
		}
	}
	tick := func() {
		if rnd.IntN(10) < 7 {
			clock = clock.Add(time.Duration(1+rnd.IntN(3)) * time.Microsecond)
		}
	}
	var names []string
	alive := map[string]bool{}
	made := 0
	for made < n {
		tick()
		size := []int{1, 1, 2, 5, 13, 40}[rnd.IntN(6)]
		var ops []store.Op
		for range size {
			name := fmt.Sprintf("r%04d", rnd.IntN(100000))
			if alive[name] {
				continue
			}
			alive[name] = true
			names = append(names, name)
			typ := types[rnd.IntN(len(types))]
			v := json.RawMessage(value(typ))
			ops = append(ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: name,
				New: &store.Record{Type: typ, Value: v}})
			made++
		}
		if len(ops) > 0 {
			apply(ops)
		}
		if rnd.IntN(4) == 0 { // an update batch
			tick()
			ops = nil
			seen := map[string]bool{}
			for range 1 + rnd.IntN(20) {
				name := names[rnd.IntN(len(names))]
				if !alive[name] || seen[name] {
					continue
				}
				seen[name] = true
				v := value(store.Integer)
				ops = append(ops, store.Op{Kind: store.OpUpdate, Collection: "c", Cluster: "k", Record: name,
					Update: func(r *store.Record) error {
						r.Type, r.Value = store.Integer, json.RawMessage(v)
						return nil
					}})
			}
			if len(ops) > 0 {
				apply(ops)
			}
		}
	}

	sorts := []store.SortField{store.SortCreatedAt, store.SortUpdatedAt, store.SortType, store.SortName, store.SortValue, store.SortID}
	randomQuery := func() store.RecordQuery {
		var q store.RecordQuery
		q.SortBy = sorts[rnd.IntN(len(sorts))]
		if rnd.IntN(6) < 2 {
			q.SortBy = sorts[rnd.IntN(3)]
		}
		q.Desc = rnd.IntN(4) != 0
		q.Limit = []int{1, 2, 3, 5, 10, 50, 1000}[rnd.IntN(7)]
		if rnd.IntN(3) == 0 {
			q.Offset = rnd.IntN(len(names) + 5)
		}
		q.NoCount = rnd.IntN(3) == 0
		switch rnd.IntN(8) {
		case 0, 1:
			q.Type = types[rnd.IntN(len(types))]
		}
		switch rnd.IntN(8) {
		case 0:
			q.ValueContains = []string{"a", "b", "1", "abc", "ab", "xyz", "5", "tru"}[rnd.IntN(8)]
		case 1:
			q.Search = []string{"r", "r0", "1", "r00", "23", "r01"}[rnd.IntN(6)]
		case 2:
			q.HasValue, q.Value = true, []string{"1", "abc", "true", "2.5", "null"}[rnd.IntN(5)]
		case 3:
			q.Type = store.Integer
			lo := store.KeyOf(store.Integer, json.RawMessage(strconv.Itoa(rnd.IntN(4))))
			q.Min = &lo
			if rnd.IntN(2) == 0 {
				hi := store.KeyOf(store.Integer, json.RawMessage(strconv.Itoa(2+rnd.IntN(4))))
				q.Max = &hi
			}
		}
		return q
	}
	find := func(s store.Store, q store.RecordQuery) ([]string, int, []*store.Record) {
		t.Helper()
		rs, total, err := s.FindRecords(ctx, p, q)
		require.NoError(t, err, "%+v", q)
		out := []string{}
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out, total, rs
	}
	byName := func(s store.Store, name string) *store.Record {
		rs, _, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: store.ListQuery{Limit: store.MaxLimit, Search: name}})
		require.NoError(t, err)
		for _, r := range rs {
			if r.Name == name {
				return r
			}
		}
		return nil
	}
	type posPair struct {
		by   store.SortField
		s, m store.Position
	}
	var saved []posPair
	fails := 0
	check := func(q store.RecordQuery, mq store.RecordQuery, what string) {
		sn, st, _ := find(sq, q)
		mn, mt, _ := find(me, mq)
		if fmt.Sprint(sn) != fmt.Sprint(mn) || st != mt {
			fails++
			if fails <= 25 {
				after := ""
				if q.After != nil {
					after = fmt.Sprintf(" after %+v", *q.After)
				}
				t.Errorf("%s: query %+v%s\n sqlite (%d) %v\n memory (%d) %v", what, q, after, st, sn, mt, mn)
			}
		}
	}
	run := func(count int) {
		for range count {
			q := randomQuery()
			check(q, q, "page")
			// A cursor: from a random record of the whole list (a
			// record the list holds, or any record: its position may
			// be outside the filter).
			cq := q
			cq.Offset = 0
			if rnd.IntN(5) == 0 {
				cq.Offset = rnd.IntN(10)
			}
			name := names[rnd.IntN(len(names))]
			rs, rm := byName(sq, name), byName(me, name)
			if (rs == nil) != (rm == nil) {
				t.Fatalf("%s: present in one store only", name)
			}
			if rs == nil || (cq.SortBy == store.SortValue && cq.Type != "" && (rs.Type != cq.Type || rm.Type != cq.Type)) {
				continue // a position of another type under a type filter: another list's cursor (400 at the API)
			}
			ps, pm := store.RecordAt(cq.SortBy, rs), store.RecordAt(cq.SortBy, rm)
			saved = append(saved, posPair{cq.SortBy, ps, pm})
			cq.After = &ps
			cmq := cq
			cmq.After = &pm
			check(cq, cmq, "cursor")
			// Walk the rest by cursor.
			for range 3 {
				_, _, srs := find(sq, cq)
				_, _, mrs := find(me, cmq)
				if len(srs) == 0 || len(mrs) == 0 || srs[len(srs)-1].Name != mrs[len(mrs)-1].Name {
					break
				}
				ps, pm := store.RecordAt(cq.SortBy, srs[len(srs)-1]), store.RecordAt(cq.SortBy, mrs[len(mrs)-1])
				cq.After, cmq.After = &ps, &pm
				check(cq, cmq, "walk")
			}
		}
	}
	run(queries)
	// Delete and update some records, then resume from positions saved
	// before (cursors of records that are gone or moved).
	var ops []store.Op
	for _, name := range names {
		if alive[name] && rnd.IntN(4) == 0 {
			ops = append(ops, store.Op{Kind: store.OpDelete, Collection: "c", Cluster: "k", Record: name})
			alive[name] = false
		}
	}
	tick()
	apply(ops)
	for range min(len(saved), queries/2) {
		sp := saved[rnd.IntN(len(saved))]
		q := randomQuery()
		q.SortBy, q.Offset = sp.by, 0
		if q.SortBy == store.SortValue && q.Type != "" {
			continue
		}
		mq := q
		ps, pm := sp.s, sp.m
		q.After, mq.After = &ps, &pm
		check(q, mq, "stale cursor")
	}
	run(queries / 4)
	assert.Zero(t, fails, "lists unlike the memory store's")
}
