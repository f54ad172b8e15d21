package e2e_test

// Issue 4: CREDENTIAL records as real secrets. These tests look below the
// API, at what each store really holds, move sealed values around behind
// the server's back, rotate keys, and capture the logs.

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	var st store.Projects
	var users store.Accounts
	switch kind.name {
	case "memory":
		cs.mem = memory.New()
		st, users = cs.mem, cs.mem
	case "postgres":
		dbURL := pgtest.NewURL(t) // skips, or fails, as pgtest decides
		served, err := sqlx.Open("postgres", dbURL)
		require.NoError(t, err, "open the served connection")
		served.SetMaxOpenConns(4)
		t.Cleanup(func() { served.Close() })
		cs.db, err = sqlx.Open("postgres", dbURL)
		require.NoError(t, err, "open the test's own connection")
		cs.db.SetMaxOpenConns(2)
		t.Cleanup(func() { cs.db.Close() })
		pg := postgres.New(served)
		st, users = pg, pg
	default:
		t.Skipf("no raw access to the %s store", kind.name)
	}
	fixed := storeKind{name: kind.name, new: func(testing.TB) (store.Projects, store.Accounts) { return st, users }}
	cs.client = newServer(t, fixed, opts...)
	return cs
}

// rawValue is the value column of the record at p (p.Record its id), as
// the store holds it.
func (cs *credServer) rawValue(t *testing.T, p store.Path) string {
	t.Helper()
	if cs.db != nil {
		var v string
		err := cs.db.GetContext(t.Context(), &v, `SELECT value FROM hds_records WHERE id = $1`, p.Record)
		require.NoError(t, err, "select the value of %s", p.Record)
		return v
	}
	p.Caller.UserID = ""
	r, err := cs.store.FindRecord(t.Context(), p)
	require.NoError(t, err, "store: find %s", p.Record)
	return string(r.Value)
}

