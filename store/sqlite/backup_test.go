package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

// putString writes the STRING record p.Record = v, creating it when
// missing.
func putString(t testing.TB, s *sqlite.Store, p store.Path, v string) {
	t.Helper()
	_, err := s.Apply(context.Background(), p, store.Batch{CreateParents: true, Ops: []store.Op{
		upsert(p.Collection, p.Cluster, p.Record, json.RawMessage(fmt.Sprintf("%q", v)))}})
	require.NoError(t, err)
}

// upsert is the op that sets the STRING record collection/cluster/record
// to v.
func upsert(collection, cluster, record string, v json.RawMessage) store.Op {
	return store.Op{Kind: store.OpUpsert, Collection: collection, Cluster: cluster, Record: record,
		New: &store.Record{Type: store.String, Value: v},
		Update: func(r *store.Record) error {
			r.Type, r.Value = store.String, v
			return nil
		}}
}

// readString reads the value of the record at p from s.
func readString(t testing.TB, s *sqlite.Store, p store.Path) string {
	t.Helper()
	r, err := s.FindRecord(context.Background(), p)
	require.NoError(t, err)
	var v string
	require.NoError(t, json.Unmarshal(r.Value, &v))
	return v
}

// dirNames lists the names in dir, sorted.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func backupPath() store.Path {
	return store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "alice"}, Project: "p", Collection: "c", Cluster: "k", Record: "r"}
}

// TestBackup: a backup holds the data as of its call, is 0600, never
// overwrites a file (store.ErrAlreadyExists, the file unchanged), and
// leaves no temporary file beside it.
func TestBackup(t *testing.T) {
	ctx := t.Context()
	s := open(t)
	p := backupPath()
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	putString(t, s, p, "before")

	dir := t.TempDir()
	out := filepath.Join(dir, "copy.db")
	require.NoError(t, s.Backup(ctx, out))
	putString(t, s, p, "after")

	info, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the backup's mode")
	assert.Equal(t, []string{"copy.db"}, dirNames(t, dir), "nothing but the backup in its directory")
	require.NoError(t, sqlite.Verify(ctx, out), "a backup is restorable")

	copyStore := openAt(t, filepath.Join(dir, "copy.db"))
	assert.Equal(t, "before", readString(t, copyStore, p), "the backup holds the value as of its call")
	assert.Equal(t, "after", readString(t, s, p), "the store goes on")
	require.NoError(t, copyStore.Close())

	before, err := os.ReadFile(out)
	require.NoError(t, err)
	err = s.Backup(ctx, out)
	require.Error(t, err, "a backup onto an existing file")
	assert.ErrorIs(t, err, store.ErrAlreadyExists)
	assert.ErrorIs(t, err, fs.ErrExist)
	after, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the existing file is left as it was")

	err = s.Backup(ctx, filepath.Join(dir, "missing", "x.db"))
	assert.Error(t, err, "a backup into a directory that does not exist")
	assert.Equal(t, []string{"copy.db"}, dirNames(t, dir), "a failed backup leaves nothing")
}

// TestBackupKeepsWritersGoing: while a backup runs, writes go on and
// commit; the backup is one consistent moment (every record of a write
// of several records, or none).
func TestBackupKeepsWritersGoing(t *testing.T) {
	ctx := t.Context()
	s := open(t)
	p := backupPath()
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	// Enough data that the copy takes a while.
	_, err = s.Apply(ctx, p, store.Batch{Source: importSource{5000}, OmitRecords: true, CreateParents: true})
	require.NoError(t, err)

	var writes atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := json.RawMessage(fmt.Sprintf(`"%d"`, i))
			// a and b always hold the same value: one write of both.
			_, err := s.Apply(ctx, p, store.Batch{CreateParents: true, Ops: []store.Op{
				upsert("pair", "k", "a", v),
				upsert("pair", "k", "b", v),
			}})
			if err != nil {
				t.Error(err)
				return
			}
			writes.Add(1)
		}
	}()
	// Let some writes happen first.
	deadline := time.Now().Add(time.Minute)
	for writes.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	out := filepath.Join(t.TempDir(), "b.db")
	require.NoError(t, s.Backup(ctx, out))
	during := writes.Load()
	// And after it: the writer was never stopped.
	for writes.Load() < during+5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	assert.GreaterOrEqual(t, writes.Load(), during+5, "writes go on after a backup")

	c := openAt(t, out)
	pa, pb := p, p
	pa.Collection, pa.Record = "pair", "a"
	pb.Collection, pb.Record = "pair", "b"
	assert.Equal(t, readString(t, c, pa), readString(t, c, pb), "one write of two records is in the backup whole")
}

