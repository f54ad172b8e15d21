package e2e_test

// Issue 4: CREDENTIAL records as real secrets. This file holds the harness
// that looks below the API, at what each store really holds, and the tests
// through the API; credentials_sealed_test.go reads and moves sealed values
// behind the server's back, credentials_rotation_test.go rotates keys and
// credentials_leaks_test.go captures the logs and errors.

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
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
