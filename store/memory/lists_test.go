package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hds-go/hds/internal/sortkey"
	"github.com/hds-go/hds/store"
)

// listCluster fills a cluster with n records made to tie: few distinct
// values per type, timestamps shared by runs of records longer than
// maxRun, a rare type, renamed and deleted records.
func listCluster(t *testing.T, n int) (*Store, *cluster) {
	t.Helper()
	ctx := context.Background()
	s := New(WithQuotas(store.NoQuotas))
	calls := 0
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { calls++; return base.Add(time.Duration(calls/300) * time.Second) }
	p := store.Path{Project: "p", Collection: "c", Cluster: "k"}
	for _, err := range []error{
		func() error { _, err := s.CreateProject(ctx, p); return err }(),
		func() error { _, err := s.CreateCollection(ctx, p); return err }(),
		func() error { _, err := s.CreateCluster(ctx, p); return err }(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	value := func(i int) (store.DataType, string) {
		switch i % 11 {
		case 0, 1, 2:
			return store.Integer, fmt.Sprint(rnd.IntN(40) - 20)
		case 3:
			return store.Float, fmt.Sprintf("%d.5", rnd.IntN(20)-10)
		case 4, 5:
			return store.String, fmt.Sprintf("%q", fmt.Sprintf("s%d", rnd.IntN(15)))
		case 6:
			return store.Boolean, []string{"true", "false"}[rnd.IntN(2)]
		case 7:
			return store.Null, "null"
		case 8:
			return store.Date, fmt.Sprintf(`"2026-01-%02d"`, 1+rnd.IntN(28))
		case 9:
			return store.DateTime, fmt.Sprintf(`"2026-01-01T%02d:00:00+0%d:00"`, rnd.IntN(24), rnd.IntN(3))
		}
		if i%7 == 0 {
			return store.UUID, `"0190f0a0-0000-7000-8000-000000000001"` // rare
		}
		return store.Credential, `"sealed"`
	}
	for i := range n {
		typ, v := value(i)
		p.Record = fmt.Sprintf("r%05d", rnd.IntN(10*n))
		if _, err := s.CreateRecord(ctx, p, &store.Record{Type: typ, Value: json.RawMessage(v)}, store.Write{}); err != nil {
			var exists *store.ExistsError
			if !errors.As(err, &exists) {
				t.Fatal(err)
			}
		}
	}
	k, err := s.cluster(p)
	if err != nil {
		t.Fatal(err)
	}
	// Updates (new updated_at, values, names) and deletes.
	for i, r := range k.records.all() {
		p.Record = r.Name()
		switch i % 5 {
		case 0:
			typ, v := value(rnd.IntN(11))
			_, err = s.UpdateRecord(ctx, p, store.Write{MaxVersions: 1}, func(x *store.Record) error {
				x.Type, x.Value = typ, json.RawMessage(v)
				return nil
			})
		case 1:
			_, err = s.UpdateRecord(ctx, p, store.Write{}, func(x *store.Record) error { x.Name = "n" + x.Name; return nil })
		case 2:
			if i%3 == 0 {
				err = s.DeleteRecord(ctx, p, store.Write{})
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return s, k
}

// referenceList is what a list holds: every match, sorted (the scan and
// sort the indexes replace).
func referenceList(k *cluster, q store.RecordQuery) []*record {
	m := newRecordMatcher(q)
	var out []*record
	k.records.scan(func(r *record) bool {
		if m.matches(r) {
			out = append(out, r)
		}
		return true
	})
	slices.SortFunc(out, recordOrder(q.ListQuery))
	return out
}

func key(v store.DataType, text string) *store.ValueKey {
	raw, err := v.ParseText(text, true)
	if err != nil {
		panic(err)
	}
	k := store.KeyOf(v, raw)
	return &k
}

// TestListsMatchScan checks every list of docs/api.md#list-queries read
// from the indexes against the whole cluster filtered and sorted: every
// sort and direction, each filter, counted and not, page by page by cursor
// and by offset.
func TestListsMatchScan(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 800
	}
	// The large cluster is read from its indexes; the small one (fewer
	// records than a list keeps aside) is filtered whole.
	for _, n := range []int{n, 60} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testListsMatchScan(t, n) })
	}
}

func testListsMatchScan(t *testing.T, n int) {
	s, k := listCluster(t, n)
	s.mu.RLock()
	defer s.mu.RUnlock()
	filters := map[string]store.RecordQuery{
		"none":           {},
		"integer":        {Type: store.Integer},
		"string":         {Type: store.String},
		"rare":           {Type: store.UUID},
		"absent":         {Type: store.Time},
		"credential":     {Type: store.Credential},
		"integer-range":  {Type: store.Integer, Min: key(store.Integer, "-5"), Max: key(store.Integer, "7")},
		"integer-min":    {Type: store.Integer, Min: key(store.Integer, "10")},
		"integer-empty":  {Type: store.Integer, Min: key(store.Integer, "10"), Max: key(store.Integer, "-10")},
		"float-max":      {Type: store.Float, Max: key(store.Float, "0.5")},
		"string-range":   {Type: store.String, Min: key(store.String, "s10"), Max: key(store.String, "s3")},
		"date-range":     {Type: store.Date, Min: key(store.Date, "2026-01-10")},
		"datetime-range": {Type: store.DateTime, Max: key(store.DateTime, "2026-01-01T10:00:00+01:00")},
		"search":         {ListQuery: store.ListQuery{Search: "R1"}},
		"contains":       {ValueContains: "S1"},
		"value":          {Value: "5", HasValue: true},
		"value-true":     {Value: "true", HasValue: true},
		"value-null":     {Value: "null", HasValue: true},
		"value-string":   {Value: "s4", HasValue: true},
		"typed-value":    {Type: store.Float, Value: "-3.5", HasValue: true},
		"value-none":     {Value: "nothing", HasValue: true},
		"all":            {Type: store.Integer, Min: key(store.Integer, "-15"), ListQuery: store.ListQuery{Search: "1"}, ValueContains: "1"},
	}
	sorts := []store.SortField{store.SortName, store.SortID, store.SortCreatedAt, store.SortUpdatedAt, store.SortValue, store.SortType}
	for name, f := range filters {
		for _, by := range sorts {
			for _, desc := range []bool{false, true} {
				for _, limit := range []int{7, 150} {
					q := f
					q.SortBy, q.Desc, q.Limit = by, desc, limit
					t.Run(fmt.Sprintf("%s/%s/desc=%v/limit=%d", name, by, desc, limit), func(t *testing.T) {
						checkList(t, k, q)
					})
				}
			}
		}
	}
}

func checkList(t *testing.T, k *cluster, q store.RecordQuery) {
	t.Helper()
	all := referenceList(k, q)
	// By cursor, counted on the first page only.
	seen := 0
	for page := 0; ; page++ {
		q.NoCount = page%2 == 1
		got, total := matchRecords(k, q)
		if !q.NoCount && total != len(all) {
			t.Fatalf("total %d, want %d", total, len(all))
		}
		if q.NoCount && total != store.NotCounted {
			t.Fatalf("total %d with count=false", total)
		}
		want := all[seen:min(seen+q.Limit, len(all))]
		if !samePage(got, want) {
			t.Fatalf("page %d (from item %d): got %v, want %v", page, seen, names(got), names(want))
		}
		seen += len(want)
		if len(got) == 0 || seen == len(all) {
			break
		}
		pos := store.RecordAt(q.SortBy, got[len(got)-1].state())
		q.After = &pos
	}
	// By offset, counted.
	q.After, q.NoCount = nil, false
	for _, off := range []int{1, 40, len(all) - 3, len(all) + 5} {
		if off < 0 {
			continue
		}
		q.Offset = off
		got, total := matchRecords(k, q)
		want := window(all, q.ListQuery)
		if total != len(all) || !samePage(got, want) {
			t.Fatalf("offset %d: got %v (total %d), want %v (total %d)", off, names(got), total, names(want), len(all))
		}
	}
}

func samePage(got, want []*record) bool {
	return len(got) == len(want) && (len(got) == 0 || slices.Equal(got, want))
}

func names(recs []*record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Name()
	}
	return out
}

