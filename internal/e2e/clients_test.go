package e2e_test

// The README walk-through through Go clients generated from the served
// OpenAPI document (clients: oapi-codegen and ogen, pinned by the tool
// directives of this module's go.mod; clients/drift_test.go keeps them
// generated from today's document). Each runs against hds.New on
// httptest: log in, the four levels in both forms, records of several
// types in both forms (a NULL without a value and a rename-only update
// among them, which an untyped RecordValue broke), a filtered list,
// reveal, update, rename, typed errors and deletes. Every exchange is
// also validated against the document (openapi_test.go).

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/e2e/clients/oapiclient"
	"github.com/hds-go/hds/internal/e2e/clients/ogenclient"
)

// generatedClientServer starts hds.New (memory store, alice and bob, a
// credential key) on httptest behind a handler that validates every
// exchange against the served document.
func generatedClientServer(t *testing.T, opts ...hds.Option) (*client, *httptest.Server) {
	t.Helper()
	c := newServer(t, storeKinds[0], append([]hds.Option{hds.WithCredentialKey(testKey)}, opts...)...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readBody(r)
		rec := httptest.NewRecorder()
		c.h.ServeHTTP(rec, r)
		res := rec.Result()
		assert.Empty(t, c.api.check("", r, body, res, rec.Body.Bytes()), "%s %s: %d: breaks the OpenAPI document", r.Method, r.URL, res.StatusCode)
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
	port, err := api.CreateRecordAtWithResponse(ctx, "webshop", "prod", "database", "port",
		&oapiclient.CreateRecordAtParams{Type: ptr("INTEGER"), Value: ptr("5432")})
	require.NoError(t, err)
	rec := created("port", port.JSON201, port.StatusCode(), port.Body)
	assert.Equal(t, oapiclient.Integer, rec.Type)
	n, err := rec.Value.AsRecordValue1() // the integer variant: int64
	require.NoError(t, err)
	assert.Equal(t, int64(5432), n)
	pw, err := api.CreateRecordAtWithResponse(ctx, "webshop", "prod", "database", "password",
		&oapiclient.CreateRecordAtParams{Type: ptr("CREDENTIAL"), Value: ptr("s3cret")})
	require.NoError(t, err)
	rec = created("password", pw.JSON201, pw.StatusCode(), pw.Body)
	masked, err := rec.Value.AsStringValue()
	require.NoError(t, err)
	assert.Equal(t, oapiclient.StringValue("********"), masked)
	nothing, err := api.CreateRecordAtWithResponse(ctx, "webshop", "prod", "database", "nothing",
		&oapiclient.CreateRecordAtParams{Type: ptr("NULL")})
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
		{Name: "max_connections", Type: "INT", Value: value(func(v *oapiclient.RecordValue) error { return v.FromRecordValue1(100) })},
		{Name: "host", Type: "STRING", Value: value(func(v *oapiclient.RecordValue) error { return v.FromStringValue("db.internal") })},
		{Name: "ratio", Type: "FLOAT", Value: value(func(v *oapiclient.RecordValue) error { return v.FromFloatValue(0.75) })},
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
	assert.Equal(t, ptr(2), list.JSON200.Data.Total)

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
		Value: value(func(v *oapiclient.RecordValue) error { return v.FromRecordValue1(7432) })})
	require.NoError(t, err)
	require.NotNil(t, upd.JSON200, "update: %d %s", upd.StatusCode(), upd.Body)
	n, err = upd.JSON200.Data.Value.AsRecordValue1()
	require.NoError(t, err)
	assert.Equal(t, int64(7432), n)
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
	del, err := api.DeleteRecordWithResponse(ctx, "webshop", "prod", "primary-db", "port", nil)
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

// bearer is the ogen client's security source: the token of the last
// login (or an API token). The document has one scheme for both kinds of
// token, so this is all a caller provides.
type bearer struct{ token string }

func (b *bearer) BearerAuth(context.Context, ogenclient.OperationName) (ogenclient.BearerAuth, error) {
	return ogenclient.BearerAuth{Token: b.token}, nil
}

