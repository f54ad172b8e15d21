package e2e_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// recordLookups counts FindRecord calls of the store it wraps, keeping
// the audit log, the access store and streaming visible to hds.
type recordLookups struct {
	store.Store
	store.AuditLog
	store.Access
	store.Streamer
	n *atomic.Int64
}

func (s recordLookups) FindRecord(ctx context.Context, p store.Path) (*store.Record, error) {
	s.n.Add(1)
	return s.Store.FindRecord(ctx, p)
}

// TestAuditRevealVersions: GET R/versions?reveal=true writes one
// credential.reveal entry naming the record as it is now (its current
// name, also when addressed by id or when the page holds only older
// states that had another name), with no version. The first page takes
// the record from the history it reads: no second lookup of the record.
func TestAuditRevealVersions(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		lookups := new(atomic.Int64)
		c := newServerWrapped(t, kind, func(s store.Store) store.Store {
			return recordLookups{Store: s, AuditLog: s.(store.AuditLog), Access: s.(store.Access),
				Streamer: s.(store.Streamer), n: lookups}
		}, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.tree(alice, "p", "c", "k")
		env := c.mustDo("POST", pathK("p", "c", "k")+"/records",
			`{"name":"db_password","type":"CREDENTIAL","value":"s3cr3t-one"}`, alice, http.StatusCreated)
		var rec recordJSON
		env.decode(t, &rec)
		c.mustDo("PUT", pathR("p", "c", "k", "db_password")+"?rename=DB_PASSWORD", "", alice, http.StatusOK)
		c.mustDo("PUT", pathR("p", "c", "k", "DB_PASSWORD"), `{"value":"s3cr3t-two"}`, alice, http.StatusOK)

		// A masked read writes no entry; its lookups are the baseline.
		before := lookups.Load()
		c.mustDo("GET", pathR("p", "c", "k", "DB_PASSWORD")+"/versions", "", alice, http.StatusOK)
		base := lookups.Load() - before

		for _, tt := range []struct {
			name, target string
			firstName    string // name of the first state on the page, "" for an empty page
			extra        int64  // lookups beyond the masked read's
		}{
			{"by name", pathR("p", "c", "k", "DB_PASSWORD") + "/versions?reveal=true", "DB_PASSWORD", 0},
			{"by id", pathR("p", "c", "k", rec.ID) + "/versions?reveal=true", "DB_PASSWORD", 0},
			{"a later page of older states", pathR("p", "c", "k", "DB_PASSWORD") + "/versions?reveal=true&offset=2", "db_password", 1},
			{"a page past the end", pathR("p", "c", "k", "DB_PASSWORD") + "/versions?reveal=true&offset=9", "", 1},
		} {
			before := lookups.Load()
			env := c.mustDo("GET", tt.target, "", alice, http.StatusOK)
			assert.Equal(t, base+tt.extra, lookups.Load()-before, "%s: record lookups", tt.name)
			var page listJSON[versionJSON]
			env.decode(t, &page)
			assert.Equal(t, 3, page.Total, "%s: total", tt.name)
			if tt.firstName == "" {
				assert.Empty(t, page.Items, "%s: items", tt.name)
			} else if assert.NotEmpty(t, page.Items, "%s: items", tt.name) {
				assert.Equal(t, tt.firstName, page.Items[0].Name, "%s: first state's name", tt.name)
				assert.Contains(t, string(page.Items[0].Value), "s3cr3t-", "%s: revealed", tt.name)
			}

			log := c.auditLog("p", "?limit=1")
			require.Len(t, log.Items, 1, "%s: newest entry", tt.name)
			e := log.Items[0]
			assert.Equal(t, "credential.reveal", e.Action, "%s: action", tt.name)
			assert.Equal(t, "DB_PASSWORD", str(e.Record), "%s: the record's current name", tt.name)
			assert.Equal(t, rec.ID, str(e.RecordID), "%s: record id", tt.name)
			assert.Nil(t, e.Version, "%s: not one version", tt.name)
			assert.Equal(t, "c", str(e.Collection), "%s: collection", tt.name)
			assert.Equal(t, "k", str(e.Cluster), "%s: cluster", tt.name)
			assert.Equal(t, c.ids["alice"], str(e.Actor), "%s: actor", tt.name)
		}
		// Each reveal wrote one entry: 6 changes (tree, create, rename, update) and 4 reveals.
		assert.Equal(t, 10, c.auditLog("p", "").Total, "entries")
	})
}