// corrupt returns a copy of the backup at src, changed by change, in dir.
func corrupt(t *testing.T, src, name string, change func(data []byte) []byte) string {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(out, change(data), 0o600))
	return out
}

// TestVerify: Verify refuses what cannot be restored, each with
// ErrNotBackup and a message naming why: a file that is not SQLite, an
// SQLite database of another application, a truncated copy, a newer
// schema.
func TestVerify(t *testing.T) {
	ctx := t.Context()
	s := open(t)
	p := backupPath()
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	for i := range 200 {
		p.Record = fmt.Sprint("r", i)
		putString(t, s, p, strings.Repeat("v", 500))
	}
	good := filepath.Join(t.TempDir(), "good.db")
	require.NoError(t, s.Backup(ctx, good))
	require.NoError(t, sqlite.Verify(ctx, good))

	notSQLite := corrupt(t, good, "text.db", func([]byte) []byte { return []byte("hello, not a database\n") })
	truncated := corrupt(t, good, "truncated.db", func(d []byte) []byte { return d[:len(d)/2] })
	newer := filepath.Join(t.TempDir(), "newer.db")
	require.NoError(t, s.Backup(ctx, newer))
	{
		ns, err := sqlite.Open(ctx, newer)
		require.NoError(t, err)
		require.NoError(t, ns.Exec(ctx, `INSERT INTO hds_schema_migrations (name, applied_at) VALUES ('migrations/9999_future.sql', 0)`))
		require.NoError(t, ns.Close())
	}
	foreign := filepath.Join(t.TempDir(), "foreign.db")
	{
		db, err := sql.Open("sqlite", foreign)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `CREATE TABLE notes (body TEXT)`)
		require.NoError(t, err)
		require.NoError(t, db.Close())
	}

	for _, c := range []struct {
		name, path, says string
	}{
		{"not SQLite", notSQLite, "not an SQLite database"},
		{"truncated", truncated, "integrity check"},
		{"newer schema", newer, "newer than this program's"},
		{"another application's", foreign, "not an hds database"},
	} {
		err := sqlite.Verify(ctx, c.path)
		if assert.Error(t, err, c.name) {
			assert.ErrorIs(t, err, sqlite.ErrNotBackup, c.name)
			assert.Contains(t, err.Error(), c.says, c.name)
		}
	}
	_, err = os.Stat(good + "-wal")
	assert.True(t, errors.Is(err, fs.ErrNotExist), "Verify makes no companion file")
}

// TestRestore: a restore puts the backup in place, keeps the old file
// and its -wal and -shm beside it, and a store opened on it then serves
// exactly the backup's data; a bad backup changes nothing.
func TestRestore(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "hds.db")
	s := openAt(t, path)
	p := backupPath()
	_, err := s.CreateProject(ctx, p)
	require.NoError(t, err)
	putString(t, s, p, "backed up")
	backup := filepath.Join(t.TempDir(), "b.db")
	require.NoError(t, s.Backup(ctx, backup))
	putString(t, s, p, "later")
	p2 := p
	p2.Record = "only-later"
	putString(t, s, p2, "x")

	// A bad backup changes nothing, open store or not.
	truncated := corrupt(t, backup, "t.db", func(d []byte) []byte { return d[:len(d)*2/3] })
	namesBefore := dirNames(t, dir)
	_, err = sqlite.Restore(ctx, truncated, path, time.Now())
	require.ErrorIs(t, err, sqlite.ErrNotBackup)
	assert.Equal(t, namesBefore, dirNames(t, dir), "a refused restore changes nothing")
	assert.Equal(t, "later", readString(t, s, p))

	// The old file is copied aside with its companions as they are: a
	// store that was killed, its WAL not checkpointed.
	require.NoError(t, s.Close())
	walData := []byte("old wal bytes")
	require.NoError(t, os.WriteFile(path+"-wal", walData, 0o600))
	require.NoError(t, os.WriteFile(path+"-shm", []byte("old shm"), 0o600))
	oldData, err := os.ReadFile(path)
	require.NoError(t, err)

	now := time.Date(2026, 11, 28, 12, 30, 5, 0, time.UTC)
	kept, err := sqlite.Restore(ctx, backup, path, now)
	require.NoError(t, err)
	assert.Equal(t, path+".before-restore-20261128T123005Z", kept)
	keptData, err := os.ReadFile(kept)
	require.NoError(t, err)
	assert.Equal(t, oldData, keptData, "the old file is kept as it was")
	keptWAL, err := os.ReadFile(kept + "-wal")
	require.NoError(t, err)
	assert.Equal(t, walData, keptWAL, "the old -wal is kept")
	_, err = os.Stat(kept + "-shm")
	assert.NoError(t, err, "the old -shm is kept")
	for _, suffix := range []string{"-wal", "-shm"} {
		_, err := os.Stat(path + suffix)
		assert.ErrorIs(t, err, fs.ErrNotExist, "no old companion %s beside the restored file", suffix)
	}
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	r := openAt(t, path)
	assert.Equal(t, "backed up", readString(t, r, p), "the restored file serves the backup's data")
	_, err = r.FindRecord(ctx, p2)
	assert.ErrorIs(t, err, store.ErrNotFound, "what was written after the backup is gone")

	// A restore where there is no database yet keeps nothing.
	fresh := filepath.Join(t.TempDir(), "sub", "hds.db")
	kept, err = sqlite.Restore(ctx, backup, fresh, now)
	require.NoError(t, err)
	assert.Empty(t, kept)
	assert.Equal(t, []string{"hds.db"}, dirNames(t, filepath.Dir(fresh)))
}

