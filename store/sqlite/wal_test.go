package sqlite_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// TestWALAfterBigWrite checks that the WAL does not stay the size of
// the biggest write: after a batch of 6 MB of values (about 14 MB in the
// WAL, with their table copies; 25 MB for 2 MB before migration 0007 cut
// the keys in the indexes) and the next write, the WAL file is back
// within 4 MiB (it stayed 25 MB beside the database until the server
// stopped).
func TestWALAfterBigWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hds.db")
	s := openAt(t, path)
	s.SetQuotas(store.NoQuotas)
	ctx := context.Background()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "u"}, Project: "p", Collection: "c", Cluster: "k"}
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	big := json.RawMessage(strconv.Quote(strings.Repeat("x", 100_000)))
	var ops []store.Op
	for i := range 60 {
		ops = append(ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: "k", Record: "r" + strconv.Itoa(i),
			New: &store.Record{Type: store.String, Value: big}})
	}
	_, err = s.Apply(ctx, p, store.Batch{Ops: ops, CreateParents: true})
	require.NoError(t, err, "the big batch")
	walSize := func() int64 {
		fi, err := os.Stat(path + "-wal")
		require.NoError(t, err, "the WAL")
		return fi.Size()
	}
	assert.Greater(t, walSize(), int64(8<<20), "the big batch went through the WAL")
	p.Record = "small"
	_, err = s.CreateRecord(ctx, p, &store.Record{Type: store.Integer, Value: json.RawMessage("1")}, store.Write{})
	require.NoError(t, err, "a small write after it")
	assert.LessOrEqual(t, walSize(), int64(4<<20+1<<20), "the WAL once it started over")
}
