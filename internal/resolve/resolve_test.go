package resolve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hds-go/hds/store"
)

// fakeReader is a project in memory: clusters by "collection/cluster",
// counting the clusters read. Credentials are stored as their plain value
// prefixed with "sealed:" so that Open has something to undo.
type fakeReader struct {
	clusters map[string][]*store.Record
	reads    int
	opened   int
	fail     error
}

func (f *fakeReader) Cluster(_ context.Context, collection, cluster string) ([]*store.Record, bool, error) {
	f.reads++
	if f.fail != nil {
		return nil, false, f.fail
	}
	recs, ok := f.clusters[collection+"/"+cluster]
	return recs, ok, nil
}

func (f *fakeReader) Open(r *store.Record) (json.RawMessage, error) {
	f.opened++
	var s string
	if err := json.Unmarshal(r.Value, &s); err != nil {
		return nil, err
	}
	plain, ok := strings.CutPrefix(s, "sealed:")
	if !ok {
		return nil, errors.New("does not open")
	}
	return json.Marshal(plain)
}

// add puts a record of type t and JSON value v in the cluster at (coll/k)
// and returns it.
func (f *fakeReader) add(at, name string, t store.DataType, v string) *store.Record {
	if f.clusters == nil {
		f.clusters = map[string][]*store.Record{}
	}
	r := &store.Record{ID: at + "/" + name, Name: name, Type: t, Value: json.RawMessage(v), Version: 1}
	f.clusters[at] = append(f.clusters[at], r)
	return r
}

func str(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// resolveOne resolves r, an answer record of c/k, and returns its shown
// value or the error.
func resolveOne(f *fakeReader, r *store.Record, o Options) (*Resolver, string, error) {
	rv := New(context.Background(), f, "c", "k", o)
	if err := rv.Resolve([]*store.Record{r}); err != nil {
		return rv, "", err
	}
	return rv, string(rv.Shown(r).Value), nil
}

func wantError(t *testing.T, err error, details string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want *Error %q", err, details)
	}
	if e.Error() != details {
		t.Fatalf("details %q, want %q", e.Error(), details)
	}
}

