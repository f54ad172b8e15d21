package hds_test

// The README walk-through through Go clients generated from the served
// OpenAPI document (internal/clients: oapi-codegen and ogen, pinned by the
// tool directives of go.mod; internal/clients/drift_test.go keeps them
// generated from today's document). Each runs against hds.New on
// httptest: log in, the four levels in both forms, records of several
// types in both forms (a NULL without a value and a rename-only update
// among them, which an untyped RecordValue broke), a filtered list,
// reveal, update, rename, typed errors and deletes. Every exchange is
// also validated against the document (openapi_test.go).

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/clients/oapiclient"
	"github.com/hds-go/hds/internal/clients/ogenclient"
)

// generatedClientServer starts hds.New (memory store, alice and bob, a
// credential key) on httptest behind a handler that validates every
// exchange against the served document.
func generatedClientServer(t *testing.T) (*client, *httptest.Server) {
	t.Helper()
	c := newServer(t, storeKinds[0], hds.WithCredentialKey(testKey))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readBody(r)
		rec := httptest.NewRecorder()
		c.h.ServeHTTP(rec, r)
		res := rec.Result()
		for _, problem := range c.api.check("", r, body, res, rec.Body.Bytes()) {
			t.Errorf("%s %s: %d: breaks the OpenAPI document: %s", r.Method, r.URL, res.StatusCode, problem)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	return c, srv
}

func TestGeneratedClientOapiCodegen(t *testing.T) {
	_, srv := generatedClientServer(t)
	ctx := context.Background()

	anon, err := oapiclient.NewClientWithResponses(srv.URL)
	require.NoError(t, err)
	health, err := anon.GetHealthWithResponse(ctx)
	require.NoError(t, err)
	require.NotNil(t, health.JSON200, "GET /health: %d %s", health.StatusCode(), health.Body)
	assert.Equal(t, oapiclient.HealthStatus("ok"), health.JSON200.Status)

	// Log in; a wrong password is a typed 401.
	bad, err := anon.LoginWithResponse(ctx, oapiclient.LoginRequest{Username: "alice", Password: "wrong"})
	require.NoError(t, err)
	require.NotNil(t, bad.JSON401, "wrong password: %d %s", bad.StatusCode(), bad.Body)
	assert.Equal(t, oapiclient.AUTHENTICATIONFAILED, bad.JSON401.Error.Code)
	assert.Equal(t, "Invalid username or password", bad.JSON401.Error.Message)
	login, err := anon.LoginWithResponse(ctx, oapiclient.LoginRequest{Username: "alice", Password: "alice-password"})
	require.NoError(t, err)
	require.NotNil(t, login.JSON200, "login: %d %s", login.StatusCode(), login.Body)
	token := login.JSON200.Data.Token

	api, err := oapiclient.NewClientWithResponses(srv.URL, oapiclient.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	require.NoError(t, err)

	// Without a token: a typed 401.
	noToken, err := anon.ListProjectsWithResponse(ctx, nil)
	require.NoError(t, err)
	require.NotNil(t, noToken.JSON401, "no token: %d %s", noToken.StatusCode(), noToken.Body)
	assert.Equal(t, "No authorization token provided", noToken.JSON401.Error.Message)

	// The four levels: a project and a cluster in the path form (no
	// body), a collection in the body form.
	p, err := api.CreateProjectAtWithBodyWithResponse(ctx, "webshop", "", nil)
	require.NoError(t, err)
	require.NotNil(t, p.JSON201, "create project: %d %s", p.StatusCode(), p.Body)
	assert.Equal(t, "webshop", p.JSON201.Data.Name)
	col, err := api.CreateCollectionWithResponse(ctx, "webshop", oapiclient.NameRequest{Name: "prod"})
	require.NoError(t, err)
	require.NotNil(t, col.JSON201, "create collection: %d %s", col.StatusCode(), col.Body)
	assert.Equal(t, "webshop", col.JSON201.Data.Project)
	k, err := api.CreateClusterAtWithBodyWithResponse(ctx, "webshop", "prod", "database", "", nil)
	require.NoError(t, err)
	require.NotNil(t, k.JSON201, "create cluster: %d %s", k.StatusCode(), k.Body)

	// Records in the query-string form...
	created := func(what string, res *oapiclient.RecordResponse, status int, body []byte) oapiclient.RecordItem {
		t.Helper()
		require.NotNil(t, res, "%s: %d %s", what, status, body)
		return res.Data
	}
	port, err := api.CreateRecordAtWithBodyWithResponse(ctx, "webshop", "prod", "database", "port",
		&oapiclient.CreateRecordAtParams{Type: ptr("INTEGER"), Value: ptr("5432")}, "", nil)
	require.NoError(t, err)
	rec := created("port", port.JSON201, port.StatusCode(), port.Body)
	assert.Equal(t, oapiclient.Integer, rec.Type)
	n, err := rec.Value.AsNumberValue()
	require.NoError(t, err)
	assert.Equal(t, oapiclient.NumberValue(5432), n)
	pw, err := api.CreateRecordAtWithBodyWithResponse(ctx, "webshop", "prod", "database", "password",
		&oapiclient.CreateRecordAtParams{Type: ptr("CREDENTIAL"), Value: ptr("s3cret")}, "", nil)
	require.NoError(t, err)
	rec = created("password", pw.JSON201, pw.StatusCode(), pw.Body)
	masked, err := rec.Value.AsStringValue()
	require.NoError(t, err)
	assert.Equal(t, oapiclient.StringValue("********"), masked)
	nothing, err := api.CreateRecordAtWithBodyWithResponse(ctx, "webshop", "prod", "database", "nothing",
		&oapiclient.CreateRecordAtParams{Type: ptr("NULL")}, "", nil)
	require.NoError(t, err)
	rec = created("nothing", nothing.JSON201, nothing.StatusCode(), nothing.Body)
	assert.Equal(t, oapiclient.Null, rec.Type)

	// ...and in the body form, values typed as the document's unions.
	value := func(from func(*oapiclient.RecordValue) error) *oapiclient.RecordValue {
		var v oapiclient.RecordValue
		require.NoError(t, from(&v))
		return &v
	}
	bodies := []oapiclient.RecordCreateRequest{
		{Name: "max_connections", Type: "INT", Value: value(func(v *oapiclient.RecordValue) error { return v.FromNumberValue(100) })},
		{Name: "host", Type: "STRING", Value: value(func(v *oapiclient.RecordValue) error { return v.FromStringValue("db.internal") })},
		{Name: "ratio", Type: "FLOAT", Value: value(func(v *oapiclient.RecordValue) error { return v.FromNumberValue(0.75) })},
		{Name: "enabled", Type: "BOOLEAN", Value: value(func(v *oapiclient.RecordValue) error { return v.FromBooleanValue(true) })},
		{Name: "empty", Type: "NULL"}, // no value: null
		{Name: "replicas", Type: "[]STRING", Value: value(func(v *oapiclient.RecordValue) error {
			var a, b oapiclient.ScalarValue
			require.NoError(t, a.FromStringValue("db1.internal"))
			require.NoError(t, b.FromStringValue("db2.internal"))
			return v.FromArrayValue(oapiclient.ArrayValue{&a, &b})
		})},
	}
	for _, b := range bodies {
		res, err := api.CreateRecordWithResponse(ctx, "webshop", "prod", "database", nil, b)
		require.NoError(t, err)
		created(b.Name, res.JSON201, res.StatusCode(), res.Body)
	}

	// A typed 400: a value that does not fit its type.
	invalid, err := api.CreateRecordWithResponse(ctx, "webshop", "prod", "database", nil, oapiclient.RecordCreateRequest{
		Name: "bad", Type: "INTEGER", Value: value(func(v *oapiclient.RecordValue) error { return v.FromStringValue("abc") })})
	require.NoError(t, err)
	require.NotNil(t, invalid.JSON400, "bad value: %d %s", invalid.StatusCode(), invalid.Body)
	assert.Equal(t, oapiclient.VALIDATIONERROR, invalid.JSON400.Error.Code)
	assert.Equal(t, "Validation failed", invalid.JSON400.Error.Message)
	assert.NotEmpty(t, invalid.JSON400.Error.Details)

	// The INTEGER records, smallest value first.
	list, err := api.ListRecordsWithResponse(ctx, "webshop", "prod", "database", &oapiclient.ListRecordsParams{
		Type: ptr("INTEGER"), SortBy: ptr(oapiclient.ListRecordsParamsSortByValue)})
	require.NoError(t, err)
	require.NotNil(t, list.JSON200, "list: %d %s", list.StatusCode(), list.Body)
	var names []string
	for _, r := range list.JSON200.Data.Items {
		names = append(names, r.Name)
	}
	assert.Equal(t, []string{"max_connections", "port"}, names)
	assert.Equal(t, 2, list.JSON200.Data.Total)

	// The cluster with all its values, masked and revealed.
	data, err := api.GetClusterDataWithResponse(ctx, "webshop", "prod", "database", nil)
	require.NoError(t, err)
	require.NotNil(t, data.JSON200, "cluster: %d %s", data.StatusCode(), data.Body)
	assert.Len(t, data.JSON200.Data.Data, 9)
	host, err := data.JSON200.Data.Data["host"].AsStringValue()
	require.NoError(t, err)
	assert.Equal(t, oapiclient.StringValue("db.internal"), host)
	replicas, err := data.JSON200.Data.Data["replicas"].AsArrayValue()
	require.NoError(t, err)
	require.Len(t, replicas, 2)
	second, err := replicas[1].AsStringValue()
	require.NoError(t, err)
	assert.Equal(t, oapiclient.StringValue("db2.internal"), second)
	revealed, err := api.GetRecordWithResponse(ctx, "webshop", "prod", "database", "password",
		&oapiclient.GetRecordParams{Reveal: ptr(true)})
	require.NoError(t, err)
	require.NotNil(t, revealed.JSON200, "reveal: %d %s", revealed.StatusCode(), revealed.Body)
	secret, err := revealed.JSON200.Data.Value.AsStringValue()
	require.NoError(t, err)
	assert.Equal(t, oapiclient.StringValue("s3cret"), secret)

	// Update (query form, then body form), a rename-only update, and a
	// cluster rename.
	upd, err := api.UpdateRecordWithBodyWithResponse(ctx, "webshop", "prod", "database", "port",
		&oapiclient.UpdateRecordParams{Value: ptr("6432")}, "", nil)
	require.NoError(t, err)
	require.NotNil(t, upd.JSON200, "update: %d %s", upd.StatusCode(), upd.Body)
	assert.Equal(t, 2, upd.JSON200.Data.Version)
	upd, err = api.UpdateRecordWithResponse(ctx, "webshop", "prod", "database", "port", nil, oapiclient.RecordUpdateRequest{
		Value: value(func(v *oapiclient.RecordValue) error { return v.FromNumberValue(7432) })})
	require.NoError(t, err)
	require.NotNil(t, upd.JSON200, "update: %d %s", upd.StatusCode(), upd.Body)
	n, err = upd.JSON200.Data.Value.AsNumberValue()
	require.NoError(t, err)
	assert.Equal(t, oapiclient.NumberValue(7432), n)
	upd, err = api.UpdateRecordWithResponse(ctx, "webshop", "prod", "database", "empty", nil,
		oapiclient.RecordUpdateRequest{Name: ptr("still-empty")})
	require.NoError(t, err)
	require.NotNil(t, upd.JSON200, "rename-only update: %d %s", upd.StatusCode(), upd.Body)
	assert.Equal(t, "still-empty", upd.JSON200.Data.Name)
	assert.Equal(t, oapiclient.Null, upd.JSON200.Data.Type)
	renamed, err := api.RenameClusterWithBodyWithResponse(ctx, "webshop", "prod", "database",
		&oapiclient.RenameClusterParams{Rename: ptr("primary-db")}, "", nil)
	require.NoError(t, err)
	require.NotNil(t, renamed.JSON200, "rename: %d %s", renamed.StatusCode(), renamed.Body)
	assert.Equal(t, "primary-db", renamed.JSON200.Data.Name)

	// Typed 404 and 409.
	gone, err := api.GetClusterDataWithResponse(ctx, "webshop", "prod", "database", nil)
	require.NoError(t, err)
	require.NotNil(t, gone.JSON404, "old name: %d %s", gone.StatusCode(), gone.Body)
	assert.Equal(t, oapiclient.RESOURCENOTFOUND, gone.JSON404.Error.Code)
	dup, err := api.CreateCollectionWithResponse(ctx, "webshop", oapiclient.NameRequest{Name: "prod"})
	require.NoError(t, err)
	require.NotNil(t, dup.JSON409, "duplicate: %d %s", dup.StatusCode(), dup.Body)
	assert.Equal(t, oapiclient.RESOURCEEXISTS, dup.JSON409.Error.Code)

	// Deletes, deepest first, then the project is gone.
	del, err := api.DeleteRecordWithResponse(ctx, "webshop", "prod", "primary-db", "port")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, del.StatusCode(), "%s", del.Body)
	delK, err := api.DeleteClusterWithResponse(ctx, "webshop", "prod", "primary-db")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, delK.StatusCode(), "%s", delK.Body)
	delC, err := api.DeleteCollectionWithResponse(ctx, "webshop", "prod")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, delC.StatusCode(), "%s", delC.Body)
	delP, err := api.DeleteProjectWithResponse(ctx, "webshop")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, delP.StatusCode(), "%s", delP.Body)
	after, err := api.GetProjectWithResponse(ctx, "webshop")
	require.NoError(t, err)
	require.NotNil(t, after.JSON404, "deleted project: %d %s", after.StatusCode(), after.Body)
}

var _ = ogenclient.NewClient