// TestCompareKeys checks the value order of the indexes against
// sortkey.Compare, integers against floats near where float64 loses
// precision included.
func TestCompareKeys(t *testing.T) {
	values := []struct {
		t store.DataType
		v string
	}{
		{store.Integer, "0"}, {store.Integer, "-1"}, {store.Integer, "3"}, {store.Integer, "9007199254740993"},
		{store.Integer, "9223372036854775807"}, {store.Integer, "-9223372036854775808"},
		{store.Float, "0"}, {store.Float, "-0.5"}, {store.Float, "2.5"}, {store.Float, "3"}, {store.Float, "-1.5"},
		{store.Float, "9007199254740992"}, {store.Float, "9.223372036854775807e18"}, {store.Float, "-9.3e18"},
		{store.Float, "1e300"}, {store.String, `"a"`}, {store.Null, "null"}, {store.Boolean, "true"},
	}
	for _, a := range values {
		for _, b := range values {
			ra, rb := &record{}, &record{}
			ra.set("a", a.t, json.RawMessage(a.v))
			rb.set("b", b.t, json.RawMessage(b.v))
			want := sortkey.Compare(store.KeyOf(a.t, json.RawMessage(a.v)), store.KeyOf(b.t, json.RawMessage(b.v)))
			if got := compareKeys(ra, rb); got != want {
				t.Errorf("compareKeys(%s %s, %s %s) = %d, want %d", a.t, a.v, b.t, b.v, got, want)
			}
		}
	}
}

