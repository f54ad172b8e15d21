package hds_test

// Issue 4: CREDENTIAL records as real secrets. These tests look below the
// API, at what each store really holds, move sealed values around behind
// the server's back, rotate keys, and capture the logs.

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
	"github.com/hds-go/hds/store/postgres"
)

// credServer is a client whose store's raw contents the test can read and
// change: the memory store itself, or a direct SQL connection to the
// PostgreSQL database.
type credServer struct {
	*client
	mem *memory.Store // the memory kind
	db  *sqlx.DB      // the postgres kind: a connection of the test's own
}

// credNewServer is newServer (see there) on a store whose raw contents
// stay reachable.
func credNewServer(t *testing.T, kind storeKind, opts ...hds.Option) *credServer {
	t.Helper()
	cs := &credServer{}
	var st store.Store
	var users store.UserDirectory
	switch kind.name {
	case "memory":
		cs.mem = memory.New()
		st, users = cs.mem, cs.mem
	case "postgres":
		dbURL := pgtest.NewURL(t) // skips, or fails, as pgtest decides
		served, err := sqlx.Open("postgres", dbURL)
		if err != nil {
			t.Fatal(err)
		}
		served.SetMaxOpenConns(4)
		t.Cleanup(func() { served.Close() })
		if cs.db, err = sqlx.Open("postgres", dbURL); err != nil {
			t.Fatal(err)
		}
		cs.db.SetMaxOpenConns(2)
		t.Cleanup(func() { cs.db.Close() })
		pg := postgres.New(served)
		st, users = pg, pg
	default:
		t.Skipf("no raw access to the %s store", kind.name)
	}
	fixed := storeKind{name: kind.name, new: func(testing.TB) (store.Store, store.UserDirectory) { return st, users }}
	cs.client = newServer(t, fixed, opts...)
	return cs
}

// rawValue is the value column of the record at p (p.Record its id), as
// the store holds it.
func (cs *credServer) rawValue(t *testing.T, p store.Path) string {
	t.Helper()
	if cs.db != nil {
		var v string
		if err := cs.db.GetContext(t.Context(), &v, `SELECT value FROM hds_records WHERE id = $1`, p.Record); err != nil {
			t.Fatalf("select the value of %s: %v", p.Record, err)
		}
		return v
	}
	p.Owner = ""
	r, err := cs.store.FindRecord(t.Context(), p)
	if err != nil {
		t.Fatalf("store: find %s: %v", p.Record, err)
	}
	return string(r.Value)
}

// setRaw replaces the stored value of the record at p (p.Record its id)
// behind the server's back.
func (cs *credServer) setRaw(t *testing.T, p store.Path, value string) {
	t.Helper()
	if cs.db != nil {
		res, err := cs.db.ExecContext(t.Context(), `UPDATE hds_records SET value = $1 WHERE id = $2`, value, p.Record)
		if err != nil {
			t.Fatalf("update the value of %s: %v", p.Record, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("update the value of %s: %d rows", p.Record, n)
		}
		return
	}
	p.Owner = ""
	if _, err := cs.store.UpdateRecord(t.Context(), p, store.Write{}, func(r *store.Record) error {
		r.Value = json.RawMessage(value)
		return nil
	}); err != nil {
		t.Fatalf("store: update %s: %v", p.Record, err)
	}
}

// rawDump returns everything the store holds as text: for PostgreSQL
// every row of every table of the schema; for the memory store every
// string and byte slice reachable from it (its maps included), plus the
// values FindCluster returns for the given clusters.
func (cs *credServer) rawDump(t *testing.T, clusters ...store.Path) []string {
	t.Helper()
	var out []string
	if cs.db != nil {
		var tables []string
		if err := cs.db.SelectContext(t.Context(), &tables,
			`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`); err != nil {
			t.Fatalf("list tables: %v", err)
		}
		if !slices.Contains(tables, "hds_records") {
			t.Fatalf("no hds_records among the tables %v", tables)
		}
		for _, tbl := range tables {
			var rows []string
			if err := cs.db.SelectContext(t.Context(), &rows, `SELECT t::text FROM "`+tbl+`" t`); err != nil {
				t.Fatalf("dump %s: %v", tbl, err)
			}
			out = append(out, rows...)
		}
		return out
	}
	credWalk(reflect.ValueOf(cs.mem), map[uintptr]bool{}, &out)
	for _, p := range clusters {
		p.Owner = ""
		k, err := cs.store.FindCluster(t.Context(), p, true)
		if err != nil {
			t.Fatalf("store: find cluster %s: %v", p.Cluster, err)
		}
		for _, r := range k.Records {
			out = append(out, r.Name+"="+string(r.Value))
		}
	}
	return out
}

// credWalk appends every string and byte slice reachable from v.
func credWalk(v reflect.Value, seen map[uintptr]bool, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		credWalk(v.Elem(), seen, out)
	case reflect.Interface:
		if !v.IsNil() {
			credWalk(v.Elem(), seen, out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			credWalk(v.Field(i), seen, out)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			credWalk(it.Key(), seen, out)
			credWalk(it.Value(), seen, out)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			*out = append(*out, string(v.Bytes()))
			return
		}
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			credWalk(v.Index(i), seen, out)
		}
	case reflect.String:
		*out = append(*out, v.String())
	}
}

// credForms are the ways a secret could show up in stored or logged text:
// as is, JSON-escaped, percent-encoded, base64 and hex.
func credForms(secret string) []string {
	js, _ := json.Marshal(secret)
	forms := []string{
		secret,
		string(js[1 : len(js)-1]),
		url.QueryEscape(secret),
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.RawStdEncoding.EncodeToString([]byte(secret)),
		base64.URLEncoding.EncodeToString([]byte(secret)),
		base64.RawURLEncoding.EncodeToString([]byte(secret)),
		hex.EncodeToString([]byte(secret)),
	}
	slices.Sort(forms)
	return slices.Compact(forms)
}

// credFindLeaks returns the secrets that texts hold in any of credForms.
func credFindLeaks(texts []string, secrets []string) []string {
	var leaks []string
	for _, s := range secrets {
	forms:
		for _, f := range credForms(s) {
			for _, text := range texts {
				if strings.Contains(text, f) {
					leaks = append(leaks, s)
					break forms
				}
			}
		}
	}
	return leaks
}

// credSecret returns a fresh, unique secret.
func credSecret(tag string) string { return "cred-" + tag + "-" + randomID() }

