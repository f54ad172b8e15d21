package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// meddler is a store that, right after each of the next left snapshots
// an import or a promote plans on (ExportProject, CompareRecords),
// writes the record at path: a concurrent write landing between a plan
// and its apply, every time.
type meddler struct {
	store.Store
	mu   sync.Mutex
	path store.Path
	left int
	n    int
}

// set makes the next left snapshots each followed by a write of path.
func (m *meddler) set(path store.Path, left int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.path, m.left = path, left
}

// meddle writes the record, once for each snapshot while any are left.
func (m *meddler) meddle(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.left == 0 {
		return
	}
	m.left--
	m.n++
	value := json.RawMessage(strconv.Quote("meddled-" + strconv.Itoa(m.n)))
	if _, err := m.Store.UpdateRecord(ctx, m.path, store.Write{}, func(r *store.Record) error {
		r.Value = value
		return nil
	}); err != nil {
		panic(fmt.Sprintf("meddle with %s: %v", m.path.Record, err))
	}
}

func (m *meddler) ExportProject(ctx context.Context, p store.Path, visit func(store.ExportItem) error) error {
	err := m.Store.ExportProject(ctx, p, visit)
	m.meddle(ctx)
	return err
}

func (m *meddler) CompareRecords(ctx context.Context, p store.Path, from, to store.Side, visit func(store.Pair) error) error {
	err := store.Compare(ctx, m.Store, p, from, to, visit)
	m.meddle(ctx)
	return err
}

// TestImportAndPromoteWithoutPreconditionNeverAnswer412: on every store,
// an import or a promote sent without if_revision applies, 200, however
// often a write lands between its plan and its apply: elsewhere in the
// project after every plan, or on a record it changes after each of its
// first five plans (docs/api.md#compare-and-promote, v1.3: 412 only
// answers a precondition the caller sent). With if_revision, a write
// elsewhere still makes it 412.
func TestImportAndPromoteWithoutPreconditionNeverAnswer412(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		m := &meddler{}
		c := newServerWrapped(t, kind, func(s store.Store) store.Store { m.Store = s; return m })
		alice := c.token("alice")
		c.tree(alice, "p", "c", "a")
		for _, k := range []string{"b", "other"} {
			c.mustDo(http.MethodPost, pathK("p", "c", k), "", alice, http.StatusCreated)
		}
		for i := range 5 {
			c.addRecord(alice, pathK("p", "c", "a"), "x"+strconv.Itoa(i), "STRING", `"one"`)
			c.addRecord(alice, pathK("p", "c", "b"), "x"+strconv.Itoa(i), "STRING", `"old"`)
		}
		c.addRecord(alice, pathK("p", "c", "other"), "busy", "STRING", `"0"`)
		owner := store.Caller{UserID: c.ids["alice"]}
		at := func(cluster, record string) store.Path {
			return store.Path{Need: store.RightRead, Caller: owner, Project: "p", Collection: "c", Cluster: cluster, Record: record}
		}
		value := func(cluster, record string) string {
			var r recordJSON
			c.mustDo(http.MethodGet, pathR("p", "c", cluster, record), "", alice, http.StatusOK).decode(t, &r)
			return string(r.Value)
		}
		busy := at("other", "busy")

		m.set(busy, 1000)
		s := c.promote(t, "p", `{"from":"c/a","to":"c/b"}`, alice)
		assert.Equal(t, 5, s.Updated, "a promote with writes elsewhere after every plan")
		assert.Equal(t, `"one"`, value("b", "x0"))

		for i := range 5 {
			c.mustDo(http.MethodPut, pathR("p", "c", "a", "x"+strconv.Itoa(i)), `{"value":"two"}`, alice, http.StatusOK)
		}
		m.set(at("b", "x0"), 5)
		s = c.promote(t, "p", `{"from":"c/a","to":"c/b"}`, alice)
		assert.Equal(t, 5, s.Updated, "a promote whose target record is written after each of its first 5 plans")
		assert.Equal(t, `"two"`, value("b", "x0"), "the promote applied on the record as it then was")

		doc := func(v string) string {
			return `{"format":"hds/1","collections":{"c":{"clusters":{"b":{"records":{"x1":{"type":"STRING","value":"` + v + `"}}}}}}}`
		}
		m.set(at("b", "x1"), 5)
		imp := c.importDoc(t, "p", "", doc("three"), alice)
		assert.Equal(t, 1, imp.Updated, "an import whose record is written after each of its first 5 plans")
		assert.Equal(t, `"three"`, value("b", "x1"), "the import applied")

		m.set(busy, 1000)
		imp = c.importDoc(t, "p", "", doc("four"), alice)
		assert.Equal(t, 1, imp.Updated, "an import with writes elsewhere after every plan")
		assert.Equal(t, `"four"`, value("b", "x1"))

		// A precondition sent is still checked.
		m.set(busy, 0)
		c.mustDo(http.MethodPut, pathR("p", "c", "a", "x2"), `{"value":"five"}`, alice, http.StatusOK)
		revision := c.diff(t, "p", "from=c/a&to=c/b", alice).Revision
		m.set(busy, 1)
		res := c.call(req{method: http.MethodPost, target: pathP("p") + "/promote", token: alice,
			body: `{"from":"c/a","to":"c/b","if_revision":` + strconv.FormatInt(revision, 10) + `}`})
		res.wantError(t, "a promote with if_revision and a write elsewhere before it applies", http.StatusPreconditionFailed, "PRECONDITION_FAILED", "Precondition failed")
		require.NotNil(t, res.env.Error)
		assert.True(t, strings.HasPrefix(res.env.details(), "current revision is "), "details %q", res.env.details())
		assert.Equal(t, `"two"`, value("b", "x2"), "a promote answered 412 changed nothing")
	})
}