func TestGeneratedClientOgen(t *testing.T) {
	_, srv := generatedClientServer(t)
	ctx := context.Background()
	auth := &bearer{}
	api, err := ogenclient.NewClient(srv.URL, auth)
	require.NoError(t, err)

	health, err := api.GetHealth(ctx)
	require.NoError(t, err)
	require.IsType(t, &ogenclient.HealthResponseHeaders{}, health)
	assert.Equal(t, ogenclient.HealthStatusOk, health.(*ogenclient.HealthResponseHeaders).Response.Status)

	// Log in; a wrong password is a typed 401.
	res, err := api.Login(ctx, &ogenclient.LoginRequest{Username: "alice", Password: "wrong"})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.UnauthorizedResponseHeaders{}, res)
	unauthorized := res.(*ogenclient.UnauthorizedResponseHeaders).Response.Error
	assert.Equal(t, ogenclient.ErrorCodeAUTHENTICATIONFAILED, unauthorized.Code)
	assert.Equal(t, "Invalid username or password", unauthorized.Message)
	res, err = api.Login(ctx, &ogenclient.LoginRequest{Username: "alice", Password: "alice-password"})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.TokenResponseHeaders{}, res)
	auth.token = res.(*ogenclient.TokenResponseHeaders).Response.Data.Token

	// The four levels: a project and a cluster in the path form (no
	// body), a collection in the body form.
	p, err := api.CreateProjectAt(ctx, ogenclient.OptPathNameRequest{}, ogenclient.CreateProjectAtParams{Project: "webshop"})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.ProjectResponseHeaders{}, p)
	assert.Equal(t, ogenclient.Name("webshop"), p.(*ogenclient.ProjectResponseHeaders).Response.Data.Name)
	col, err := api.CreateCollection(ctx, &ogenclient.NameRequest{Name: "prod"}, ogenclient.CreateCollectionParams{Project: "webshop"})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.CollectionResponseHeaders{}, col)
	k, err := api.CreateClusterAt(ctx, ogenclient.OptPathNameRequest{},
		ogenclient.CreateClusterAtParams{Project: "webshop", Collection: "prod", Cluster: "database"})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.ClusterResponseHeaders{}, k)

	// Records in the query-string form...
	at := func(name string) ogenclient.CreateRecordAtParams {
		return ogenclient.CreateRecordAtParams{Project: "webshop", Collection: "prod", Cluster: "database", Record: ogenclient.Name(name)}
	}
	record := func(what string, res any) ogenclient.RecordItem {
		t.Helper()
		require.IsType(t, &ogenclient.RecordResponseHeaders{}, res, what)
		return res.(*ogenclient.RecordResponseHeaders).Response.Data
	}
	params := at("port")
	params.Type, params.Value = ogenclient.NewOptTypeName("INTEGER"), ogenclient.NewOptString("5432")
	created, err := api.CreateRecordAt(ctx, params)
	require.NoError(t, err)
	rec := record("port", created)
	assert.Equal(t, ogenclient.RecordType("INTEGER"), rec.Type)
	require.True(t, rec.Value.IsInt64())
	assert.Equal(t, int64(5432), rec.Value.Int64)
	params = at("password")
	params.Type, params.Value = ogenclient.NewOptTypeName("CREDENTIAL"), ogenclient.NewOptString("s3cret")
	created, err = api.CreateRecordAt(ctx, params)
	require.NoError(t, err)
	assert.Equal(t, ogenclient.StringValue("********"), record("password", created).Value.StringValue)
	params = at("nothing")
	params.Type = ogenclient.NewOptTypeName("NULL")
	created, err = api.CreateRecordAt(ctx, params)
	require.NoError(t, err)
	assert.True(t, record("nothing", created).Value.IsNullValue())

	// ...and in the body form, values typed as the document's unions.
	kp := ogenclient.CreateRecordParams{Project: "webshop", Collection: "prod", Cluster: "database"}
	bodies := []ogenclient.RecordCreateRequest{
		{Name: "max_connections", Type: "INT", Value: ogenclient.NewOptRecordValue(ogenclient.NewInt64RecordValue(100))},
		{Name: "host", Type: "STRING", Value: ogenclient.NewOptRecordValue(ogenclient.NewStringValueRecordValue("db.internal"))},
		{Name: "ratio", Type: "FLOAT", Value: ogenclient.NewOptRecordValue(ogenclient.NewFloatValueRecordValue(0.75))},
		{Name: "enabled", Type: "BOOLEAN", Value: ogenclient.NewOptRecordValue(ogenclient.NewBooleanValueRecordValue(true))},
		{Name: "empty", Type: "NULL"}, // no value: null
		{Name: "replicas", Type: "[]STRING", Value: ogenclient.NewOptRecordValue(ogenclient.NewArrayValueRecordValue(ogenclient.ArrayValue{
			ogenclient.NewStringValueScalarValue("db1.internal"), ogenclient.NewStringValueScalarValue("db2.internal")}))},
	}
	for _, b := range bodies {
		created, err := api.CreateRecord(ctx, &b, kp)
		require.NoError(t, err)
		record(string(b.Name), created)
	}

	// A typed 400: a value that does not fit its type.
	invalid, err := api.CreateRecord(ctx, &ogenclient.RecordCreateRequest{Name: "bad", Type: "INTEGER",
		Value: ogenclient.NewOptRecordValue(ogenclient.NewStringValueRecordValue("abc"))}, kp)
	require.NoError(t, err)
	require.IsType(t, &ogenclient.BadRequestResponseHeaders{}, invalid)
	badRequest := invalid.(*ogenclient.BadRequestResponseHeaders).Response.Error
	assert.Equal(t, ogenclient.ErrorCodeVALIDATIONERROR, badRequest.Code)
	assert.Equal(t, "Validation failed", badRequest.Message)
	assert.NotEmpty(t, badRequest.Details)

	// The INTEGER records, smallest value first.
	list, err := api.ListRecords(ctx, ogenclient.ListRecordsParams{Project: "webshop", Collection: "prod", Cluster: "database",
		Type: ogenclient.NewOptTypeName("INTEGER"), SortBy: ogenclient.NewOptRecordSortByQuery(ogenclient.RecordSortByQueryValue)})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.RecordListResponseHeaders{}, list)
	var names []string
	for _, r := range list.(*ogenclient.RecordListResponseHeaders).Response.Data.Items {
		names = append(names, string(r.Name))
	}
	assert.Equal(t, []string{"max_connections", "port"}, names)

	// The cluster with all its values, masked and revealed.
	data, err := api.GetClusterData(ctx, ogenclient.GetClusterDataParams{Project: "webshop", Collection: "prod", Cluster: "database"})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.ClusterDataEnvelopeHeaders{}, data)
	values := data.(*ogenclient.ClusterDataEnvelopeHeaders).Response.Data.Data
	assert.Len(t, values, 9)
	assert.Equal(t, ogenclient.StringValue("db.internal"), values["host"].StringValue)
	assert.Equal(t, ogenclient.StringValue("********"), values["password"].StringValue)
	assert.True(t, values["empty"].IsNullValue())
	require.True(t, values["replicas"].IsArrayValue())
	assert.Equal(t, ogenclient.StringValue("db2.internal"), values["replicas"].ArrayValue[1].StringValue)
	revealed, err := api.GetRecord(ctx, ogenclient.GetRecordParams{Project: "webshop", Collection: "prod", Cluster: "database",
		Record: "password", Reveal: ogenclient.NewOptBool(true)})
	require.NoError(t, err)
	assert.Equal(t, ogenclient.StringValue("s3cret"), record("reveal", revealed).Value.StringValue)

	// Update (query form, then body form), a rename-only update, and a
	// cluster rename.
	up := func(name string) ogenclient.UpdateRecordParams {
		return ogenclient.UpdateRecordParams{Project: "webshop", Collection: "prod", Cluster: "database", Record: ogenclient.Name(name)}
	}
	upParams := up("port")
	upParams.Value = ogenclient.NewOptString("6432")
	updated, err := api.UpdateRecord(ctx, ogenclient.OptRecordUpdateRequest{}, upParams)
	require.NoError(t, err)
	assert.Equal(t, 2, record("update", updated).Version)
	updated, err = api.UpdateRecord(ctx, ogenclient.NewOptRecordUpdateRequest(ogenclient.RecordUpdateRequest{
		Value: ogenclient.NewOptRecordValue(ogenclient.NewInt64RecordValue(7432))}), up("port"))
	require.NoError(t, err)
	assert.Equal(t, int64(7432), record("update", updated).Value.Int64)
	updated, err = api.UpdateRecord(ctx, ogenclient.NewOptRecordUpdateRequest(ogenclient.RecordUpdateRequest{
		Name: ogenclient.NewOptName("still-empty")}), up("empty"))
	require.NoError(t, err)
	rec = record("rename-only update", updated)
	assert.Equal(t, ogenclient.Name("still-empty"), rec.Name)
	assert.True(t, rec.Value.IsNullValue())
	renamed, err := api.RenameCluster(ctx, ogenclient.OptNameRequest{}, ogenclient.RenameClusterParams{
		Project: "webshop", Collection: "prod", Cluster: "database", Rename: ogenclient.NewOptName("primary-db")})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.ClusterResponseHeaders{}, renamed)

	// Typed 404 and 409.
	gone, err := api.GetClusterData(ctx, ogenclient.GetClusterDataParams{Project: "webshop", Collection: "prod", Cluster: "database"})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.NotFoundResponseHeaders{}, gone)
	assert.Equal(t, ogenclient.ErrorCodeRESOURCENOTFOUND, gone.(*ogenclient.NotFoundResponseHeaders).Response.Error.Code)
	dup, err := api.CreateCollection(ctx, &ogenclient.NameRequest{Name: "prod"}, ogenclient.CreateCollectionParams{Project: "webshop"})
	require.NoError(t, err)
	require.IsType(t, &ogenclient.ConflictResponseHeaders{}, dup)
	assert.Equal(t, ogenclient.ErrorCodeRESOURCEEXISTS, dup.(*ogenclient.ConflictResponseHeaders).Response.Error.Code)

	// Deletes, deepest first, then the project is gone.
	del, err := api.DeleteRecord(ctx, ogenclient.DeleteRecordParams{Project: "webshop", Collection: "prod", Cluster: "primary-db", Record: "port"})
	require.NoError(t, err)
	assert.IsType(t, &ogenclient.NoContentResponse{}, del)
	delK, err := api.DeleteCluster(ctx, ogenclient.DeleteClusterParams{Project: "webshop", Collection: "prod", Cluster: "primary-db"})
	require.NoError(t, err)
	assert.IsType(t, &ogenclient.NoContentResponse{}, delK)
	delC, err := api.DeleteCollection(ctx, ogenclient.DeleteCollectionParams{Project: "webshop", Collection: "prod"})
	require.NoError(t, err)
	assert.IsType(t, &ogenclient.NoContentResponse{}, delC)
	delP, err := api.DeleteProject(ctx, ogenclient.DeleteProjectParams{Project: "webshop"})
	require.NoError(t, err)
	assert.IsType(t, &ogenclient.NoContentResponse{}, delP)
	after, err := api.GetProject(ctx, ogenclient.GetProjectParams{Project: "webshop"})
	require.NoError(t, err)
	assert.IsType(t, &ogenclient.NotFoundResponseHeaders{}, after)
}