// credKey returns a fresh random 32-byte key.
func credKey(t testing.TB) []byte {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// credJSON is the JSON text of v.
func credJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// credAt is the store path of a record of web/prod/k (Owner empty).
func credAt(project, collection, cluster, id string) store.Path {
	return store.Path{Project: project, Collection: collection, Cluster: cluster, Record: id}
}

// credReveal reads the record at target with reveal=true; it must be 200.
func (cs *credServer) credReveal(target, token string) recordJSON {
	cs.t.Helper()
	var r recordJSON
	cs.mustDo("GET", target+"?reveal=true", "", token, http.StatusOK).decode(cs.t, &r)
	return r
}

// credWant500 checks a response to a request that must fail to open a
// sealed value: 500 SERVER_ERROR "Internal server error" with empty details
// and none of hidden in the body.
func credWant500(t *testing.T, what string, status int, env envelope, hidden ...string) {
	t.Helper()
	wantError(t, what, status, env, http.StatusInternalServerError, "SERVER_ERROR", "Internal server error")
	if env.details() != "" {
		t.Errorf("%s: details %q, want empty", what, env.details())
	}
	if leaks := credFindLeaks([]string{string(env.raw)}, hidden); len(leaks) > 0 {
		t.Errorf("%s: the body holds %q: %s", what, leaks, env.raw)
	}
}

// Section 3: credentials through the API.

func TestCredentials(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		const mask = `"********"`
		c.addRecord(alice, K, "plain", "STRING", `"visible"`)

		// value returns the record's value (compact) after a request that
		// must succeed with status.
		value := func(what, method, target, body string, status int) string {
			t.Helper()
			env := c.mustDo(method, target, body, alice, status)
			if !strings.Contains(target, "reveal=true") {
				if strings.Contains(string(env.raw), "s3cr3t") {
					t.Errorf("%s: the secret appears in a masked response: %s", what, env.raw)
				}
			}
			var r recordJSON
			env.decode(t, &r)
			return compact(t, r.Value)
		}
		tests := []struct {
			what, method, target, body string
			status                     int
			want                       string
		}{
			{"create (query)", "POST", R("pw") + "?type=CREDENTIAL&value=s3cr3t-1", "", 201, mask},
			{"create (body, lower case type)", "POST", K + "/records", `{"name":"pw2","type":"credential","value":"s3cr3t-2"}`, 201, mask},
			{"create with reveal=true", "POST", R("pw3") + "?type=CREDENTIAL&value=s3cr3t-3&reveal=true", "", 201, `"s3cr3t-3"`},
			{"create array", "POST", K + "/records", `{"name":"arr","type":"[]CREDENTIAL","value":["s3cr3t-a","s3cr3t-b"]}`, 201, `["********","********"]`},
			{"create array with reveal=true", "POST", K + "/records?reveal=true", `{"name":"arr2","type":"[]credential","value":["s3cr3t-c"]}`, 201, `["s3cr3t-c"]`},
			{"create empty array", "POST", R("arr3") + "?type=[]CREDENTIAL&value=[]", "", 201, `[]`},
			{"get", "GET", R("pw"), "", 200, mask},
			{"get reveal=false", "GET", R("pw") + "?reveal=false", "", 200, mask},
			{"get reveal=true", "GET", R("pw") + "?reveal=true", "", 200, `"s3cr3t-1"`},
			{"get array", "GET", R("arr"), "", 200, `["********","********"]`},
			{"get array reveal=true", "GET", R("arr") + "?reveal=true", "", 200, `["s3cr3t-a","s3cr3t-b"]`},
			{"update value", "PUT", R("pw") + "?value=s3cr3t-new", "", 200, mask},
			{"read the update", "GET", R("pw") + "?reveal=true", "", 200, `"s3cr3t-new"`},
			{"update with reveal=true", "PUT", R("pw2") + "?reveal=true", `{"value":"s3cr3t-newer"}`, 200, `"s3cr3t-newer"`},
			{"rename keeps the secret", "PUT", R("pw3") + "?rename=pw4", "", 200, mask},
			{"read the renamed", "GET", R("pw4") + "?reveal=true", "", 200, `"s3cr3t-3"`},
			{"STRING to CREDENTIAL with a value", "PUT", R("plain2") + "?type=CREDENTIAL&value=s3cr3t-x", "", 200, mask},
			{"STRING to CREDENTIAL, read back", "GET", R("plain2") + "?reveal=true", "", 200, `"s3cr3t-x"`},
		}
		c.addRecord(alice, K, "plain2", "STRING", `"x"`)
		for _, tt := range tests {
			if got := value(tt.what, tt.method, tt.target, tt.body, tt.status); got != tt.want {
				t.Errorf("%s: value %s, want %s", tt.what, got, tt.want)
			}
		}

		// Lists and cluster data.
		env := c.mustDo("GET", K+"/records", "", alice, http.StatusOK)
		if strings.Contains(string(env.raw), "s3cr3t") {
			t.Errorf("record list leaks a secret: %s", env.raw)
		}
		var list listJSON[recordJSON]
		env.decode(t, &list)
		for _, r := range list.Items {
			switch r.Type {
			case "CREDENTIAL":
				if string(r.Value) != mask {
					t.Errorf("record list: %s = %s, want masked", r.Name, r.Value)
				}
			case "[]CREDENTIAL":
				if !regexp.MustCompile(`^\[("\*{8}"(,"\*{8}")*)?\]$`).Match(r.Value) {
					t.Errorf("record list: %s = %s, want each element masked", r.Name, r.Value)
				}
			}
		}
		env = c.mustDo("GET", K+"/records?reveal=true", "", alice, http.StatusOK)
		for _, s := range []string{"s3cr3t-new", "s3cr3t-newer", "s3cr3t-a", "s3cr3t-c", "s3cr3t-x"} {
			if !strings.Contains(string(env.raw), s) {
				t.Errorf("record list with reveal=true lacks %s: %s", s, env.raw)
			}
		}
		env = c.mustDo("GET", K, "", alice, http.StatusOK)
		if strings.Contains(string(env.raw), "s3cr3t") {
			t.Errorf("cluster data leaks a secret: %s", env.raw)
		}
		var k clusterJSON
		env.decode(t, &k)
		if string(k.Data["pw"]) != mask || compact(t, k.Data["arr"]) != `["********","********"]` || string(k.Data["plain"]) != `"visible"` {
			t.Errorf("cluster data: %s", env.Data)
		}
		c.mustDo("GET", K+"?reveal=true", "", alice, http.StatusOK).decode(t, &k)
		if string(k.Data["pw"]) != `"s3cr3t-new"` || compact(t, k.Data["arr"]) != `["s3cr3t-a","s3cr3t-b"]` {
			t.Errorf("cluster data with reveal=true: %v", k.Data)
		}

		// reveal takes true or false only.
		for _, v := range []string{"yes", "1", "TRUE", "True", "", "no"} {
			for _, req := range []struct{ method, target, body string }{
				{"GET", R("pw"), ""},
				{"GET", K, ""},
				{"GET", K + "/records", ""},
				{"PUT", R("pw"), `{"value":"s3cr3t-zzz"}`},
				{"POST", R("never"), `{"type":"STRING","value":"x"}`},
			} {
				target := req.target + "?reveal=" + v
				status, _, env := c.do(req.method, target, req.body, alice)
				wantError(t, req.method+" "+target, status, env, http.StatusBadRequest, "INVALID_REQUEST", "")
			}
		}
		status, _, _ := c.do("GET", R("never"), "", alice)
		if status != http.StatusNotFound {
			t.Errorf("a create with a bad reveal created the record: %d", status)
		}
		if got := value("after the bad reveals", "GET", R("pw")+"?reveal=true", "", 200); got != `"s3cr3t-new"` {
			t.Errorf("a PUT with a bad reveal changed the secret: %s", got)
		}

		// Never matched by value filters.
		for _, q := range []string{"value=s3cr3t-new", "valueContains=s3cr3t", "valueContains=S3CR3T", "valueContains=**", "value=********", `value="s3cr3t-new"`, "valueContains=hds"} {
			var l listJSON[recordJSON]
			c.mustDo("GET", K+"/records?"+q, "", alice, http.StatusOK).decode(t, &l)
			if l.Total != 0 {
				t.Errorf("?%s matched %d records: %+v", q, l.Total, l.Items)
			}
		}
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records?type=credential", "", alice, http.StatusOK).decode(t, &l)
		if l.Total != 4 { // pw, pw2, pw4, plain2
			t.Errorf("?type=credential: total %d, want 4", l.Total)
		}
	})
}

func TestCredentialsWithoutKey(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind)
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		c.addRecord(alice, K, "s", "STRING", `"plain"`)
		tests := []struct{ what, method, target, body string }{
			{"create (query)", "POST", R("c1") + "?type=CREDENTIAL&value=x", ""},
			{"create (body)", "POST", K + "/records", `{"name":"c2","type":"CREDENTIAL","value":"x"}`},
			{"create (POST R body)", "POST", R("c3"), `{"type":"credential","value":"x"}`},
			{"create array (query)", "POST", R("c4") + "?type=[]CREDENTIAL&value=[%22x%22]", ""},
			{"create array (body)", "POST", K + "/records", `{"name":"c5","type":"[]CREDENTIAL","value":["x"]}`},
			{"create empty array", "POST", K + "/records", `{"name":"c6","type":"[]CREDENTIAL","value":[]}`},
			{"type change alone", "PUT", R("s") + "?type=CREDENTIAL", ""},
			{"type change with a value", "PUT", R("s") + "?type=CREDENTIAL&value=x", ""},
			{"type change with a value (body)", "PUT", R("s"), `{"type":"[]CREDENTIAL","value":["x"]}`},
		}
		for _, tt := range tests {
			status, _, env := c.do(tt.method, tt.target, tt.body, alice)
			wantError(t, "without a credential key: "+tt.what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			if !strings.Contains(strings.ToLower(env.details()), "no credential key") {
				t.Errorf("without a credential key: %s: details %q do not say that no credential key is configured", tt.what, env.details())
			}
		}
		var r recordJSON
		c.mustDo("GET", R("s"), "", alice, http.StatusOK).decode(t, &r)
		if r.Type != "STRING" || string(r.Value) != `"plain"` || r.Version != 1 {
			t.Errorf("the STRING record changed: %+v", r)
		}
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &l)
		if l.Total != 1 {
			t.Errorf("credential records were stored: %+v", l.Items)
		}
	})
}

