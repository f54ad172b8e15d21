package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// TestSnapshotRollbackCreatesEmptyClusters: a snapshot keeps a
// collection's empty clusters, and a rollback creates the clusters the
// snapshot holds and the target lacks (docs/api.md#snapshots-and-rollback-v13),
// empty ones included; a dry run creates none, and a rollback with
// nothing left to change changes nothing (no automatic snapshot).
func TestSnapshotRollbackCreatesEmptyClusters(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		c.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathC("web", "prod"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("web", "prod", "app"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathK("web", "prod", "spare"), "", alice, http.StatusCreated)
		c.mustDo("POST", pathR("web", "prod", "app", "port"), `{"type":"INTEGER","value":8080}`, alice, http.StatusCreated)
		s := c.snapAPICreate(t, "web", `{"name":"before","collection":"prod"}`, alice)
		require.Equal(t, 1, s.Records)

		// The release deletes the empty cluster and the other one.
		c.mustDo("DELETE", pathK("web", "prod", "spare"), "", alice, http.StatusNoContent)
		c.mustDo("DELETE", pathK("web", "prod", "app"), "", alice, http.StatusNoContent)

		c.snapAPIPromote(t, "web", `{"from_snapshot":"before","to":"prod","delete":true,"dry_run":true}`, alice)
		c.mustDo("GET", pathK("web", "prod", "spare"), "", alice, http.StatusNotFound)

		sum, auto := c.snapAPIPromote(t, "web", `{"from_snapshot":"before","to":"prod","delete":true}`, alice)
		assert.Equal(t, 1, sum.Created, "the record")
		require.NotNil(t, auto, "the rollback changed something")
		c.mustDo("GET", pathK("web", "prod", "spare"), "", alice, http.StatusOK)
		c.mustDo("GET", pathR("web", "prod", "app", "port"), "", alice, http.StatusOK)

		// Only the empty cluster missing: the rollback creates it.
		c.mustDo("DELETE", pathK("web", "prod", "spare"), "", alice, http.StatusNoContent)
		sum, auto = c.snapAPIPromote(t, "web", `{"from_snapshot":"before","to":"prod","delete":true}`, alice)
		assert.Equal(t, 0, sum.Created+sum.Updated+sum.Deleted)
		assert.NotNil(t, auto, "creating a cluster is a change")
		c.mustDo("GET", pathK("web", "prod", "spare"), "", alice, http.StatusOK)

		// Nothing left to change: no automatic snapshot.
		_, auto = c.snapAPIPromote(t, "web", `{"from_snapshot":"before","to":"prod","delete":true}`, alice)
		assert.Nil(t, auto, "nothing changed")
	})
}