// TestGeneratedClientsDefaultResponse: an error without a response of its
// own (here 413) reaches each client through the default response, with
// the error envelope typed.
func TestGeneratedClientsDefaultResponse(t *testing.T) {
	c, srv := generatedClientServer(t, hds.WithMaxBodyBytes(64))
	token := c.token("alice")
	ctx := context.Background()
	long := strings.Repeat("x", 100)

	oapi, err := oapiclient.NewClientWithResponses(srv.URL, oapiclient.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	require.NoError(t, err)
	res, err := oapi.CreateProjectWithResponse(ctx, oapiclient.NameRequest{Name: long})
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode())
	require.NotNil(t, res.JSONDefault, "%s", res.Body)
	assert.Equal(t, oapiclient.INVALIDREQUEST, res.JSONDefault.Error.Code)

	og, err := ogenclient.NewClient(srv.URL, &bearer{token: token})
	require.NoError(t, err)
	_, err = og.CreateProject(ctx, &ogenclient.NameRequest{Name: ogenclient.Name(long)})
	var other *ogenclient.OtherErrorResponseStatusCodeWithHeaders
	require.ErrorAs(t, err, &other)
	assert.Equal(t, http.StatusRequestEntityTooLarge, other.StatusCode)
	assert.Equal(t, ogenclient.ErrorCodeINVALIDREQUEST, other.Response.Error.Code)
}