func TestResolveForms(t *testing.T) {
	f := &fakeReader{}
	f.add("c/k", "user", store.String, str("admin"))
	f.add("c/db", "host", store.String, str("db.internal"))
	f.add("c/db", "port", store.Integer, `5432`)
	f.add("c/db", "password", store.Credential, str("sealed:s3cr'et"))
	f.add("d/db", "host", store.String, str("other"))
	f.add("c/k", "list", store.ArrayOf(store.String), `["${user}","${db/password}","x"]`)
	url := f.add("c/k", "url", store.String, str("pg://${user}:${db/password}@${db/host}:${db/port} ${d/db/host} $${x} ${ no}"))
	_, got, err := resolveOne(f, url, Options{Reveal: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := str("pg://admin:s3cr'et@db.internal:5432 other ${x} ${ no}"); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	_, got, _ = resolveOne(f, url, Options{})
	if got != `"********"` {
		t.Fatalf("masked: got %s", got)
	}
	rv, got, _ := resolveOne(f, f.clusters["c/k"][1], Options{})
	if got != `["admin","********","x"]` {
		t.Fatalf("list: got %s", got)
	}
	if len(rv.Revealed()) != 0 {
		t.Fatal("Revealed without reveal")
	}
	typed := f.add("c/k", "typed", store.String, str("${list}|${db/port}"))
	_, got, _ = resolveOne(f, typed, Options{Reveal: true})
	if want := str(`["admin","s3cr'et","x"]|5432`); got != want {
		t.Fatalf("typed: got %s, want %s", got, want)
	}
}

func TestResolveFailures(t *testing.T) {
	f := &fakeReader{}
	f.add("c/k", "a", store.String, str("${b}"))
	f.add("c/k", "b", store.String, str("x${a}"))
	f.add("c/k", "self", store.ArrayOf(store.String), `["ok","${self}"]`)
	f.add("c/k", "missing", store.String, str("${here} ${nowhere}"))
	f.add("c/k", "here", store.Null, `null`)
	for _, tc := range []struct{ name, details string }{
		{"a", "record a: ${b}: cycle"},
		{"self", "record self: ${self}: cycle"},
		{"missing", "record missing: ${nowhere}: not found"},
	} {
		var r *store.Record
		for _, x := range f.clusters["c/k"] {
			if x.Name == tc.name {
				r = x
			}
		}
		_, _, err := resolveOne(f, r, Options{})
		wantError(t, err, tc.details)
	}
	// A failure of the store is the store's.
	broken := &fakeReader{fail: errors.New("down")}
	r := broken.add("c/k", "x", store.String, str("${db/y}"))
	if _, _, err := resolveOne(broken, r, Options{}); err == nil || err.Error() != "down" {
		t.Fatalf("store failure: %v", err)
	}
}

// chain makes r0 -> r1 -> ... -> r(n-1) -> "end", each record in cluster
// c/k(i%spread), and returns r0.
func chain(f *fakeReader, n, spread int) *store.Record {
	var first *store.Record
	for i := range n {
		v := str(fmt.Sprintf("${c/k%d/r%d}+", (i+1)%spread, i+1))
		if i == n-1 {
			v = str("end")
		}
		r := f.add(fmt.Sprintf("c/k%d", i%spread), fmt.Sprintf("r%d", i), store.String, v)
		if i == 0 {
			first = r
		}
	}
	return first
}

func TestResolveDepthCountedBeforeEachStep(t *testing.T) {
	// 10 references resolve.
	f := &fakeReader{}
	_, got, err := resolveOne(f, chain(f, 11, 11), Options{})
	if err != nil || got != str("end++++++++++") {
		t.Fatalf("10 deep: %s %v", got, err)
	}
	// A chain of 50,000, every link in a cluster of its own: too deep
	// after at most 11 reads, on an explicit stack.
	f = &fakeReader{}
	r0 := chain(f, 50_000, 50_000)
	_, _, err = resolveOne(f, r0, Options{})
	wantError(t, err, "record r0: ${c/k1/r1}: too deep")
	if f.reads > MaxDepth+1 {
		t.Fatalf("%d reads before too deep, want at most %d", f.reads, MaxDepth+1)
	}
	// A record already resolved counts its height where it is met again.
	f = &fakeReader{}
	mid := chain(f, 8, 1) // r0..r7 in c/k0, height 7
	top := f.add("c/k0", "top", store.String, str("${r0}${r0}"))
	deep := f.add("c/k0", "deep", store.String, str("${a}"))
	f.add("c/k0", "a", store.String, str("${b}"))
	f.add("c/k0", "b", store.String, str("${c}"))
	f.add("c/k0", "c", store.String, str("${r0}"))
	rv := New(context.Background(), f, "c", "k0", Options{})
	if err := rv.Resolve([]*store.Record{mid, top}); err != nil {
		t.Fatal(err)
	}
	wantError(t, rv.Resolve([]*store.Record{deep}), "record deep: ${a}: too deep")
}

func TestResolveMemo(t *testing.T) {
	// A record referenced 1,000 times, by 1,000 records of the answer,
	// is read once and opened once.
	f := &fakeReader{}
	f.add("c/db", "password", store.Credential, str("sealed:pw"))
	var answer []*store.Record
	for i := range 1000 {
		answer = append(answer, f.add("c/k", fmt.Sprintf("r%d", i), store.String, str("${db/password}")))
	}
	rv := New(context.Background(), f, "c", "k", Options{Reveal: true})
	rv.Seed(f.clusters["c/k"])
	if err := rv.Resolve(answer); err != nil {
		t.Fatal(err)
	}
	if f.reads != 1 || f.opened != 1 {
		t.Fatalf("%d reads and %d opens, want 1 and 1", f.reads, f.opened)
	}
	got := rv.Revealed()
	if len(got) != 1 || got[0].Record.Name != "password" || got[0].Collection != "c" || got[0].Cluster != "db" {
		t.Fatalf("Revealed: %+v", got)
	}
	// 200 references each, two levels deep: each record resolved once.
	f = &fakeReader{}
	leaf := f.add("c/k", "leaf", store.String, str("v"))
	mid := f.add("c/k", "mid", store.String, str(strings.Repeat("${leaf}", 200)))
	top := f.add("c/k", "top", store.String, str(strings.Repeat("${mid}", 200)))
	rv, got2, err := resolveOne(f, top, Options{})
	if err != nil || got2 != str(strings.Repeat("v", 40000)) {
		t.Fatalf("%.40s %v", got2, err)
	}
	if n := len(rv.Used()); n != 3 {
		t.Fatalf("used %d records, want 3 (%v %v %v)", n, leaf.Name, mid.Name, top.Name)
	}
}

func TestResolveTooLarge(t *testing.T) {
	big := strings.Repeat("é", MaxValueBytes/2) // 1 MiB of UTF-8
	f := &fakeReader{}
	f.add("c/k", "big", store.String, str(big))
	f.add("c/k", "one", store.String, str("${big}"))
	f.add("c/k", "plus", store.String, str("${big}x"))
	f.add("c/k", "twice", store.String, str("${one}${big}"))
	f.add("c/k", "deeper", store.String, str("${plus}"))
	f.add("c/k", "list", store.ArrayOf(store.String), `["${one}","${big}"]`)
	f.add("c/k", "listtext", store.String, str("${list}"))
	f.add("c/k", "elem", store.ArrayOf(store.String), `["ok","${plus}"]`)
	rec := func(name string) *store.Record {
		for _, r := range f.clusters["c/k"] {
			if r.Name == name {
				return r
			}
		}
		t.Fatalf("no %s", name)
		return nil
	}
	// Exactly 1 MiB resolves.
	if _, got, err := resolveOne(f, rec("one"), Options{}); err != nil || len(got) != len(str(big)) {
		t.Fatalf("1 MiB: %v", err)
	}
	for _, tc := range []struct{ name, details string }{
		{"plus", "record plus: ${big}: too large"},
		{"twice", "record twice: ${big}: too large"},
		{"deeper", "record deeper: ${plus}: too large"},
		{"listtext", "record listtext: ${list}: too large"},
		{"elem", "record elem: ${plus}: too large"},
	} {
		_, _, err := resolveOne(f, rec(tc.name), Options{})
		wantError(t, err, tc.details)
	}
	// Elements of 1 MiB each resolve: the bound is one element's text.
	if _, _, err := resolveOne(f, rec("list"), Options{}); err != nil {
		t.Fatalf("list of two 1 MiB elements: %v", err)
	}
	// The answer in all: the record whose value passed the bound is named.
	rv := New(context.Background(), f, "c", "k", Options{MaxBytes: 3 * MaxValueBytes})
	err := rv.Resolve([]*store.Record{rec("one"), rec("list"), rec("big"), rec("one"), rec("listtext")})
	wantError(t, err, "record listtext: ${list}: too large")
	rv = New(context.Background(), f, "c", "k", Options{MaxBytes: 2*MaxValueBytes + 1})
	wantError(t, rv.Resolve([]*store.Record{rec("big"), rec("one"), rec("list")}), "record list: too large")
	// A value holding no reference is never counted.
	rv = New(context.Background(), f, "c", "k", Options{MaxBytes: 1})
	if err := rv.Resolve([]*store.Record{rec("big"), rec("big")}); err != nil {
		t.Fatalf("plain values counted: %v", err)
	}
	// Credentials count before masking.
	f.add("c/k", "secret", store.Credential, str("sealed:"+strings.Repeat("s", 100)))
	f.add("c/k", "ref", store.String, str("${secret}"))
	rv = New(context.Background(), f, "c", "k", Options{MaxBytes: 99})
	wantError(t, rv.Resolve([]*store.Record{rec("ref")}), "record ref: too large")
}

func TestReach(t *testing.T) {
	f := &fakeReader{}
	f.add("c/db", "host", store.String, str("${missing} ${port}"))
	f.add("c/db", "port", store.Integer, `1`)
	skipped := f.add("c/k", "not-env", store.String, str("${db/host} ${nowhere}"))
	rv := New(context.Background(), f, "c", "k", Options{})
	if err := rv.Reach(skipped); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rv.Used() {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "host,port,not-env" {
		t.Fatalf("used %v", names)
	}
}