// TestListsWhileWriting reads lists from the indexes while writers
// create, update, rename and delete records (run with -race): every page
// is in its list's order, without repeats.
func TestListsWhileWriting(t *testing.T) {
	s, k := listCluster(t, 600)
	ctx := context.Background()
	p := store.Path{Project: "p", Collection: "c", Cluster: "k"}
	done := make(chan struct{})
	errs := make(chan error, 8)
	for w := range 2 {
		go func() {
			defer func() { errs <- nil }()
			for i := range 300 {
				p := p
				p.Record = fmt.Sprintf("w%d-%d", w, i%40)
				var err error
				switch i % 4 {
				case 0:
					_, err = s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage(fmt.Sprint(i % 7))}, store.Write{})
				case 1:
					_, err = s.UpdateRecord(ctx, p, store.Write{MaxVersions: 2}, func(r *store.Record) error {
						r.Type, r.Value = store.String, json.RawMessage(fmt.Sprintf(`"x%d"`, i%5))
						return nil
					})
				case 2:
					_, err = s.UpdateRecord(ctx, p, store.Write{}, func(r *store.Record) error { r.Name = "m" + r.Name; return nil })
				case 3:
					p.Record = "m" + p.Record
					err = s.DeleteRecord(ctx, p, store.Write{})
				}
				var nf *store.NotFoundError
				var ex *store.ExistsError
				if err != nil && !errors.As(err, &nf) && !errors.As(err, &ex) {
					errs <- err
					return
				}
			}
		}()
	}
	go func() {
		defer close(done)
		sorts := []store.SortField{store.SortName, store.SortID, store.SortCreatedAt, store.SortUpdatedAt, store.SortValue, store.SortType}
		for i := 0; ; i++ {
			q := store.RecordQuery{ListQuery: store.ListQuery{Limit: 50, SortBy: sorts[i%len(sorts)], Desc: i%2 == 1}}
			if i%3 == 0 {
				q.Type = store.Integer
			}
			s.mu.RLock()
			page, _ := matchRecords(k, q)
			order := recordOrder(q.ListQuery)
			for j := 1; j < len(page); j++ {
				if order(page[j-1], page[j]) >= 0 {
					s.mu.RUnlock()
					errs <- fmt.Errorf("list %+v: %s before %s", q, page[j-1].Name(), page[j].Name())
					return
				}
			}
			s.mu.RUnlock()
			if i == 2000 {
				return
			}
		}
	}()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	<-done
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// TestCountsFollowWrites checks that a remembered total (search and
// valueContains lists) follows every change to the cluster: create,
// rename, update, delete, and a batch rolled back or dry-run.
func TestCountsFollowWrites(t *testing.T) {
	ctx := context.Background()
	s := New()
	p := store.Path{Project: "p", Collection: "c", Cluster: "k"}
	for _, err := range []error{
		func() error { _, err := s.CreateProject(ctx, p); return err }(),
		func() error { _, err := s.CreateCollection(ctx, p); return err }(),
		func() error { _, err := s.CreateCluster(ctx, p); return err }(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	create := func(name, value string) {
		t.Helper()
		p := p
		p.Record = name
		if _, err := s.CreateRecord(ctx, p, &store.Record{Type: store.String, Value: json.RawMessage(value)}, store.Write{}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(q store.RecordQuery) int {
		t.Helper()
		q.Limit, q.SortBy = 10, store.SortName
		_, total, err := s.FindRecords(ctx, p, q)
		if err != nil {
			t.Fatal(err)
		}
		return total
	}
	search := store.RecordQuery{ListQuery: store.ListQuery{Search: "x"}}
	contains := store.RecordQuery{ValueContains: "zz"}
	for i := range 5 {
		create(fmt.Sprintf("x%d", i), `"a"`)
	}
	for i := range 200 { // more than a small cluster, which is scanned whole
		create(fmt.Sprintf("f%03d", i), `"b"`)
	}
	check := func(step string, wantSearch, wantContains int) {
		t.Helper()
		for range 2 { // counted, then remembered
			if n := count(search); n != wantSearch {
				t.Fatalf("%s: search total %d, want %d", step, n, wantSearch)
			}
			if n := count(contains); n != wantContains {
				t.Fatalf("%s: valueContains total %d, want %d", step, n, wantContains)
			}
		}
	}
	check("start", 5, 0)
	create("x5", `"zz"`)
	check("create", 6, 1)
	r := p
	r.Record = "x5"
	if _, err := s.UpdateRecord(ctx, r, store.Write{}, func(x *store.Record) error { x.Name = "y5"; return nil }); err != nil {
		t.Fatal(err)
	}
	check("rename", 5, 1)
	r.Record = "x0"
	if _, err := s.UpdateRecord(ctx, r, store.Write{}, func(x *store.Record) error { x.Value = json.RawMessage(`"zzz"`); return nil }); err != nil {
		t.Fatal(err)
	}
	check("update", 5, 2)
	r.Record = "x1"
	if err := s.DeleteRecord(ctx, r, store.Write{}); err != nil {
		t.Fatal(err)
	}
	check("delete", 4, 2)
	batch := store.Batch{Ops: []store.Op{
		{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: "x9", New: &store.Record{Type: store.String, Value: json.RawMessage(`"zz"`)}},
		{Kind: store.OpDelete, Collection: "c", Cluster: "k", Record: "x2"},
		{Kind: store.OpDelete, Collection: "c", Cluster: "k", Record: "missing"},
	}}
	if _, err := s.Apply(ctx, store.Path{Project: "p"}, batch); err == nil {
		t.Fatal("a batch deleting a missing record succeeded")
	}
	check("rolled back", 4, 2)
	batch.Ops, batch.DryRun = batch.Ops[:2], true
	if _, err := s.Apply(ctx, store.Path{Project: "p"}, batch); err != nil {
		t.Fatal(err)
	}
	check("dry run", 4, 2)
	batch.DryRun = false
	if _, err := s.Apply(ctx, store.Path{Project: "p"}, batch); err != nil {
		t.Fatal(err)
	}
	check("batch", 4, 3)
}
