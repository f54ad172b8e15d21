package storetest

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// assertID checks that id is a lowercase canonical UUID version 7.
func assertID(t *testing.T, id, what string) {
	t.Helper()
	c, ok := store.CanonicalUUID(id)
	if !assert.True(t, ok, "%s id %q is a UUID", what, id) {
		return
	}
	assert.Equal(t, c, id, "%s id is in lowercase canonical form", what)
	assert.Equal(t, "7", id[14:15], "%s id %q is a version 7 UUID", what, id)
	assert.Contains(t, "89ab", id[19:20], "%s id %q has the RFC 9562 variant", what, id)
}

// assertCreateStamps checks the timestamps of a resource just created.
func assertCreateStamps(t *testing.T, created, updated time.Time, what string) {
	t.Helper()
	assertStamp(t, created, what+" CreatedAt")
	assertStamp(t, updated, what+" UpdatedAt")
	assert.True(t, created.Equal(updated), "%s: CreatedAt (%v) equals UpdatedAt (%v) on create", what, created, updated)
}

// assertStamp checks that ts is a current time, in UTC, truncated to
// microseconds.
func assertStamp(t *testing.T, ts time.Time, what string) {
	t.Helper()
	assert.False(t, ts.IsZero(), "%s is set", what)
	assert.True(t, ts.Location() == time.UTC, "%s (%v) is in UTC", what, ts)
	assert.True(t, ts.Equal(ts.Truncate(time.Microsecond)), "%s (%v) is truncated to microseconds", what, ts)
	assert.WithinDuration(t, time.Now(), ts, time.Minute, "%s is the current time", what)
}

// assertNotFound checks that err is ErrNotFound, as a *store.NotFoundError
// naming kind and name.
func assertNotFound(t *testing.T, err error, kind, name string, msgAndArgs ...any) {
	t.Helper()
	msg := message(msgAndArgs)
	if !assert.ErrorIs(t, err, store.ErrNotFound, "%s: want ErrNotFound", msg) {
		return
	}
	var nf *store.NotFoundError
	if assert.ErrorAs(t, err, &nf, "%s: want a *store.NotFoundError", msg) {
		assert.Equal(t, kind, nf.Kind, "%s: NotFoundError.Kind names the first missing level", msg)
		assert.Equal(t, name, nf.Name, "%s: NotFoundError.Name", msg)
	}
}

// assertExists checks that err is ErrAlreadyExists, as a
// *store.ExistsError naming kind and name.
func assertExists(t *testing.T, err error, kind, name string, msgAndArgs ...any) {
	t.Helper()
	msg := message(msgAndArgs)
	if !assert.ErrorIs(t, err, store.ErrAlreadyExists, "%s: want ErrAlreadyExists", msg) {
		return
	}
	var ee *store.ExistsError
	if assert.ErrorAs(t, err, &ee, "%s: want a *store.ExistsError", msg) {
		assert.Equal(t, kind, ee.Kind, "%s: ExistsError.Kind", msg)
		assert.Equal(t, name, ee.Name, "%s: ExistsError.Name is the taken name", msg)
	}
}

func message(msgAndArgs []any) string {
	if len(msgAndArgs) == 0 {
		return ""
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return fmt.Sprint(msgAndArgs...)
}

func assertProjectCount(t *testing.T, s store.Store, name string, collections int, msg string) {
	t.Helper()
	p, err := s.FindProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: owner}, Project: name})
	if assert.NoError(t, err, "%s: FindProject", msg) {
		assert.Equal(t, collections, p.CollectionCount, "%s: CollectionCount", msg)
	}
}

func assertCollectionCounts(t *testing.T, s store.Store, p store.Path, clusters, records int, msg string) {
	t.Helper()
	c, err := s.FindCollection(t.Context(), p)
	if assert.NoError(t, err, "%s: FindCollection", msg) {
		assert.Equal(t, clusters, c.ClusterCount, "%s: ClusterCount", msg)
		assert.Equal(t, records, c.RecordCount, "%s: RecordCount counts the records of every cluster", msg)
	}
}