// BenchmarkBackup100k backs up a database of 100,000 records while a
// writer writes one record after another, and reports the time the
// backup took (backup-s), the size of the copy (backup-MB), and the
// longest write the writer saw while it ran (max-write-ms), beside the
// longest it saw in as long a time just before, without a backup
// (max-write-idle-ms):
//
//	go test -run '^$' -bench BenchmarkBackup100k -benchtime 1x -count 3 -v ./store/sqlite/
func BenchmarkBackup100k(b *testing.B) {
	s := open(b, sqlite.WithTimeout(10*time.Minute))
	s.SetQuotas(store.NoQuotas)
	ctx := context.Background()
	p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: "bench"}, Project: "p"}
	if _, err := s.CreateProject(ctx, p); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, store.Batch{Source: importSource{100_000}, OmitRecords: true, CreateParents: true}); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	// longest runs the writer until stop is closed and returns the
	// longest write it saw and when, after it started.
	longest := func(stop <-chan struct{}) (worst, at time.Duration) {
		t0 := time.Now()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return worst, at
			default:
			}
			start := time.Now()
			_, err := s.Apply(ctx, p, store.Batch{CreateParents: true, Ops: []store.Op{
				upsert("writes", "k", fmt.Sprint("w", i%100), json.RawMessage(fmt.Sprintf(`"%d"`, i)))}})
			if err != nil {
				b.Error(err)
				return worst, at
			}
			if d := time.Since(start); d > worst {
				worst, at = d, start.Sub(t0)
			}
		}
	}
	// The writer's first writes (statements prepared, the import's WAL
	// checkpointed) are not what a backup costs.
	warm := make(chan struct{})
	time.AfterFunc(2*time.Second, func() { close(warm) })
	longest(warm)
	type result struct{ worst, at time.Duration }
	dir := b.TempDir()
	var took, idle, busy, busyAt time.Duration
	var size int64
	for n := range b.N {
		out := filepath.Join(dir, fmt.Sprint("b", n, ".db"))
		stop := make(chan struct{})
		got := make(chan result)
		go func() {
			w, at := longest(stop)
			got <- result{w, at}
		}()
		start := time.Now()
		b.StartTimer()
		err := s.Backup(ctx, out)
		b.StopTimer()
		took = time.Since(start)
		close(stop)
		r := <-got
		if r.worst > busy {
			busy, busyAt = r.worst, r.at
		}
		if err != nil {
			b.Fatal(err)
		}
		info, err := os.Stat(out)
		if err != nil {
			b.Fatal(err)
		}
		size = info.Size()
		// The writer alone, as long as the backup took.
		stop = make(chan struct{})
		go func() {
			w, at := longest(stop)
			got <- result{w, at}
		}()
		time.Sleep(took)
		close(stop)
		idle = max(idle, (<-got).worst)
	}
	b.ReportMetric(took.Seconds(), "backup-s")
	b.ReportMetric(float64(size)/1e6, "backup-MB")
	b.ReportMetric(float64(busy.Microseconds())/1000, "max-write-ms")
	b.ReportMetric(float64(idle.Microseconds())/1000, "max-write-idle-ms")
	b.Logf("100,000 records: backup %v, %d bytes; longest write during it %v (%v after it started), in as long without it %v",
		took, size, busy, busyAt, idle)
}
