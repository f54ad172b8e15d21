package sqlite_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// TestPackedRecords reads records whose names and values hold
// multi-byte characters, commas and digits (what the packed column of a
// list's page is made of) through a list and a cluster read, and finds
// them as a read of one record finds them.
func TestPackedRecords(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "p", Collection: "c", Cluster: "k"}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateCollection(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateCluster(ctx, p)
	require.NoError(t, err)
	values := []struct {
		name string
		typ  store.DataType
		v    string
	}{
		{"1,2,3", store.String, `"a,b,c"`},
		{"ünïcødé ☃", store.String, `"☃ snow, man"`},
		{"12", store.Integer, `12`},
		{"x", store.String, `"k:[1,2,\"3,4\"]"`},
		{"€", store.String, `""`},
		{"null", store.Null, `null`},
	}
	for _, v := range values {
		rp := p
		rp.Record = v.name
		_, err := s.CreateRecord(ctx, rp, &store.Record{Type: v.typ, Value: json.RawMessage(v.v)}, store.Write{})
		require.NoError(t, err, "create %q", v.name)
	}
	items, total, err := s.FindRecords(ctx, p, store.RecordQuery{ListQuery: store.ListQuery{Limit: 100}})
	require.NoError(t, err)
	require.Equal(t, len(values), total)
	k, err := s.FindCluster(ctx, p, true)
	require.NoError(t, err)
	require.Len(t, k.Records, len(values))
	for i, r := range items {
		rp := p
		rp.Record = r.Name
		one, err := s.FindRecord(ctx, rp)
		require.NoError(t, err, "FindRecord %q", r.Name)
		for _, got := range []*store.Record{r, k.Records[i]} {
			assert.Equal(t, one.ID, got.ID)
			assert.Equal(t, one.Name, got.Name)
			assert.Equal(t, one.Type, got.Type)
			assert.JSONEq(t, string(one.Value), string(got.Value))
			assert.Equal(t, one.Version, got.Version)
			assert.True(t, one.CreatedAt.Equal(got.CreatedAt), "created_at of %q", r.Name)
			assert.True(t, one.UpdatedAt.Equal(got.UpdatedAt), "updated_at of %q", r.Name)
			assert.Equal(t, "alice", got.UpdatedBy)
		}
	}
}