// setRaw replaces the stored value of the record at p (p.Record its id)
// behind the server's back.
func (cs *credServer) setRaw(t *testing.T, p store.Path, value string) {
	t.Helper()
	if cs.db != nil {
		res, err := cs.db.ExecContext(t.Context(), `UPDATE hds_records SET value = $1 WHERE id = $2`, value, p.Record)
		require.NoError(t, err, "update the value of %s", p.Record)
		n, _ := res.RowsAffected()
		require.EqualValues(t, 1, n, "update the value of %s: rows affected", p.Record)
		return
	}
	p.Caller.UserID = ""
	_, err := cs.store.UpdateRecord(t.Context(), p, store.Write{}, func(r *store.Record) error {
		r.Value = json.RawMessage(value)
		return nil
	})
	require.NoError(t, err, "store: update %s", p.Record)
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
		err := cs.db.SelectContext(t.Context(), &tables,
			`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
		require.NoError(t, err, "list tables")
		require.Contains(t, tables, "hds_records", "hds_records among the tables")
		for _, tbl := range tables {
			var rows []string
			err := cs.db.SelectContext(t.Context(), &rows, `SELECT t::text FROM "`+tbl+`" t`)
			require.NoError(t, err, "dump %s", tbl)
			out = append(out, rows...)
		}
		return out
	}
	credWalk(reflect.ValueOf(cs.mem), map[uintptr]bool{}, &out)
	for _, p := range clusters {
		p.Caller.UserID = ""
		k, err := cs.store.FindCluster(t.Context(), p, true)
		require.NoError(t, err, "store: find cluster %s", p.Cluster)
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
	_, err := rand.Read(k)
	require.NoError(t, err, "random key")
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
	assert.Empty(t, env.details(), "%s: details", what)
	assert.Empty(t, credFindLeaks([]string{string(env.raw)}, hidden), "%s: the body holds hidden values: %s", what, env.raw)
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
				assert.NotContains(t, string(env.raw), "s3cr3t", "%s: the secret appears in a masked response", what)
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
			assert.Equal(t, tt.want, value(tt.what, tt.method, tt.target, tt.body, tt.status), "%s: value", tt.what)
		}

		// Lists and cluster data.
		env := c.mustDo("GET", K+"/records", "", alice, http.StatusOK)
		assert.NotContains(t, string(env.raw), "s3cr3t", "record list leaks a secret")
		var list listJSON[recordJSON]
		env.decode(t, &list)
		for _, r := range list.Items {
			switch r.Type {
			case "CREDENTIAL":
				assert.Equal(t, mask, string(r.Value), "record list: %s, want masked", r.Name)
			case "[]CREDENTIAL":
				assert.Regexp(t, regexp.MustCompile(`^\[("\*{8}"(,"\*{8}")*)?\]$`), string(r.Value), "record list: %s, want each element masked", r.Name)
			}
		}
		env = c.mustDo("GET", K+"/records?reveal=true", "", alice, http.StatusOK)
		for _, s := range []string{"s3cr3t-new", "s3cr3t-newer", "s3cr3t-a", "s3cr3t-c", "s3cr3t-x"} {
			assert.Contains(t, string(env.raw), s, "record list with reveal=true lacks %s", s)
		}
		env = c.mustDo("GET", K, "", alice, http.StatusOK)
		assert.NotContains(t, string(env.raw), "s3cr3t", "cluster data leaks a secret")
		var k clusterJSON
		env.decode(t, &k)
		assert.Equal(t, mask, string(k.Data["pw"]), "cluster data: pw in %s", env.Data)
		assert.Equal(t, `["********","********"]`, compact(t, k.Data["arr"]), "cluster data: arr in %s", env.Data)
		assert.Equal(t, `"visible"`, string(k.Data["plain"]), "cluster data: plain in %s", env.Data)
		c.mustDo("GET", K+"?reveal=true", "", alice, http.StatusOK).decode(t, &k)
		assert.Equal(t, `"s3cr3t-new"`, string(k.Data["pw"]), "cluster data with reveal=true: pw")
		assert.Equal(t, `["s3cr3t-a","s3cr3t-b"]`, compact(t, k.Data["arr"]), "cluster data with reveal=true: arr")

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
		assert.Equal(t, http.StatusNotFound, status, "a create with a bad reveal created the record")
		assert.Equal(t, `"s3cr3t-new"`, value("after the bad reveals", "GET", R("pw")+"?reveal=true", "", 200), "a PUT with a bad reveal changed the secret")

		// Never matched by value filters.
		for _, q := range []string{"value=s3cr3t-new", "valueContains=s3cr3t", "valueContains=S3CR3T", "valueContains=**", "value=********", `value="s3cr3t-new"`, "valueContains=hds"} {
			var l listJSON[recordJSON]
			c.mustDo("GET", K+"/records?"+q, "", alice, http.StatusOK).decode(t, &l)
			assert.Zero(t, l.Total, "?%s matched records: %+v", q, l.Items)
		}
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records?type=credential", "", alice, http.StatusOK).decode(t, &l)
		assert.Equal(t, 4, l.Total, "?type=credential: total (pw, pw2, pw4, plain2)")
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
			assert.Contains(t, strings.ToLower(env.details()), "no credential key", "without a credential key: %s: details say that no credential key is configured", tt.what)
		}
		var r recordJSON
		c.mustDo("GET", R("s"), "", alice, http.StatusOK).decode(t, &r)
		assert.Equal(t, "STRING", r.Type, "the STRING record changed: %+v", r)
		assert.Equal(t, `"plain"`, string(r.Value), "the STRING record changed: %+v", r)
		assert.EqualValues(t, 1, r.Version, "the STRING record changed: %+v", r)
		var l listJSON[recordJSON]
		c.mustDo("GET", K+"/records", "", alice, http.StatusOK).decode(t, &l)
		assert.Equal(t, 1, l.Total, "credential records were stored: %+v", l.Items)
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
			require.NoError(t, err, "store: find %s", name)
			assert.NotContains(t, string(r.Value), "plain-marker", "the store holds the plain text of %s", name)
		}
		recs, _, err := c.store.FindRecords(t.Context(), at(""), store.RecordQuery{ListQuery: store.NewListQuery()})
		require.NoError(t, err, "store: find records")
		for _, r := range recs {
			assert.NotContains(t, string(r.Value), "plain-marker", "the store lists the plain text of %s", r.Name)
		}

		// A sealed value moved to another record does not open there.
		one, err := c.store.FindRecord(t.Context(), at("one"))
		require.NoError(t, err, "store: find one")
		_, err = c.store.UpdateRecord(t.Context(), at("two"), store.Write{}, func(r *store.Record) error {
			r.Value = one.Value
			return nil
		})
		require.NoError(t, err, "store: move one's sealed value onto two")
		r := request("GET", R("two")+"?reveal=true", "", alice)
		status, _, env := c.send(r)
		assert.NotEqual(t, http.StatusOK, status, "a sealed value moved to another record opened: %s", env.raw)
		assert.NotContains(t, string(env.raw), "plain-marker-1", "a sealed value moved to another record opened")
		c.mustDo("GET", R("two"), "", alice, http.StatusOK) // masked, no need to open

		// Keys rotate: a new primary key with the old one still opens.
		rotated := c.attach(hds.WithCredentialKey(newKey, oldKey))
		var got recordJSON
		rotated.mustDo("GET", R("one")+"?reveal=true", "", alice, http.StatusOK).decode(t, &got)
		assert.Equal(t, `"plain-marker-1"`, string(got.Value), "after rotation: the plain text of one")
		rotated.mustDo("GET", R("many")+"?reveal=true", "", alice, http.StatusOK).decode(t, &got)
		assert.Equal(t, `["plain-marker-2","plain-marker-3"]`, compact(t, got.Value), "after rotation: the plain text of many")
		rotated.addRecord(alice, K, "three", "CREDENTIAL", `"plain-marker-5"`)
		// Only the key that sealed a value (or a ring holding it) opens it.
		newOnly := c.attach(hds.WithCredentialKey(newKey))
		newOnly.mustDo("GET", R("three")+"?reveal=true", "", alice, http.StatusOK)
		status, _, env = newOnly.send(request("GET", R("one")+"?reveal=true", "", alice))
		assert.NotEqual(t, http.StatusOK, status, "a value sealed by a key not in the ring opened: %s", env.raw)
		assert.NotContains(t, string(env.raw), "plain-marker-1", "a value sealed by a key not in the ring opened")
		status, _, env = c.send(request("GET", R("three")+"?reveal=true", "", alice))
		assert.NotEqual(t, http.StatusOK, status, "a value sealed by the new key opened with the old ring: %s", env.raw)
		assert.NotContains(t, string(env.raw), "plain-marker-5", "a value sealed by the new key opened with the old ring")
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
		require.NotEmpty(t, out, "nothing was logged")
		secrets := []string{"log-s3cret", "alice-password", "wrong-log-password", alice, strings.Split(alice, ".")[2], "Bearer"}
		var tok struct {
			Token string `json:"token"`
		}
		refreshed.decode(t, &tok)
		secrets = append(secrets, tok.Token)
		for _, s := range secrets {
			assert.NotContains(t, out, s, "the log holds %.24q...", s)
		}
	})
}

// Below the API: what each store holds.

// TestCredRawContents: whatever form a credential comes in, the store
// holds no plain text of it, and the same secret never seals to the same
// stored value twice. History is off: a STRING typed into a CREDENTIAL
// leaves its plain STRING version in the history
// (docs/api.md#15-concurrency-control-and-record-history keeps every
// replaced state); history_test.go covers old credential versions.
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
		assert.Equal(t, "CREDENTIAL", typed.Type, "STRING -> CREDENTIAL by type alone: type")
		assert.Equal(t, `"********"`, string(typed.Value), "STRING -> CREDENTIAL by type alone: value")
		cs.mustDo("PUT", R("tb"), `{"type":"CREDENTIAL"}`, alice, 200)
		cs.mustDo("PUT", R("ta")+"?type=[]credential", "", alice, 200).decode(t, &typed)
		assert.Equal(t, "[]CREDENTIAL", typed.Type, "[]STRING -> []CREDENTIAL by type alone: type")
		assert.Equal(t, `["********","********"]`, compact(t, typed.Value), "[]STRING -> []CREDENTIAL by type alone: value")
		recs["tq"].typ, recs["tb"].typ, recs["ta"].typ = "CREDENTIAL", "CREDENTIAL", "[]CREDENTIAL"

		// A plain STRING, to show that the dump does see plain text.
		visible := credSecret("visible")
		cs.mustDo("POST", R("plain")+"?type=STRING&value="+url.QueryEscape(visible), "", alice, 201)

		// Every credential reads back through the API.
		for name, r := range recs {
			got := cs.credReveal(r.target, r.token)
			assert.Equal(t, r.want, compact(t, got.Value), "%s with reveal=true: value", name)
			assert.Equal(t, r.typ, got.Type, "%s with reveal=true: type", name)
		}

		// The record values, as the store holds them.
		for name, r := range recs {
			raw := cs.rawValue(t, r.path)
			assert.Empty(t, credFindLeaks([]string{raw}, secrets), "%s: the store holds the plain text of these secrets: %s", name, raw)
			if r.typ == "[]CREDENTIAL" {
				var elems, plain []string
				_ = json.Unmarshal([]byte(r.want), &plain)
				assert.NoError(t, json.Unmarshal([]byte(raw), &elems), "%s: stored %s, want an array of %d sealed elements", name, raw, len(plain))
				if assert.Len(t, elems, len(plain), "%s: stored %s, want an array of %d sealed elements", name, raw, len(plain)) {
					for i, e := range elems {
						assert.NotEmpty(t, e, "%s: element %d stored empty", name, i)
						assert.NotEqual(t, plain[i], e, "%s: element %d stored as its plain text", name, i)
						assert.NotEqual(t, "********", e, "%s: element %d stored as the mask", name, i)
					}
				}
			} else {
				var s string
				assert.NoError(t, json.Unmarshal([]byte(raw), &s), "%s: stored %s, want a sealed string", name, raw)
				assert.NotEmpty(t, s, "%s: stored %s, want a sealed string", name, raw)
				assert.NotEqual(t, "********", s, "%s: stored %s, want a sealed string", name, raw)
			}
		}
		// Everything the store holds.
		dump := cs.rawDump(t, credAt("web", "prod", "k", ""), credAt("bobs", "c", "k", ""))
		assert.Empty(t, credFindLeaks(dump, secrets), "the store's raw contents hold the plain text of these secrets")
		assert.NotEmpty(t, credFindLeaks(dump, []string{visible}), "the raw dump does not even show the plain STRING %q: the check is blind", visible)

		// The same secret twice: two records, and one record updated to the
		// same secret, and two equal elements of one array.
		same := sec("same")
		var d1, d2 recordJSON
		cs.mustDo("POST", R("d1")+"?type=CREDENTIAL&value="+url.QueryEscape(same), "", alice, 201).decode(t, &d1)
		cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "d2", "type": "CREDENTIAL", "value": same}), alice, 201).decode(t, &d2)
		raw1 := cs.rawValue(t, credAt("web", "prod", "k", d1.ID))
		raw2 := cs.rawValue(t, credAt("web", "prod", "k", d2.ID))
		assert.NotEqual(t, raw1, raw2, "the same secret in two records is stored as the same value")
		cs.mustDo("PUT", R("d1")+"?value="+url.QueryEscape(same), "", alice, 200)
		assert.NotEqual(t, raw1, cs.rawValue(t, credAt("web", "prod", "k", d1.ID)), "a record updated to the same secret is stored as the same value")
		cs.mustDo("PUT", R("d1"), credJSON(map[string]any{"value": same}), alice, 200)
		var dup recordJSON
		cs.mustDo("POST", K+"/records", credJSON(map[string]any{"name": "dup", "type": "[]CREDENTIAL", "value": []string{same, same, same}}), alice, 201).decode(t, &dup)
		var elems []string
		require.NoError(t, json.Unmarshal([]byte(cs.rawValue(t, credAt("web", "prod", "k", dup.ID))), &elems), "stored []CREDENTIAL of 3")
		require.Len(t, elems, 3, "stored []CREDENTIAL of 3")
		assert.NotEqual(t, elems[0], elems[1], "equal elements of a []CREDENTIAL are stored as equal values: %q", elems)
		assert.NotEqual(t, elems[1], elems[2], "equal elements of a []CREDENTIAL are stored as equal values: %q", elems)
		assert.NotEqual(t, elems[0], elems[2], "equal elements of a []CREDENTIAL are stored as equal values: %q", elems)
		dump = cs.rawDump(t, credAt("web", "prod", "k", ""))
		assert.Empty(t, credFindLeaks(dump, []string{same}), "the store's raw contents hold the repeated secret")
		for _, name := range []string{"d1", "d2", "dup"} {
			got := cs.credReveal(R(name), alice)
			assert.Contains(t, string(got.Value), same, "%s reads back", name)
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
		require.NoError(t, json.Unmarshal([]byte(cs.rawValue(t, at(arr.ID))), &ea), "stored arr")
		require.Len(t, ea, 2, "stored arr")
		require.NoError(t, json.Unmarshal([]byte(cs.rawValue(t, at(brr.ID))), &eb), "stored brr")
		require.Len(t, eb, 2, "stored brr")
		require.NoError(t, json.Unmarshal([]byte(cs.rawValue(t, at(swap.ID))), &es), "stored swap")
		require.Len(t, es, 2, "stored swap")
		// Every stored ciphertext, raw and as its JSON string.
		hidden := slices.Concat(secrets, ea, eb, es)
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
			assert.Equal(t, tt.mask, compact(t, got.Value), "GET %s (moved) without reveal", tt.name)
			env = cs.mustDo("GET", R(got.ID), "", alice, http.StatusOK)
			assert.Empty(t, credFindLeaks([]string{string(env.raw)}, hidden), "GET %s (moved) without reveal shows hidden values", tt.name)
			// A rename answers with the record: masked it works, revealed it
			// cannot open.
			status, _, env = cs.do("PUT", R(tt.name)+"?rename="+tt.name+"-x&reveal=true", "", alice)
			assert.NotEqual(t, http.StatusOK, status, "PUT %s (moved) with reveal=true: %s", tt.name, env.raw)
			assert.NotContains(t, string(env.raw), "cred-", "PUT %s (moved) with reveal=true", tt.name)
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
			assert.Empty(t, credFindLeaks([]string{string(env.raw)}, hidden), "GET %s without reveal shows hidden values", target)
		}

		// The source records are untouched and still open.
		assert.Equal(t, credJSON(s1), string(cs.credReveal(R("one"), alice).Value), "one after its value was copied away")
		assert.Equal(t, credJSON(a), compact(t, cs.credReveal(R("arr"), alice).Value), "arr after its element was copied away")

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
		assert.Equal(t, `"********"`, string(masked.Value), "without a credential key, GET one: the mask")

		// A new value heals a record (by id: the rename above may or may
		// not have been kept).
		fresh := credSecret("fresh")
		cs.mustDo("PUT", R(two.ID), credJSON(map[string]any{"value": fresh}), alice, http.StatusOK)
		assert.Equal(t, credJSON(fresh), string(cs.credReveal(R(two.ID), alice).Value), "after a new value")
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
				if !assert.Equal(t, http.StatusOK, status, "%s: GET %s with reveal=true: %s", what, r.target, env.raw) {
					continue
				}
				env.decode(t, &got)
				assert.Equal(t, r.want, compact(t, got.Value), "%s: %s reads", what, r.target)
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
		require.NoError(t, err, "RotateCredentials")
		want := hds.RotationProgress{Seen: len(ids), Resealed: len(ids) - 1, LastID: ids[len(ids)-1]}
		assert.Equal(t, want, got, "RotateCredentials")
		require.GreaterOrEqual(t, len(reports), 3, "progress reports over %d records in batches of 2: %+v", len(ids), reports)
		for i, p := range reports[:3] {
			n := 2 * (i + 1)
			resealed := 0
			for _, id := range ids[:n] {
				if !underK2[id] {
					resealed++
				}
			}
			assert.Equal(t, n, p.Seen, "progress report %d: Seen (%+v)", i, p)
			assert.Equal(t, resealed, p.Resealed, "progress report %d: Resealed (%+v)", i, p)
			assert.Equal(t, ids[n-1], p.LastID, "progress report %d: LastID (%+v)", i, p)
		}
		assert.Equal(t, want, reports[len(reports)-1], "last progress report")

		// K1 can go: K2 alone reads everything; K1 alone reads nothing.
		k2only := cs.attach(hds.WithCredentialKey(k2))
		readAll("after rotation, K2 alone", k2only)
		for _, r := range recs {
			cantRead("after rotation, K1 alone", cs.client, r)
		}
		var pl recordJSON
		k2only.mustDo("GET", pathR("web", "prod", "k", "plain"), "", alice, 200).decode(t, &pl)
		assert.Equal(t, plain.Version, pl.Version, "rotation touched a STRING record: %+v", pl)
		assert.Equal(t, `"not a secret"`, string(pl.Value), "rotation touched a STRING record: %+v", pl)

		// Again: nothing to do. With K2 alone: nothing to do either.
		reports = nil
		got, err = hds.RotateCredentials(ctx, cs.store, rot)
		assert.NoError(t, err, "a second rotation")
		assert.Zero(t, got.Resealed, "a second rotation: re-sealed (%+v)", got)
		assert.Equal(t, len(ids), got.Seen, "a second rotation: seen (%+v)", got)
		for _, p := range reports {
			assert.Zero(t, p.Resealed, "a second rotation reports re-sealing: %+v", p)
		}
		got, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2})
		assert.NoError(t, err, "a rotation with K2 alone")
		assert.Zero(t, got.Resealed, "a rotation with K2 alone: re-sealed (%+v)", got)
		assert.Equal(t, len(ids), got.Seen, "a rotation with K2 alone: seen (%+v)", got)
		readAll("after the repeated rotations, K2 alone", k2only)

		// Resuming: a rotation to K3 after the first batch's last id visits
		// only the records after it; its final check covers every record
		// and finds the first batch still under K2.
		after := ids[1]
		reports = nil
		got, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k3, Previous: [][]byte{k2}, BatchSize: 2, After: after,
			Progress: func(p hds.RotationProgress) { reports = append(reports, p) }})
		require.ErrorIs(t, err, hds.ErrRotationIncomplete, "resumed rotation: ErrRotationIncomplete for the first batch")
		assert.Equal(t, hds.RotationProgress{Seen: len(ids) - 2, Resealed: len(ids) - 2, LastID: ids[len(ids)-1], Remaining: 2}, got, "resumed rotation")
		for _, p := range reports {
			assert.Greater(t, p.LastID, after, "resumed rotation reported an id not after %s: %+v", after, p)
		}
		k3only := cs.attach(hds.WithCredentialKey(k3))
		for _, r := range recs {
			if r.id <= after {
				cantRead("resumed rotation left the first batch under K2", k3only, r)
			} else {
				status, _, env := k3only.do("GET", r.target+"?reveal=true", "", r.token)
				assert.Equal(t, http.StatusOK, status, "after the resumed rotation, K3 alone: %s: %s", r.target, env.raw)
			}
		}
		got, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k3, Previous: [][]byte{k2}, BatchSize: 2})
		assert.NoError(t, err, "the rotation from the start after the resumed one")
		assert.Equal(t, 2, got.Resealed, "the rotation from the start after the resumed one: re-sealed (%+v)", got)
		assert.Equal(t, len(ids), got.Seen, "the rotation from the start after the resumed one: seen (%+v)", got)
		readAll("after rotating to K3, K3 alone", k3only)

		// Keys must be 32 bytes.
		for _, bad := range []hds.Rotation{{Primary: k3[:16]}, {Primary: nil}, {Primary: k3, Previous: [][]byte{k2[:31]}}} {
			_, err := hds.RotateCredentials(ctx, cs.store, bad)
			if assert.Error(t, err, "RotateCredentials with a bad key") {
				assert.Empty(t, credFindLeaks([]string{err.Error()}, []string{string(k3), string(k2)}), "RotateCredentials error holds a key: %v", err)
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
			require.Error(t, err, "RotateCredentials over a value no key opens")
			assert.ErrorContains(t, err, lost.ID, "the error names the record")
			var sealed []string
			_ = json.Unmarshal([]byte(raw), &sealed)
			hidden := append([]string{lostSecret, raw, string(k1), string(k2), string(lostKey),
				base64.StdEncoding.EncodeToString(k1), base64.StdEncoding.EncodeToString(k2)}, sealed...)
			assert.Empty(t, credFindLeaks([]string{err.Error()}, hidden), "the error %q holds hidden values", err)
			// Once the record is dealt with, the rotation completes.
			cs.mustDo("DELETE", pathR("web", "prod", "k", "lost"), "", alice, http.StatusNoContent)
			_, err = hds.RotateCredentials(ctx, cs.store, hds.Rotation{Primary: k2, Previous: [][]byte{k1}, BatchSize: 2})
			require.NoError(t, err, "RotateCredentials after the lost record was deleted")
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
			require.Error(t, err, "RotateCredentials over a value moved from another record")
			assert.ErrorContains(t, err, m2.ID, "the error names the record")
			var v string
			_ = json.Unmarshal([]byte(raw), &v)
			assert.Empty(t, credFindLeaks([]string{err.Error()}, []string{s1, s2, v}), "the error %q holds hidden values", err)
		})
	})
}

// credRevealOK reads target with reveal=true and wants 200.
func (c *client) credRevealOK(t *testing.T, target, token string) {
	t.Helper()
	status, _, env := c.do("GET", target+"?reveal=true", "", token)
	assert.Equal(t, http.StatusOK, status, "GET %s with reveal=true: %s", target, env.raw)
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
		require.GreaterOrEqual(t, strings.Count(out, "\n"), 30, "expected a log line per request, got:\n%s", out)
		assert.Contains(t, out, "status=500", "the 500 was not logged")
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
		leaks := credFindLeaks([]string{out}, forbidden)
		for _, l := range leaks {
			assert.Fail(t, "a secret in the log", "the log holds %.40q", l)
		}
		if len(leaks) > 0 {
			t.Logf("log:\n%s", out)
		}
		assert.NotContains(t, out, "Bearer", "the log mentions the Authorization header")
		assert.NotContains(t, out, "Authorization", "the log mentions the Authorization header")
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
			assert.Empty(t, credFindLeaks([]string{string(env.raw)}, markers), "%s: the error echoes a marker: %s", tt.what, env.raw)
		}
		var l listJSON[recordJSON]
		cs.mustDo("GET", K+"/records", "", alice, 200).decode(t, &l)
		assert.Zero(t, l.Total, "refused credentials were stored: %+v", l.Items)

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
			assert.Empty(t, credFindLeaks([]string{string(env.raw)}, hidden), "%s: the error shows hidden values: %s", tt.what, env.raw)
			assert.NotContains(t, string(env.raw), "hds1:", "%s: the error shows a sealed value", tt.what)
		}
		// Nothing changed.
		for _, tt := range []struct{ name, typ, want string }{{"c", "CREDENTIAL", credJSON(cur)}, {"ca", "[]CREDENTIAL", credJSON(curArr)}} {
			got := cs.credReveal(R(tt.name), alice)
			assert.Equal(t, tt.typ, got.Type, "%s after refused updates: type", tt.name)
			assert.Equal(t, tt.want, compact(t, got.Value), "%s after refused updates: value", tt.name)
			assert.EqualValues(t, 1, got.Version, "%s after refused updates: version", tt.name)
		}
	})
}