func TestCredentialsSealedAtRest(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		oldKey, newKey := testKey, []byte(strings.Repeat("N", 32))
		c := newServer(t, kind, hds.WithCredentialKey(oldKey))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		at := func(name string) store.Path {
			return store.Path{Project: "web", Collection: "prod", Cluster: "k", Record: name}
		}
		c.addRecord(alice, K, "one", "CREDENTIAL", `"plain-marker-1"`)
		c.addRecord(alice, K, "many", "[]CREDENTIAL", `["plain-marker-2","plain-marker-3"]`)
		c.addRecord(alice, K, "two", "CREDENTIAL", `"plain-marker-4"`)

		// The store never sees the plain text.
		for _, name := range []string{"one", "many", "two"} {
			r, err := c.store.FindRecord(t.Context(), at(name))
			if err != nil {
				t.Fatalf("store: find %s: %v", name, err)
			}
			if strings.Contains(string(r.Value), "plain-marker") {
				t.Errorf("the store holds the plain text of %s: %s", name, r.Value)
			}
		}
		recs, _, err := c.store.FindRecords(t.Context(), at(""), store.RecordQuery{ListQuery: store.NewListQuery()})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if strings.Contains(string(r.Value), "plain-marker") {
				t.Errorf("the store lists the plain text of %s: %s", r.Name, r.Value)
			}
		}

		// A sealed value moved to another record does not open there.
		one, err := c.store.FindRecord(t.Context(), at("one"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.store.UpdateRecord(t.Context(), at("two"), store.Write{}, func(r *store.Record) error {
			r.Value = one.Value
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		r := request("GET", R("two")+"?reveal=true", "", alice)
		status, _, env := c.send(r)
		if status == http.StatusOK || strings.Contains(string(env.raw), "plain-marker-1") {
			t.Errorf("a sealed value moved to another record opened: %d %s", status, env.raw)
		}
		c.mustDo("GET", R("two"), "", alice, http.StatusOK) // masked, no need to open

		// Keys rotate: a new primary key with the old one still opens.
		rotated := c.attach(hds.WithCredentialKey(newKey, oldKey))
		var got recordJSON
		rotated.mustDo("GET", R("one")+"?reveal=true", "", alice, http.StatusOK).decode(t, &got)
		if string(got.Value) != `"plain-marker-1"` {
			t.Errorf("after rotation: %s, want the plain text", got.Value)
		}
		rotated.mustDo("GET", R("many")+"?reveal=true", "", alice, http.StatusOK).decode(t, &got)
		if compact(t, got.Value) != `["plain-marker-2","plain-marker-3"]` {
			t.Errorf("after rotation: %s, want the plain text", got.Value)
		}
		rotated.addRecord(alice, K, "three", "CREDENTIAL", `"plain-marker-5"`)
		// Only the key that sealed a value (or a ring holding it) opens it.
		newOnly := c.attach(hds.WithCredentialKey(newKey))
		newOnly.mustDo("GET", R("three")+"?reveal=true", "", alice, http.StatusOK)
		status, _, env = newOnly.send(request("GET", R("one")+"?reveal=true", "", alice))
		if status == http.StatusOK || strings.Contains(string(env.raw), "plain-marker-1") {
			t.Errorf("a value sealed by a key not in the ring opened: %d %s", status, env.raw)
		}
		status, _, env = c.send(request("GET", R("three")+"?reveal=true", "", alice))
		if status == http.StatusOK || strings.Contains(string(env.raw), "plain-marker-5") {
			t.Errorf("a value sealed by the new key opened with the old ring: %d %s", status, env.raw)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestLogsHoldNoSecrets(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var logs syncBuffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c := newServer(t, kind, hds.WithCredentialKey(testKey), hds.WithLogger(logger))
		alice := c.token("alice")
		c.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		c.mustDo("POST", pathR("web", "prod", "k", "q")+"?type=CREDENTIAL&value=log-s3cret-1", "", alice, http.StatusCreated)
		c.mustDo("POST", K+"/records", `{"name":"b","type":"[]CREDENTIAL","value":["log-s3cret-2"]}`, alice, http.StatusCreated)
		c.mustDo("PUT", pathR("web", "prod", "k", "q")+"?value=log-s3cret-3&reveal=true", "", alice, http.StatusOK)
		c.mustDo("GET", K+"?reveal=true", "", alice, http.StatusOK)
		c.mustDo("GET", K+"/records?reveal=true", "", alice, http.StatusOK)
		c.do("POST", "/api/v1/auth/login", `{"username":"bob","password":"wrong-log-password"}`, "")
		c.do("PUT", pathR("web", "prod", "k", "q")+"?type=STRING", "", alice) // refused
		c.do("GET", K+"/records?value=log-s3cret-4", "", alice)
		refreshed := c.mustDo("POST", "/api/v1/auth/refresh", "", alice, http.StatusOK)

		out := logs.String()
		if out == "" {
			t.Fatal("nothing was logged")
		}
		secrets := []string{"log-s3cret", "alice-password", "wrong-log-password", alice, strings.Split(alice, ".")[2], "Bearer"}
		var tok struct {
			Token string `json:"token"`
		}
		refreshed.decode(t, &tok)
		secrets = append(secrets, tok.Token)
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("the log holds %.24q...:\n%s", s, out)
			}
		}
	})
}

// Below the API: what each store holds.

// TestCredRawContents: whatever form a credential comes in, the store
// holds no plain text of it, and the same secret never seals to the same
// stored value twice. History is off: a STRING typed into a CREDENTIAL
// leaves its plain STRING version in the history (API.md section 14 keeps
// every replaced state); history_test.go covers old credential versions.
func TestCredRawContents(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		cs := credNewServer(t, kind, hds.WithCredentialKey(testKey), hds.WithMaxVersions(0))
		alice, bob := cs.token("alice"), cs.token("bob")
		cs.tree(alice, "web", "prod", "k")
		cs.tree(bob, "bobs", "c", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		BR := func(name string) string { return pathR("bobs", "c", "k", name) }

		var secrets []string // every credential ever submitted
		sec := func(tag string) string {
			s := credSecret(tag)
			secrets = append(secrets, s)
			return s
		}
		type created struct {
			path   store.Path
			target string
			token  string
			typ    string
			want   string // the plain value, compact JSON
		}
		recs := map[string]*created{}
		add := func(name, owner string, env envelope, want string) {
			t.Helper()
			var r recordJSON
			env.decode(t, &r)
			c := &created{path: credAt("web", "prod", "k", r.ID), target: R(name), token: alice, typ: r.Type, want: want}
			if owner == "bob" {
				c.path, c.target, c.token = credAt("bobs", "c", "k", r.ID), BR(name), bob
			}
			recs[name] = c
		}

		// Created in every form.
		s1, s2, s3 := sec("body"), sec("path-body"), sec("query")
		add("b1", "alice", cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "b1", "type": "CREDENTIAL", "value": s1}), alice, 201), credJSON(s1))
		add("b2", "alice", cs.mustDo("POST", R("b2"), credJSON(map[string]any{"type": "credential", "value": s2}), alice, 201), credJSON(s2))
		add("q1", "alice", cs.mustDo("POST", R("q1")+"?type=CREDENTIAL&value="+url.QueryEscape(s3), "", alice, 201), credJSON(s3))
		a := []string{sec("arr-body-0"), sec("arr-body-1"), sec("arr-body-2")}
		add("ab", "alice", cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "ab", "type": "[]CREDENTIAL", "value": a}), alice, 201), credJSON(a))
		q := []string{sec("arr-query-0"), sec("arr-query-1")}
		add("aq", "alice", cs.mustDo("POST", R("aq")+"?type=%5B%5DCREDENTIAL&value="+url.QueryEscape(credJSON(q)), "", alice, 201), credJSON(q))
		sb := sec("bob")
		add("bb", "bob", cs.mustDo("POST", BR("bb")+"?type=CREDENTIAL&value="+url.QueryEscape(sb)+"&reveal=true", "", bob, 201), credJSON(sb))

		// Updated in both forms.
		u1, u2 := sec("update-body"), sec("update-query")
		cs.mustDo("PUT", R("b1"), credJSON(map[string]any{"value": u1}), alice, 200)
		recs["b1"].want = credJSON(u1)
		cs.mustDo("PUT", R("q1")+"?value="+url.QueryEscape(u2)+"&reveal=true", "", alice, 200)
		recs["q1"].want = credJSON(u2)
		ua := []string{sec("update-arr-0"), sec("update-arr-1")}
		cs.mustDo("PUT", R("ab")+"?reveal=false", credJSON(map[string]any{"value": ua}), alice, 200)
		recs["ab"].want = credJSON(ua)
		// A rename with a new value and a type change with a value.
		u3 := sec("update-rename")
		cs.mustDo("PUT", R("b2"), credJSON(map[string]any{"value": u3, "name": "b2r"}), alice, 200)
		recs["b2"].want, recs["b2"].target = credJSON(u3), R("b2r")
		u4 := []string{sec("update-retype")}
		cs.mustDo("PUT", R("aq")+"?type=[]CREDENTIAL&value="+url.QueryEscape(credJSON(u4)), "", alice, 200)
		recs["aq"].want = credJSON(u4)

		// STRING -> CREDENTIAL and []STRING -> []CREDENTIAL by the type alone:
		// the value that was plain text is sealed.
		p1, p2 := sec("was-plain-query"), sec("was-plain-body")
		pa := []string{sec("was-plain-arr-0"), sec("was-plain-arr-1")}
		add("tq", "alice", cs.mustDo("POST", R("tq")+"?type=STRING&value="+url.QueryEscape(p1), "", alice, 201), credJSON(p1))
		add("tb", "alice", cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "tb", "type": "STRING", "value": p2}), alice, 201), credJSON(p2))
		add("ta", "alice", cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "ta", "type": "[]STRING", "value": pa}), alice, 201), credJSON(pa))
		var typed recordJSON
		cs.mustDo("PUT", R("tq")+"?type=CREDENTIAL", "", alice, 200).decode(t, &typed)
		if typed.Type != "CREDENTIAL" || string(typed.Value) != `"********"` {
			t.Errorf("STRING -> CREDENTIAL by type alone answered %s %s", typed.Type, typed.Value)
		}
		cs.mustDo("PUT", R("tb"), `{"type":"CREDENTIAL"}`, alice, 200)
		cs.mustDo("PUT", R("ta")+"?type=[]credential", "", alice, 200).decode(t, &typed)
		if typed.Type != "[]CREDENTIAL" || compact(t, typed.Value) != `["********","********"]` {
			t.Errorf("[]STRING -> []CREDENTIAL by type alone answered %s %s", typed.Type, typed.Value)
		}
		recs["tq"].typ, recs["tb"].typ, recs["ta"].typ = "CREDENTIAL", "CREDENTIAL", "[]CREDENTIAL"

		// A plain STRING, to show that the dump does see plain text.
		visible := credSecret("visible")
		cs.mustDo("POST", R("plain")+"?type=STRING&value="+url.QueryEscape(visible), "", alice, 201)

		// Every credential reads back through the API.
		for name, r := range recs {
			got := cs.credReveal(r.target, r.token)
			if compact(t, got.Value) != r.want || got.Type != r.typ {
				t.Errorf("%s with reveal=true: %s %s, want %s %s", name, got.Type, got.Value, r.typ, r.want)
			}
		}

		// The record values, as the store holds them.
		for name, r := range recs {
			raw := cs.rawValue(t, r.path)
			if leaks := credFindLeaks([]string{raw}, secrets); len(leaks) > 0 {
				t.Errorf("%s: the store holds the plain text of %q: %s", name, leaks, raw)
			}
			if r.typ == "[]CREDENTIAL" {
				var elems, plain []string
				_ = json.Unmarshal([]byte(r.want), &plain)
				if err := json.Unmarshal([]byte(raw), &elems); err != nil || len(elems) != len(plain) {
					t.Errorf("%s: stored %s, want an array of %d sealed elements", name, raw, len(plain))
				}
				for i, e := range elems {
					if e == "" || e == plain[i] || e == "********" {
						t.Errorf("%s: element %d stored as %q", name, i, e)
					}
				}
			} else {
				var s string
				if err := json.Unmarshal([]byte(raw), &s); err != nil || s == "" || s == "********" {
					t.Errorf("%s: stored %s, want a sealed string", name, raw)
				}
			}
		}
		// Everything the store holds.
		dump := cs.rawDump(t, credAt("web", "prod", "k", ""), credAt("bobs", "c", "k", ""))
		if leaks := credFindLeaks(dump, secrets); len(leaks) > 0 {
			t.Errorf("the store's raw contents hold the plain text of %d secrets: %q", len(leaks), leaks)
		}
		if len(credFindLeaks(dump, []string{visible})) == 0 {
			t.Errorf("the raw dump does not even show the plain STRING %q: the check is blind", visible)
		}

		// The same secret twice: two records, and one record updated to the
		// same secret, and two equal elements of one array.
		same := sec("same")
		var d1, d2 recordJSON
		cs.mustDo("POST", R("d1")+"?type=CREDENTIAL&value="+url.QueryEscape(same), "", alice, 201).decode(t, &d1)
		cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "d2", "type": "CREDENTIAL", "value": same}), alice, 201).decode(t, &d2)
		raw1 := cs.rawValue(t, credAt("web", "prod", "k", d1.ID))
		raw2 := cs.rawValue(t, credAt("web", "prod", "k", d2.ID))
		if raw1 == raw2 {
			t.Errorf("the same secret in two records is stored as the same value %s", raw1)
		}
		cs.mustDo("PUT", R("d1")+"?value="+url.QueryEscape(same), "", alice, 200)
		if again := cs.rawValue(t, credAt("web", "prod", "k", d1.ID)); again == raw1 {
			t.Errorf("a record updated to the same secret is stored as the same value %s", again)
		}
		cs.mustDo("PUT", R("d1"), credJSON(map[string]any{"value": same}), alice, 200)
		var dup recordJSON
		cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "dup", "type": "[]CREDENTIAL", "value": []string{same, same, same}}), alice, 201).decode(t, &dup)
		var elems []string
		if err := json.Unmarshal([]byte(cs.rawValue(t, credAt("web", "prod", "k", dup.ID))), &elems); err != nil || len(elems) != 3 {
			t.Fatalf("stored []CREDENTIAL of 3: %v %q", err, elems)
		}
		if elems[0] == elems[1] || elems[1] == elems[2] || elems[0] == elems[2] {
			t.Errorf("equal elements of a []CREDENTIAL are stored as equal values: %q", elems)
		}
		dump = cs.rawDump(t, credAt("web", "prod", "k", ""))
		if leaks := credFindLeaks(dump, []string{same}); len(leaks) > 0 {
			t.Errorf("the store's raw contents hold the repeated secret")
		}
		for _, name := range []string{"d1", "d2", "dup"} {
			got := cs.credReveal(R(name), alice)
			if !strings.Contains(string(got.Value), same) {
				t.Errorf("%s reads back as %s", name, got.Value)
			}
		}
	})
}