// tick returns once the clock has moved two microseconds (stores keep
// microseconds, and PostgreSQL rounds rather than truncates): a write
// after tick has a later timestamp than every write before it. It
// watches the clock rather than sleeping a guess.
func tick() {
	until := time.Now().Truncate(time.Microsecond).Add(2 * time.Microsecond)
	for time.Now().Before(until) {
		runtime.Gosched()
	}
}

func mustValue(t *testing.T, typ store.DataType, js string) json.RawMessage {
	t.Helper()
	v, err := typ.ParseJSON([]byte(js))
	require.NoError(t, err, "%s.ParseJSON(%s)", typ, js)
	return v
}

func mustProject(t *testing.T, s store.Store, who, name string) *store.Project {
	t.Helper()
	p, err := s.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: who}, Project: name})
	require.NoError(t, err, "CreateProject %q", name)
	return p
}

func mustCollection(t *testing.T, s store.Store, p store.Path) *store.Collection {
	t.Helper()
	c, err := s.CreateCollection(t.Context(), p)
	require.NoError(t, err, "CreateCollection %q/%q", p.Project, p.Collection)
	return c
}

func mustCluster(t *testing.T, s store.Store, p store.Path) *store.Cluster {
	t.Helper()
	c, err := s.CreateCluster(t.Context(), p)
	require.NoError(t, err, "CreateCluster %q/%q/%q", p.Project, p.Collection, p.Cluster)
	return c
}

// mustRecord creates the record p.Record of type typ with the JSON value
// js (made canonical with typ.ParseJSON).
func mustRecord(t *testing.T, s store.Store, p store.Path, typ store.DataType, js string) *store.Record {
	t.Helper()
	r, err := s.CreateRecord(t.Context(), p, &store.Record{Type: typ, Value: mustValue(t, typ, js)}, store.Write{})
	require.NoError(t, err, "CreateRecord %q/%q/%q/%q", p.Project, p.Collection, p.Cluster, p.Record)
	return r
}

// Views of the domain types, comparable with assert.Equal whatever the
// time.Time values' locations or monotonic readings.

type projectView struct {
	ID, Name, OwnerID, CreatedAt, UpdatedAt string
	CollectionCount                         int
}

func viewProject(p *store.Project) projectView {
	if p == nil {
		return projectView{}
	}
	return projectView{p.ID, p.Name, p.OwnerID, stamp(p.CreatedAt), stamp(p.UpdatedAt), p.CollectionCount}
}

type collectionView struct {
	ID, Name, Project, CreatedAt, UpdatedAt string
	ClusterCount, RecordCount               int
}

func viewCollection(c *store.Collection) collectionView {
	if c == nil {
		return collectionView{}
	}
	return collectionView{c.ID, c.Name, c.Project, stamp(c.CreatedAt), stamp(c.UpdatedAt), c.ClusterCount, c.RecordCount}
}

type clusterView struct {
	ID, Name, Project, Collection, CreatedAt, UpdatedAt string
	RecordCount                                         int
	Records                                             []recordView
}

func viewCluster(c *store.Cluster) clusterView {
	if c == nil {
		return clusterView{}
	}
	v := clusterView{c.ID, c.Name, c.Project, c.Collection, stamp(c.CreatedAt), stamp(c.UpdatedAt), c.RecordCount, nil}
	for _, r := range c.Records {
		v.Records = append(v.Records, viewRecord(r))
	}
	return v
}

type recordView struct {
	ID, Name             string
	Type                 store.DataType
	Value                string
	Version              int64
	CreatedAt, UpdatedAt string
	UpdatedBy            string
}

func viewRecord(r *store.Record) recordView {
	if r == nil {
		return recordView{}
	}
	return recordView{r.ID, r.Name, r.Type, string(r.Value), r.Version, stamp(r.CreatedAt), stamp(r.UpdatedAt), r.UpdatedBy}
}

func stamp(ts time.Time) string { return ts.UTC().Format(time.RFC3339Nano) }

func projectNames(ps []*store.Project) []string {
	names := []string{}
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

func recordNames(rs []*store.Record) []string {
	names := []string{}
	for _, r := range rs {
		names = append(names, r.Name)
	}
	return names
}
