package sqlite_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// TestStorageFull: a database that cannot grow (max_page_count, as a full
// disk) fails a write with store.ErrStorageFull, which is
// store.ErrUnavailable, and StorageFull says so while reads still work;
// once there is room, a write succeeds and StorageFull says no more.
func TestStorageFull(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hds.db"))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "p", Collection: "c", Cluster: "k", Record: "r"}
	_, err = s.CreateProject(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateCollection(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateCluster(ctx, p)
	require.NoError(t, err)
	_, err = s.CreateRecord(ctx, p, &store.Record{Type: store.String, Value: json.RawMessage(`"small"`)}, store.Write{})
	require.NoError(t, err)
	assert.False(t, s.StorageFull(), "StorageFull before any failure")

	require.NoError(t, s.Exec(ctx, "PRAGMA max_page_count = 1")) // no page beyond those it has
	big := json.RawMessage(`"` + strings.Repeat("x", 200_000) + `"`)
	var werr error
	for i := range 20 {
		p.Record = fmt.Sprint("big-", i)
		if _, werr = s.CreateRecord(ctx, p, &store.Record{Type: store.String, Value: big}, store.Write{}); werr != nil {
			break
		}
	}
	require.Error(t, werr, "a write to a database that cannot grow")
	assert.ErrorIs(t, werr, store.ErrStorageFull)
	assert.ErrorIs(t, werr, store.ErrUnavailable, "a full disk is a 503")
	assert.True(t, s.StorageFull(), "StorageFull after a write failed for want of room")
	assert.NoError(t, s.Ping(ctx), "the store still answers")
	p.Record = "r"
	_, err = s.FindRecord(ctx, p)
	assert.NoError(t, err, "reads still work")

	require.NoError(t, s.Exec(ctx, "PRAGMA max_page_count = 1073741823"))
	p.Record = "after"
	_, err = s.CreateRecord(ctx, p, &store.Record{Type: store.String, Value: big}, store.Write{})
	require.NoError(t, err, "a write once there is room")
	assert.False(t, s.StorageFull(), "StorageFull once a write succeeded")
}