// TestCredMovedCiphertext: a sealed value moved to another record, or an
// element of a []CREDENTIAL moved to another index, does not open; the
// API says 500 and nothing more, and still masks without reveal.
func TestCredMovedCiphertext(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		cs := credNewServer(t, kind, hds.WithCredentialKey(testKey))
		alice := cs.token("alice")
		cs.tree(alice, "web", "prod", "k")
		cs.mustDo("POST", pathK("web", "prod", "other"), "", alice, 201)
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }
		at := func(id string) store.Path { return credAt("web", "prod", "k", id) }

		s1, s2 := credSecret("one"), credSecret("two")
		a := []string{credSecret("arr-0"), credSecret("arr-1")}
		b := []string{credSecret("brr-0"), credSecret("brr-1")}
		one := cs.addRecord(alice, K, "one", "CREDENTIAL", credJSON(s1))
		two := cs.addRecord(alice, K, "two", "CREDENTIAL", credJSON(s2))
		arr := cs.addRecord(alice, K, "arr", "[]CREDENTIAL", credJSON(a))
		brr := cs.addRecord(alice, K, "brr", "[]CREDENTIAL", credJSON(b))
		swap := cs.addRecord(alice, K, "swap", "[]CREDENTIAL", credJSON(a))
		secrets := []string{s1, s2, a[0], a[1], b[0], b[1]}

		// They open where they were sealed.
		for _, name := range []string{"one", "two", "arr", "brr", "swap"} {
			cs.credReveal(R(name), alice)
		}
		cs.mustDo("GET", K+"/records?reveal=true", "", alice, 200)
		cs.mustDo("GET", K+"?reveal=true", "", alice, 200)

		rawOne := cs.rawValue(t, at(one.ID))
		rawTwo := cs.rawValue(t, at(two.ID))
		var ea, eb, es []string
		if err := json.Unmarshal([]byte(cs.rawValue(t, at(arr.ID))), &ea); err != nil || len(ea) != 2 {
			t.Fatalf("stored arr: %v %q", err, ea)
		}
		if err := json.Unmarshal([]byte(cs.rawValue(t, at(brr.ID))), &eb); err != nil || len(eb) != 2 {
			t.Fatalf("stored brr: %v %q", err, eb)
		}
		if err := json.Unmarshal([]byte(cs.rawValue(t, at(swap.ID))), &es); err != nil || len(es) != 2 {
			t.Fatalf("stored swap: %v %q", err, es)
		}
		// Every stored ciphertext, raw and as its JSON string.
		var hidden []string
		hidden = append(hidden, secrets...)
		for _, s := range append(append(append([]string{}, ea...), eb...), es...) {
			hidden = append(hidden, s)
		}
		for _, s := range []string{rawOne, rawTwo} {
			var v string
			_ = json.Unmarshal([]byte(s), &v)
			hidden = append(hidden, v)
		}

		// one's sealed value onto two; arr's element 0 onto brr's element 0;
		// swap's two elements swapped.
		cs.setRaw(t, at(two.ID), rawOne)
		cs.setRaw(t, at(brr.ID), credJSON([]string{ea[0], eb[1]}))
		cs.setRaw(t, at(swap.ID), credJSON([]string{es[1], es[0]}))

		for _, tt := range []struct{ name, mask string }{
			{"two", `"********"`},
			{"brr", `["********","********"]`},
			{"swap", `["********","********"]`},
		} {
			status, _, env := cs.do("GET", R(tt.name)+"?reveal=true", "", alice)
			credWant500(t, "GET "+tt.name+" (moved) with reveal=true", status, env, hidden...)
			// By id too.
			var got recordJSON
			cs.mustDo("GET", R(tt.name)+"?reveal=false", "", alice, http.StatusOK).decode(t, &got)
			if compact(t, got.Value) != tt.mask {
				t.Errorf("GET %s (moved) without reveal: %s, want %s", tt.name, got.Value, tt.mask)
			}
			env = cs.mustDo("GET", R(got.ID), "", alice, http.StatusOK)
			if leaks := credFindLeaks([]string{string(env.raw)}, hidden); len(leaks) > 0 {
				t.Errorf("GET %s (moved) without reveal shows %q", tt.name, leaks)
			}
			// A rename answers with the record: masked it works, revealed it
			// cannot open.
			status, _, env = cs.do("PUT", R(tt.name)+"?rename="+tt.name+"-x&reveal=true", "", alice)
			if status == http.StatusOK || strings.Contains(string(env.raw), "cred-") {
				t.Errorf("PUT %s (moved) with reveal=true: %d %s", tt.name, status, env.raw)
			}
			if status == http.StatusInternalServerError {
				credWant500(t, "PUT "+tt.name+" (moved) with reveal=true", status, env, hidden...)
			}
		}

		// Lists and cluster data with reveal need every value: 500; without,
		// they are masked.
		for _, target := range []string{K + "/records?reveal=true", K + "?reveal=true", K + "/records?reveal=true&search=two"} {
			status, _, env := cs.do("GET", target, "", alice)
			credWant500(t, "GET "+target+" with a moved value", status, env, hidden...)
		}
		for _, target := range []string{K + "/records", K} {
			env := cs.mustDo("GET", target, "", alice, http.StatusOK)
			if leaks := credFindLeaks([]string{string(env.raw)}, hidden); len(leaks) > 0 {
				t.Errorf("GET %s without reveal shows %q", target, leaks)
			}
		}

		// The source records are untouched and still open.
		if got := cs.credReveal(R("one"), alice); string(got.Value) != credJSON(s1) {
			t.Errorf("one after its value was copied away: %s", got.Value)
		}
		if got := cs.credReveal(R("arr"), alice); compact(t, got.Value) != credJSON(a) {
			t.Errorf("arr after its element was copied away: %s", got.Value)
		}

		// A value moved to a record of the same name in another cluster
		// does not open either.
		moved := cs.addRecord(alice, pathK("web", "prod", "other"), "one", "CREDENTIAL", credJSON(credSecret("other")))
		cs.setRaw(t, credAt("web", "prod", "other", moved.ID), rawOne)
		status, _, env := cs.do("GET", pathR("web", "prod", "other", "one")+"?reveal=true", "", alice)
		credWant500(t, "a value moved to a namesake in another cluster", status, env, hidden...)

		// A server without any credential key masks, and cannot reveal.
		nokey := cs.attach()
		status, _, env = nokey.do("GET", R("one")+"?reveal=true", "", alice)
		credWant500(t, "reveal without a credential key", status, env, hidden...)
		var masked recordJSON
		nokey.mustDo("GET", R("one"), "", alice, http.StatusOK).decode(t, &masked)
		if string(masked.Value) != `"********"` {
			t.Errorf("without a credential key, GET one: %s, want the mask", masked.Value)
		}

		// A new value heals a record (by id: the rename above may or may
		// not have been kept).
		fresh := credSecret("fresh")
		cs.mustDo("PUT", R(two.ID), credJSON(map[string]any{"value": fresh}), alice, http.StatusOK)
		if got := cs.credReveal(R(two.ID), alice); string(got.Value) != credJSON(fresh) {
			t.Errorf("after a new value: %s", got.Value)
		}
	})
}