// bigIntegers are INTEGER values a float64 (or a float32) cannot hold:
// 2^53+1, its decimal spelling, and the extremes of int64.
var bigIntegers = []int64{1<<53 + 1, 9007199254740993, 123456789, -(1<<53 + 1), 1<<63 - 1, -1 << 63}

// TestGeneratedClientsIntegers: INTEGER values round-trip exactly through
// both generated clients (issue 25): created in the body form and in the
// path form, read back one by one and in the cluster's data, and a FLOAT
// reads back as a float64.
func TestGeneratedClientsIntegers(t *testing.T) {
	c, srv := generatedClientServer(t)
	token := c.token("alice")
	ctx := context.Background()
	c.tree(token, "nums", "c", "k")

	t.Run("oapi-codegen", func(t *testing.T) {
		api, err := oapiclient.NewClientWithResponses(srv.URL, oapiclient.WithRequestEditorFn(
			func(_ context.Context, r *http.Request) error {
				r.Header.Set("Authorization", "Bearer "+token)
				return nil
			}))
		require.NoError(t, err)
		for i, want := range bigIntegers {
			var v oapiclient.RecordValue
			require.NoError(t, v.FromRecordValue1(want))
			name := fmt.Sprintf("oapi-body-%d", i)
			res, err := api.CreateRecordWithResponse(ctx, "nums", "c", "k", nil, oapiclient.RecordCreateRequest{Name: name, Type: "INTEGER", Value: &v})
			require.NoError(t, err)
			require.NotNil(t, res.JSON201, "create %d: %d %s", want, res.StatusCode(), res.Body)
			got, err := res.JSON201.Data.Value.AsRecordValue1()
			require.NoError(t, err)
			assert.Equal(t, want, got, "create %d: the value in the answer", want)

			at := fmt.Sprintf("oapi-path-%d", i)
			resAt, err := api.CreateRecordAtWithResponse(ctx, "nums", "c", "k", at,
				&oapiclient.CreateRecordAtParams{Type: ptr("INTEGER"), Value: ptr(strconv.FormatInt(want, 10))})
			require.NoError(t, err)
			require.NotNil(t, resAt.JSON201, "create %d in the path form: %d %s", want, resAt.StatusCode(), resAt.Body)

			for _, n := range []string{name, at} {
				read, err := api.GetRecordWithResponse(ctx, "nums", "c", "k", n, nil)
				require.NoError(t, err)
				require.NotNil(t, read.JSON200, "get %s: %d %s", n, read.StatusCode(), read.Body)
				got, err = read.JSON200.Data.Value.AsRecordValue1()
				require.NoError(t, err)
				assert.Equal(t, want, got, "get %s", n)
			}
		}
		var f oapiclient.RecordValue
		require.NoError(t, f.FromFloatValue(0.1))
		res, err := api.CreateRecordWithResponse(ctx, "nums", "c", "k", nil, oapiclient.RecordCreateRequest{Name: "oapi-float", Type: "FLOAT", Value: &f})
		require.NoError(t, err)
		require.NotNil(t, res.JSON201, "create a FLOAT: %d %s", res.StatusCode(), res.Body)
		got, err := res.JSON201.Data.Value.AsFloatValue()
		require.NoError(t, err)
		assert.Equal(t, 0.1, got, "a FLOAT reads back as a float64")

		data, err := api.GetClusterDataWithResponse(ctx, "nums", "c", "k", nil)
		require.NoError(t, err)
		require.NotNil(t, data.JSON200, "cluster data: %d %s", data.StatusCode(), data.Body)
		for i, want := range bigIntegers {
			got, err := data.JSON200.Data.Data[fmt.Sprintf("oapi-body-%d", i)].AsRecordValue1()
			require.NoError(t, err)
			assert.Equal(t, want, got, "cluster data: %d", want)
		}
	})

	t.Run("ogen", func(t *testing.T) {
		api, err := ogenclient.NewClient(srv.URL, &bearer{token: token})
		require.NoError(t, err)
		kp := ogenclient.CreateRecordParams{Project: "nums", Collection: "c", Cluster: "k"}
		for i, want := range bigIntegers {
			name := ogenclient.Name(fmt.Sprintf("ogen-body-%d", i))
			created, err := api.CreateRecord(ctx, &ogenclient.RecordCreateRequest{Name: name, Type: "INTEGER",
				Value: ogenclient.NewOptRecordValue(ogenclient.NewInt64RecordValue(want))}, kp)
			require.NoError(t, err)
			require.IsType(t, &ogenclient.RecordResponseHeaders{}, created, "create %d", want)
			v := created.(*ogenclient.RecordResponseHeaders).Response.Data.Value
			require.True(t, v.IsInt64(), "create %d: the answer's value is the integer variant (%v)", want, v.Type)
			assert.Equal(t, want, v.Int64, "create %d: the value in the answer", want)

			at := ogenclient.Name(fmt.Sprintf("ogen-path-%d", i))
			createdAt, err := api.CreateRecordAt(ctx, ogenclient.CreateRecordAtParams{Project: "nums", Collection: "c", Cluster: "k", Record: at,
				Type: ogenclient.NewOptTypeName("INTEGER"), Value: ogenclient.NewOptString(strconv.FormatInt(want, 10))})
			require.NoError(t, err)
			require.IsType(t, &ogenclient.RecordResponseHeaders{}, createdAt, "create %d in the path form", want)

			for _, n := range []ogenclient.Name{name, at} {
				read, err := api.GetRecord(ctx, ogenclient.GetRecordParams{Project: "nums", Collection: "c", Cluster: "k", Record: n})
				require.NoError(t, err)
				require.IsType(t, &ogenclient.RecordResponseHeaders{}, read, "get %s", n)
				v := read.(*ogenclient.RecordResponseHeaders).Response.Data.Value
				require.True(t, v.IsInt64(), "get %s: the integer variant (%v)", n, v.Type)
				assert.Equal(t, want, v.Int64, "get %s", n)
			}
		}
		created, err := api.CreateRecord(ctx, &ogenclient.RecordCreateRequest{Name: "ogen-float", Type: "FLOAT",
			Value: ogenclient.NewOptRecordValue(ogenclient.NewFloatValueRecordValue(0.1))}, kp)
		require.NoError(t, err)
		require.IsType(t, &ogenclient.RecordResponseHeaders{}, created, "create a FLOAT")
		v := created.(*ogenclient.RecordResponseHeaders).Response.Data.Value
		require.True(t, v.IsFloatValue(), "a FLOAT with a fraction reads back as the number variant (%v)", v.Type)
		assert.Equal(t, ogenclient.FloatValue(0.1), v.FloatValue)

		data, err := api.GetClusterData(ctx, ogenclient.GetClusterDataParams{Project: "nums", Collection: "c", Cluster: "k"})
		require.NoError(t, err)
		require.IsType(t, &ogenclient.ClusterDataEnvelopeHeaders{}, data)
		values := data.(*ogenclient.ClusterDataEnvelopeHeaders).Response.Data.Data
		for i, want := range bigIntegers {
			v := values[fmt.Sprintf("ogen-body-%d", i)]
			assert.Equal(t, want, v.Int64, "cluster data: %d (%v)", want, v.Type)
		}
	})
}