// TestCredRotation: a new primary key with the old one listed reads what
// the old one sealed; RotateCredentials re-seals everything in batches,
// reports progress, can be run again at no cost and resumed, and then the
// old key can be dropped.
func TestCredRotation(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		k1, k2, k3 := credKey(t), credKey(t), credKey(t)
		cs := credNewServer(t, kind, hds.WithCredentialKey(k1))
		ctx := t.Context()
		alice, bob := cs.token("alice"), cs.token("bob")
		cs.tree(alice, "web", "prod", "k")
		cs.tree(bob, "bobs", "c", "k")

		type rec struct {
			target, token, want, id string
		}
		var recs []*rec
		add := func(token, kpath, name, typ string, value any) *rec {
			t.Helper()
			r := cs.addRecord(token, kpath, name, typ, credJSON(value))
			x := &rec{target: kpath + "/records/" + name, token: token, want: credJSON(value), id: r.ID}
			recs = append(recs, x)
			return x
		}
		K, BK := pathK("web", "prod", "k"), pathK("bobs", "c", "k")
		add(alice, K, "c1", "CREDENTIAL", credSecret("c1"))
		add(alice, K, "a1", "[]CREDENTIAL", []string{credSecret("a1-0"), credSecret("a1-1")})
		add(bob, BK, "b1", "CREDENTIAL", credSecret("b1"))
		add(alice, K, "c2", "CREDENTIAL", credSecret("c2"))
		add(bob, BK, "b2", "[]CREDENTIAL", []string{credSecret("b2-0")})
		plain := cs.addRecord(alice, K, "plain", "STRING", `"not a secret"`)

		readAll := func(what string, c *client) {
			t.Helper()
			for _, r := range recs {
				var got recordJSON
				status, _, env := c.do("GET", r.target+"?reveal=true", "", r.token)
				if status != http.StatusOK {
					t.Errorf("%s: GET %s with reveal=true: %d %s", what, r.target, status, env.raw)
					continue
				}
				env.decode(t, &got)
				if compact(t, got.Value) != r.want {
					t.Errorf("%s: %s reads %s, want %s", what, r.target, got.Value, r.want)
				}
			}
			c.mustDo("GET", K+"/records?reveal=true", "", alice, http.StatusOK)
			c.mustDo("GET", BK+"?reveal=true", "", bob, http.StatusOK)
		}
		cantRead := func(what string, c *client, r *rec) {
			t.Helper()
			status, _, env := c.do("GET", r.target+"?reveal=true", "", r.token)
			var plainText []string
			_ = json.Unmarshal([]byte(r.want), &plainText)
			if len(plainText) == 0 {
				var s string
				_ = json.Unmarshal([]byte(r.want), &s)
				plainText = []string{s}
			}
			credWant500(t, what+": "+r.target, status, env, plainText...)
		}

		// A new primary key, the old one listed: everything reads, and new
		// values are sealed by the new key.
		both := cs.attach(hds.WithCredentialKey(k2, k1))
		readAll("with K2 primary and K1 previous", both)
		n1 := &rec{target: K + "/records/n1", token: alice, want: credJSON(credSecret("n1"))}
		var created recordJSON
		both.mustDo("POST", K+"/records", fmt.Sprintf(`{"name":"n1","type":"CREDENTIAL","value":%s}`, n1.want), alice, 201).decode(t, &created)
		n1.id = created.ID
		recs = append(recs, n1)
		cantRead("a value sealed by K2, read with K1 alone", cs.client, n1)

		ids := make([]string, len(recs))
		underK2 := map[string]bool{n1.id: true}
		for i, r := range recs {
			ids[i] = r.id
		}
		slices.Sort(ids)

		// Rotation to K2, in batches of 2.
		var reports []hds.RotationProgress
		rot := hds.Rotation{Primary: k2, Previous: [][]byte{k1}, BatchSize: 2,
			Progress: func(p hds.RotationProgress) { reports = append(reports, p) }}
		got, err := hds.RotateCredentials(ctx, cs.store, rot)
		if err != nil {
			t.Fatalf("RotateCredentials: %v", err)
		}
		want := hds.RotationProgress{Seen: len(ids), Resealed: len(ids) - 1, LastID: ids[len(ids)-1]}
		if got != want {
			t.Errorf("RotateCredentials = %+v, want %+v", got, want)
		}
		if len(reports) < 3 {
			t.Fatalf("progress reported %d times over %d records in batches of 2: %+v", len(reports), len(ids), reports)
		}
		for i, p := range reports[:3] {
			n := 2 * (i + 1)
			resealed := 0
			for _, id := range ids[:n] {
				if !underK2[id] {
					resealed++
				}
			}
			if p.Seen != n || p.LastID != ids[n-1] || p.Resealed != resealed {
				t.Errorf("progress report %d = %+v, want Seen %d, Resealed %d, LastID %s", i, p, n, resealed, ids[n-1])
			}
		}
		if last := reports[len(reports)-1]; last != want {
			t.Errorf("last progress report %+v, want %+v", last, want)
		}

		// K1 can go: K2 alone reads everything; K1 alone reads nothing.
		k2only := cs.attach(hds.WithCredentialKey(k2))
		readAll("after rotation, K2 alone", k2only)
		for _, r := range recs {
			cantRead("after rotation, K1 alone", cs.client, r)
		}
		var pl recordJSON
		k2only.mustDo("GET", pathR("web", "prod", "k", "plain"), "", alice, 200).decode(t, &pl)
		if pl.Version != plain.Version || string(pl.Value) != `"not a secret"` {
			t.Errorf("rotation touched a STRING record: %+v", pl)
		}

		// Again: nothing to do. With K2 alone: nothing to do either.
		reports = nil
		got, err = hds.RotateCredentials(ctx, cs.store, rot)
		if err != nil || got.Resealed != 0 || got.Seen != len(ids) {
			t.Errorf("a second rotation: %+v, %v; want %d seen, 0 re-sealed", got, err, len(ids))
		}
		for _, p := range reports {
			if p.Resealed != 0 {
				t.Errorf("a second rotation reports re-sealing: %+v", p)
			}
		}
		got, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2})
		if err != nil || got.Resealed != 0 || got.Seen != len(ids) {
			t.Errorf("a rotation with K2 alone: %+v, %v; want %d seen, 0 re-sealed", got, err, len(ids))
		}
		readAll("after the repeated rotations, K2 alone", k2only)

		// Resuming: a rotation to K3 after the first batch's last id visits
		// only the records after it; its final check covers every record
		// and finds the first batch still under K2.
		after := ids[1]
		reports = nil
		got, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k3, Previous: [][]byte{k2}, BatchSize: 2, After: after,
			Progress: func(p hds.RotationProgress) { reports = append(reports, p) }})
		if !errors.Is(err, hds.ErrRotationIncomplete) {
			t.Fatalf("resumed rotation: %v, want ErrRotationIncomplete for the first batch", err)
		}
		if want := (hds.RotationProgress{Seen: len(ids) - 2, Resealed: len(ids) - 2, LastID: ids[len(ids)-1], Remaining: 2}); got != want {
			t.Errorf("resumed rotation = %+v, want %+v", got, want)
		}
		for _, p := range reports {
			if p.LastID <= after {
				t.Errorf("resumed rotation reported an id not after %s: %+v", after, p)
			}
		}
		k3only := cs.attach(hds.WithCredentialKey(k3))
		for _, r := range recs {
			if r.id <= after {
				cantRead("resumed rotation left the first batch under K2", k3only, r)
			} else if status, _, env := k3only.do("GET", r.target+"?reveal=true", "", r.token); status != 200 {
				t.Errorf("after the resumed rotation, K3 alone: %s: %d %s", r.target, status, env.raw)
			}
		}
		got, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k3, Previous: [][]byte{k2}, BatchSize: 2})
		if err != nil || got.Resealed != 2 || got.Seen != len(ids) {
			t.Errorf("the rotation from the start after the resumed one: %+v, %v; want 2 re-sealed", got, err)
		}
		readAll("after rotating to K3, K3 alone", k3only)

		// Keys must be 32 bytes.
		for _, bad := range []hds.Rotation{{Primary: k3[:16]}, {Primary: nil}, {Primary: k3, Previous: [][]byte{k2[:31]}}} {
			if _, err := hds.RotateCredentials(ctx, cs.store, bad); err == nil {
				t.Errorf("RotateCredentials with a bad key: no error")
			} else if leaks := credFindLeaks([]string{err.Error()}, []string{string(k3), string(k2)}); len(leaks) > 0 {
				t.Errorf("RotateCredentials error holds a key: %v", err)
			}
		}
	})
}

// TestCredRotationUnopenable: a value that no key of the ring opens, or
// that was moved from another record, stops the rotation with an error
// naming the record but not the value.
func TestCredRotationUnopenable(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		k1, k2, lostKey := credKey(t), credKey(t), credKey(t)
		ctx := t.Context()

		t.Run("unknown key", func(t *testing.T) {
			cs := credNewServer(t, kind, hds.WithCredentialKey(k1))
			alice := cs.token("alice")
			cs.tree(alice, "web", "prod", "k")
			K := pathK("web", "prod", "k")
			cs.addRecord(alice, K, "ok1", "CREDENTIAL", credJSON(credSecret("ok1")))
			lostSecret := credSecret("lost")
			lost := cs.attach(hds.WithCredentialKey(lostKey)).addRecord(alice, K, "lost", "[]CREDENTIAL", credJSON([]string{lostSecret}))
			cs.addRecord(alice, K, "ok2", "CREDENTIAL", credJSON(credSecret("ok2")))
			raw := cs.rawValue(t, credAt("web", "prod", "k", lost.ID))

			_, err := hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2, Previous: [][]byte{k1}, BatchSize: 2})
			if err == nil {
				t.Fatal("RotateCredentials over a value no key opens: no error")
			}
			if !strings.Contains(err.Error(), lost.ID) {
				t.Errorf("the error %q does not name the record %s", err, lost.ID)
			}
			var sealed []string
			_ = json.Unmarshal([]byte(raw), &sealed)
			hidden := append([]string{lostSecret, raw, string(k1), string(k2), string(lostKey),
				base64.StdEncoding.EncodeToString(k1), base64.StdEncoding.EncodeToString(k2)}, sealed...)
			if leaks := credFindLeaks([]string{err.Error()}, hidden); len(leaks) > 0 {
				t.Errorf("the error %q holds %q", err, leaks)
			}
			// Once the record is dealt with, the rotation completes.
			cs.mustDo("DELETE", pathR("web", "prod", "k", "lost"), "", alice, http.StatusNoContent)
			if _, err := hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2, Previous: [][]byte{k1}, BatchSize: 2}); err != nil {
				t.Fatalf("RotateCredentials after the lost record was deleted: %v", err)
			}
			k2only := cs.attach(hds.WithCredentialKey(k2))
			k2only.credRevealOK(t, pathR("web", "prod", "k", "ok1"), alice)
			k2only.credRevealOK(t, pathR("web", "prod", "k", "ok2"), alice)
		})

		t.Run("moved from another record", func(t *testing.T) {
			cs := credNewServer(t, kind, hds.WithCredentialKey(k1))
			alice := cs.token("alice")
			cs.tree(alice, "web", "prod", "k")
			K := pathK("web", "prod", "k")
			s1, s2 := credSecret("m1"), credSecret("m2")
			m1 := cs.addRecord(alice, K, "m1", "CREDENTIAL", credJSON(s1))
			m2 := cs.addRecord(alice, K, "m2", "CREDENTIAL", credJSON(s2))
			raw := cs.rawValue(t, credAt("web", "prod", "k", m1.ID))
			cs.setRaw(t, credAt("web", "prod", "k", m2.ID), raw)
			_, err := hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2, Previous: [][]byte{k1}})
			if err == nil {
				t.Fatal("RotateCredentials over a value moved from another record: no error")
			}
			if !strings.Contains(err.Error(), m2.ID) {
				t.Errorf("the error %q does not name the record %s", err, m2.ID)
			}
			var v string
			_ = json.Unmarshal([]byte(raw), &v)
			if leaks := credFindLeaks([]string{err.Error()}, []string{s1, s2, v}); len(leaks) > 0 {
				t.Errorf("the error %q holds %q", err, leaks)
			}
		})
	})
}

// credRevealOK reads target with reveal=true and wants 200.
func (c *client) credRevealOK(t *testing.T, target, token string) {
	t.Helper()
	if status, _, env := c.do("GET", target+"?reveal=true", "", token); status != http.StatusOK {
		t.Errorf("GET %s with reveal=true: %d %s", target, status, env.raw)
	}
}

// TestCredLogFullScenario: the log of a whole session (logins good and
// bad, credentials in every form, reveals, updates, a value that does not
// open, a bogus token) holds no secret, password, token or key.
func TestCredLogFullScenario(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		var logs syncBuffer
		key := credKey(t)
		cs := credNewServer(t, kind, hds.WithCredentialKey(key),
			hds.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		var secrets []string
		sec := func(tag string) string {
			s := credSecret(tag)
			secrets = append(secrets, s)
			return s
		}
		alice := cs.login("alice", "alice-password")
		bob := cs.login("bob", "bob-password")
		cs.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }

		q1 := sec("query")
		cs.mustDo("POST", R("q")+"?type=CREDENTIAL&value="+url.QueryEscape(q1), "", alice, 201)
		b1 := sec("body")
		cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "b", "type": "CREDENTIAL", "value": b1}), alice, 201)
		arr := []string{sec("arr-0"), sec("arr-1")}
		cs.mustDo("POST", R("a")+"?reveal=true", credJSON(map[string]any{"type": "[]CREDENTIAL", "value": arr}), alice, 201)
		aq := []string{sec("arr-query")}
		cs.mustDo("POST", R("aq")+"?type=[]CREDENTIAL&value="+url.QueryEscape(credJSON(aq)), "", alice, 201)
		for _, name := range []string{"q", "b", "a", "aq"} {
			cs.mustDo("GET", R(name)+"?reveal=true", "", alice, 200)
		}
		cs.mustDo("GET", K+"?reveal=true", "", alice, 200)
		cs.mustDo("GET", K+"/records?reveal=true", "", alice, 200)
		cs.mustDo("PUT", R("q")+"?value="+url.QueryEscape(sec("update-query"))+"&reveal=true", "", alice, 200)
		cs.mustDo("PUT", R("b"), credJSON(map[string]any{"value": sec("update-body")}), alice, 200)
		cs.mustDo("PUT", R("a"), credJSON(map[string]any{"value": []string{sec("update-arr")}, "name": "a2"}), alice, 200)
		// Refused values and searches that carry secrets.
		cs.do("POST", K+"/records", credJSON(map[string]any{"name": "bad", "type": "[]CREDENTIAL", "value": []any{sec("bad-elem"), 5}}), alice)
		cs.do("POST", R("bad2")+"?type=CREDENTIAL&value="+url.QueryEscape(sec("bad-null")+"\x00"), "", alice)
		cs.do("GET", K+"/records?value="+url.QueryEscape(q1), "", alice)
		cs.do("GET", K+"/records?valueContains="+url.QueryEscape(b1), "", alice)
		cs.do("PUT", R("b")+"?type=STRING", "", alice)
		// A value that does not open: a 500, logged with its cause.
		var bRec, qRec recordJSON
		cs.mustDo("GET", R("b"), "", alice, 200).decode(t, &bRec)
		cs.mustDo("GET", R("q"), "", alice, 200).decode(t, &qRec)
		cs.setRaw(t, credAt("web", "prod", "k", bRec.ID), cs.rawValue(t, credAt("web", "prod", "k", qRec.ID)))
		status, _, env := cs.do("GET", R("b")+"?reveal=true", "", alice)
		credWant500(t, "moved value", status, env, secrets...)
		// Bad logins, bogus tokens, a refresh.
		wrong := "wrong-password-" + randomID()
		cs.do("POST", "/api/v1/auth/login", credJSON(map[string]string{"username": "alice", "password": wrong}), "")
		cs.do("POST", "/api/v1/auth/login", credJSON(map[string]string{"username": "nobody-" + randomID(), "password": wrong + "-2"}), "")
		bogus := "bogus-token-" + randomID()
		cs.do("GET", "/api/v1/projects", "", bogus)
		cs.do("GET", R("q")+"?reveal=true", "", bogus)
		forged := hs256(t, with(claims(cs.ids["alice"]), map[string]any{"exp": 1}))
		cs.do("GET", "/api/v1/projects", "", forged)
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:alice-password"))
		r := request("GET", "/api/v1/projects", "", "")
		r.Header.Set("Authorization", basic)
		cs.send(r)
		var refreshed struct {
			Token string `json:"token"`
		}
		cs.mustDo("POST", "/api/v1/auth/refresh", "", alice, 200).decode(t, &refreshed)
		cs.mustDo("GET", "/api/v1/projects", "", bob, 200)
		cs.do("GET", pathP("web"), "", bob) // 403

		out := logs.String()
		if strings.Count(out, "\n") < 30 {
			t.Fatalf("expected a log line per request, got:\n%s", out)
		}
		if !strings.Contains(out, "status=500") {
			t.Errorf("the 500 was not logged:\n%s", out)
		}
		forbidden := append([]string{}, secrets...)
		forbidden = append(forbidden, "alice-password", "bob-password", wrong, testSecret)
		for _, tok := range []string{alice, bob, refreshed.Token, bogus, forged} {
			forbidden = append(forbidden, tok, "Bearer "+tok)
			if parts := strings.Split(tok, "."); len(parts) == 3 {
				forbidden = append(forbidden, parts[2]) // the signature
			}
		}
		forbidden = append(forbidden, basic, string(key), base64.StdEncoding.EncodeToString(key),
			base64.RawURLEncoding.EncodeToString(key), hex.EncodeToString(key))
		if leaks := credFindLeaks([]string{out}, forbidden); len(leaks) > 0 {
			for _, l := range leaks {
				t.Errorf("the log holds %.40q", l)
			}
			t.Logf("log:\n%s", out)
		}
		if strings.Contains(out, "Bearer") || strings.Contains(out, "Authorization") {
			t.Errorf("the log mentions the Authorization header:\n%s", out)
		}
	})
}

// TestCredNoSecretInErrors: a refused credential value is never echoed in
// the error, and a type change that would expose a secret fails without
// showing it.
func TestCredNoSecretInErrors(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		cs := credNewServer(t, kind, hds.WithCredentialKey(testKey))
		alice := cs.token("alice")
		cs.tree(alice, "web", "prod", "k")
		K := pathK("web", "prod", "k")
		R := func(name string) string { return pathR("web", "prod", "k", name) }

		m1, m2 := credSecret("m1"), credSecret("m2")
		number := "987654321987"
		markers := []string{m1, m2, number}
		for _, tt := range []struct {
			what, method, target, body string
		}{
			{"[]CREDENTIAL with a number (body)", "POST", K + "/records", `{"name":"x","type":"[]CREDENTIAL","value":["` + m1 + `",` + number + `]}`},
			{"[]CREDENTIAL with an empty element (body)", "POST", K + "/records", `{"name":"x","type":"[]CREDENTIAL","value":["` + m1 + `",""]}`},
			{"[]CREDENTIAL with null (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":["` + m1 + `",null,"` + m2 + `"]}`},
			{"[]CREDENTIAL with a nested array (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":["` + m1 + `",["` + m2 + `"]]}`},
			{"[]CREDENTIAL with U+0000 (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":["` + m1 + `","` + m2 + `\u0000"]}`},
			{"[]CREDENTIAL given a string (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":"` + m1 + `"}`},
			{"[]CREDENTIAL given an object (body)", "POST", R("x"), `{"type":"[]CREDENTIAL","value":{"k":"` + m1 + `"}}`},
			{"[]CREDENTIAL with an empty element (query)", "POST", R("x") + "?type=[]CREDENTIAL&value=" + url.QueryEscape(`["`+m1+`",""]`), ""},
			{"[]CREDENTIAL with a number (query)", "POST", R("x") + "?type=[]CREDENTIAL&value=" + url.QueryEscape(`["`+m1+`",`+number+`]`), ""},
			{"[]CREDENTIAL not JSON (query)", "POST", R("x") + "?type=[]CREDENTIAL&value=" + url.QueryEscape(m1), ""},
			{"[]CREDENTIAL broken JSON (query)", "POST", R("x") + "?type=[]CREDENTIAL&value=" + url.QueryEscape(`["`+m1), ""},
			{"CREDENTIAL empty (body)", "POST", K + "/records", `{"name":"x","type":"CREDENTIAL","value":""}`},
			{"CREDENTIAL empty (query)", "POST", R("x") + "?type=CREDENTIAL&value=", ""},
			{"CREDENTIAL left out (body)", "POST", R("x"), `{"type":"CREDENTIAL"}`},
			{"CREDENTIAL a number (body)", "POST", R("x"), `{"type":"CREDENTIAL","value":` + number + `}`},
			{"CREDENTIAL an array (body)", "POST", R("x"), `{"type":"CREDENTIAL","value":["` + m1 + `"]}`},
			{"CREDENTIAL with U+0000 (body)", "POST", R("x"), `{"type":"CREDENTIAL","value":"` + m1 + `\u0000` + m2 + `"}`},
			{"CREDENTIAL with U+0000 (query)", "POST", R("x") + "?type=CREDENTIAL&value=" + url.QueryEscape(m1+"\x00"+m2), ""},
			{"CREDENTIAL invalid UTF-8 (query)", "POST", R("x") + "?type=CREDENTIAL&value=" + url.QueryEscape(m1+"\xff"), ""},
		} {
			status, _, env := cs.do(tt.method, tt.target, tt.body, alice)
			wantError(t, tt.what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			if leaks := credFindLeaks([]string{string(env.raw)}, markers); len(leaks) > 0 {
				t.Errorf("%s: the error echoes %q: %s", tt.what, leaks, env.raw)
			}
		}
		var l listJSON[recordJSON]
		cs.mustDo("GET", K+"/records", "", alice, 200).decode(t, &l)
		if l.Total != 0 {
			t.Errorf("refused credentials were stored: %+v", l.Items)
		}

		// Updates of existing credentials: refused values and type changes
		// show neither the new nor the current value, sealed or not.
		cur, curArr := credSecret("current"), []string{credSecret("current-0"), credSecret("current-1")}
		c := cs.addRecord(alice, K, "c", "CREDENTIAL", credJSON(cur))
		ca := cs.addRecord(alice, K, "ca", "[]CREDENTIAL", credJSON(curArr))
		rawC := cs.rawValue(t, credAt("web", "prod", "k", c.ID))
		rawCA := cs.rawValue(t, credAt("web", "prod", "k", ca.ID))
		var sealedC string
		var sealedCA []string
		_ = json.Unmarshal([]byte(rawC), &sealedC)
		_ = json.Unmarshal([]byte(rawCA), &sealedCA)
		hidden := append([]string{cur, curArr[0], curArr[1], m1, m2, number, sealedC, rawC, rawCA}, sealedCA...)
		for _, tt := range []struct {
			what, target, body string
		}{
			{"CREDENTIAL -> []CREDENTIAL without a value (query)", R("c") + "?type=[]CREDENTIAL", ""},
			{"CREDENTIAL -> []CREDENTIAL without a value (body)", R("c"), `{"type":"[]credential"}`},
			{"[]CREDENTIAL -> CREDENTIAL without a value (query)", R("ca") + "?type=CREDENTIAL", ""},
			{"[]CREDENTIAL -> CREDENTIAL without a value (body)", R("ca"), `{"type":"CREDENTIAL"}`},
			{"CREDENTIAL -> STRING without a value", R("c") + "?type=STRING", ""},
			{"CREDENTIAL -> []STRING without a value", R("c"), `{"type":"[]STRING"}`},
			{"CREDENTIAL -> UUID without a value", R("c") + "?type=UUID&reveal=true", ""},
			{"[]CREDENTIAL -> []STRING without a value", R("ca") + "?type=[]STRING", ""},
			{"[]CREDENTIAL -> STRING without a value", R("ca"), `{"type":"STRING"}`},
			{"CREDENTIAL -> []CREDENTIAL with a bad value", R("c"), `{"type":"[]CREDENTIAL","value":["` + m1 + `",` + number + `]}`},
			{"CREDENTIAL, an empty value", R("c") + "?value=&reveal=true", ""},
			{"CREDENTIAL, a value with U+0000", R("c"), `{"value":"` + m1 + `\u0000"}`},
			{"[]CREDENTIAL, a bad element", R("ca") + "?value=" + url.QueryEscape(`["`+m1+`",""]`), ""},
			{"[]CREDENTIAL, a rename with a bad element", R("ca"), `{"name":"ca2","value":["` + m2 + `",` + number + `]}`},
		} {
			status, _, env := cs.do("PUT", tt.target, tt.body, alice)
			wantError(t, tt.what, status, env, http.StatusBadRequest, "VALIDATION_ERROR", "")
			if leaks := credFindLeaks([]string{string(env.raw)}, hidden); len(leaks) > 0 {
				t.Errorf("%s: the error shows %q: %s", tt.what, leaks, env.raw)
			}
			if strings.Contains(string(env.raw), "hds1:") {
				t.Errorf("%s: the error shows a sealed value: %s", tt.what, env.raw)
			}
		}
		// Nothing changed.
		for _, tt := range []struct{ name, typ, want string }{{"c", "CREDENTIAL", credJSON(cur)}, {"ca", "[]CREDENTIAL", credJSON(curArr)}} {
			got := cs.credReveal(R(tt.name), alice)
			if got.Type != tt.typ || compact(t, got.Value) != tt.want || got.Version != 1 {
				t.Errorf("%s after refused updates: %s %s version %d", tt.name, got.Type, got.Value, got.Version)
			}
		}
	})
}
