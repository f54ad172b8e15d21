package e2e_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// The user story of docs/api.md#snapshots-and-rollback-v13, end to end on
// every store: keep a snapshot before a release, see what the release
// changed, roll back to the snapshot exactly (credentials included), and
// undo a promote with the automatic snapshot it took.

// snapshotJSON is a snapshot as the API answers it.
type snapshotJSON struct {
	Name        string  `json:"name"`
	Collection  string  `json:"collection"`
	Cluster     *string `json:"cluster"`
	Description string  `json:"description"`
	Revision    int64   `json:"revision"`
	Records     int     `json:"records"`
	Automatic   bool    `json:"automatic"`
	CreatedAt   string  `json:"created_at"`
	CreatedBy   string  `json:"created_by"`
}

// promoteAnswer is the answer of POST P/promote with the v1.3 fields.
type promoteAnswer struct {
	importSummary
	Snapshot *string `json:"snapshot"`
}

// promoteFull sends POST P/promote and returns its whole answer.
func (c *client) promoteFull(t *testing.T, p, body, token string) promoteAnswer {
	t.Helper()
	env := c.mustDo("POST", pathP(p)+"/promote", body, token, http.StatusOK)
	var a promoteAnswer
	env.decode(t, &a)
	return a
}

// snapshots lists project p's snapshots, newest first, as "name of" (of:
// "C" or "C/K"), with " automatic" after an automatic one.
func (c *client) snapshots(t *testing.T, p, token string) []string {
	t.Helper()
	var list struct {
		Items []snapshotJSON `json:"items"`
	}
	c.mustDo("GET", pathP(p)+"/snapshots", "", token, http.StatusOK).decode(t, &list)
	out := []string{}
	for _, s := range list.Items {
		line := s.Name + " " + s.Collection
		if s.Cluster != nil {
			line += "/" + *s.Cluster
		}
		if s.Automatic {
			line += " automatic"
		}
		out = append(out, line)
	}
	return out
}

// withEmptyCluster returns the collections of export document body with
// collection/cluster added, empty, as JSON (as collectionsOf gives them).
func withEmptyCluster(t *testing.T, body []byte, collection, cluster string) string {
	t.Helper()
	var doc struct {
		Collections map[string]struct {
			Clusters map[string]json.RawMessage `json:"clusters"`
		} `json:"collections"`
	}
	require.NoError(t, json.Unmarshal(body, &doc), "decode export")
	doc.Collections[collection].Clusters[cluster] = json.RawMessage(`{"records":{}}`)
	var back exportDoc
	require.NoError(t, json.Unmarshal(mustJSON(t, doc), &back))
	return string(mustJSON(t, back.Collections))
}

func TestSnapshotRollbackStory(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey))
		alice := c.token("alice")
		stagingAndProd(c, alice)
		SP := pathP("web") + "/snapshots"

		// Before the release: a snapshot of prod (clusters app and legacy).
		atSnapshot := c.export(t, "web", "?reveal=true", alice) // its reveal is audited: read before the revision
		revision := c.exportRevision(t, "web", alice)
		env := c.mustDo("POST", SP, `{"name":"before-2.0","collection":"prod","description":"before the release"}`, alice, http.StatusCreated)
		wantFields(t, "snapshot", env.Data, "name", "collection", "cluster", "description", "revision", "records", "automatic", "created_at", "created_by")
		var snap snapshotJSON
		env.decode(t, &snap)
		assert.Equal(t, snapshotJSON{Name: "before-2.0", Collection: "prod", Description: "before the release", Revision: revision,
			Records: 7, CreatedAt: snap.CreatedAt, CreatedBy: "alice"}, snap, "7 records of prod, at the revision before its own entry")
		wantTimestamps(t, "created_at", snap.CreatedAt)

		// The release: a value and a credential changed, a record deleted,
		// one added, and a whole cluster deleted.
		c.mustDo("PUT", pathR("web", "prod", "app", "host"), `{"value":"bad.example"}`, alice, http.StatusOK)
		c.mustDo("PUT", pathR("web", "prod", "app", "pw"), `{"value":"leaked"}`, alice, http.StatusOK)
		c.mustDo("DELETE", pathR("web", "prod", "app", "old"), "", alice, http.StatusNoContent)
		c.addRecord(alice, pathK("web", "prod", "app"), "extra", "INTEGER", "1")
		c.mustDo("DELETE", pathK("web", "prod", "legacy"), "", alice, http.StatusNoContent)
		released := c.export(t, "web", "?reveal=true", alice)

		// The snapshot never changes: its credential as it was.
		var kept struct {
			Clusters map[string]struct {
				Records map[string]struct {
					Type  string          `json:"type"`
					Value json.RawMessage `json:"value"`
				} `json:"records"`
			} `json:"clusters"`
		}
		c.mustDo("GET", SP+"/before-2.0?reveal=true", "", alice, http.StatusOK).decode(t, &kept)
		assert.JSONEq(t, `"old-secret"`, string(kept.Clusters["app"].Records["pw"].Value), "revealed: the value at the snapshot")
		assert.JSONEq(t, `false`, string(kept.Clusters["legacy"].Records["flag"].Value), "the deleted cluster's record")
		c.mustDo("GET", SP+"/before-2.0", "", alice, http.StatusOK).decode(t, &kept)
		assert.JSONEq(t, `"********"`, string(kept.Clusters["app"].Records["pw"].Value), "masked without reveal")

		// What a rollback would change.
		d := c.diff(t, "web", "from_snapshot=before-2.0&to=prod", alice)
		assert.Equal(t, "snapshot:before-2.0", d.From)
		assert.Equal(t, "prod", d.To)
		var changes []string
		for _, it := range d.Items {
			changes = append(changes, it.Change+" "+it.Cluster+"/"+it.Record)
		}
		assert.Equal(t, []string{"removed app/extra", "changed app/host", "added app/old", "changed app/pw", "added legacy/flag"}, changes,
			"by cluster, then record")
		assert.Equal(t, 2, d.Summary.Added)
		assert.Equal(t, 1, d.Summary.Removed)
		assert.Equal(t, 2, d.Summary.Changed)
		assert.Equal(t, 3, d.Summary.Unchanged)
		for _, it := range d.Items {
			assert.NotContains(t, string(it.From)+string(it.To), "secret", "credentials masked")
			assert.NotContains(t, string(it.From)+string(it.To), "leaked", "credentials masked")
		}

		// The review: a dry run at the comparison's revision changes nothing.
		body := `{"from_snapshot":"before-2.0","to":"prod","delete":true,"if_revision":` + strconv.FormatInt(d.Revision, 10)
		plan := c.promoteFull(t, "web", body+`,"dry_run":true}`, alice)
		assert.Equal(t, []int{2, 2, 1}, []int{plan.Created, plan.Updated, plan.Deleted}, "created (app/old, legacy/flag), updated, deleted")
		assert.Nil(t, plan.Snapshot, "a dry run takes no snapshot")
		assert.JSONEq(t, collectionsOf(t, released), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)), "a dry run changes nothing")

		// The rollback: prod exactly as the snapshot holds it.
		done := c.promoteFull(t, "web", body+`}`, alice)
		assert.Equal(t, []int{2, 2, 1}, []int{done.Created, done.Updated, done.Deleted})
		require.NotNil(t, done.Snapshot, "the automatic snapshot of what it changed")
		undo := *done.Snapshot
		assert.Regexp(t, `^auto-\d+$`, undo, "named after the revision before the promote")
		n, _ := strconv.ParseInt(undo[len("auto-"):], 10, 64)
		assert.GreaterOrEqual(t, n, d.Revision, "the revision before the promote: at least the comparison's (reveals since count too)")
		assert.Less(t, n, done.Revision, "before the promote's own entries")
		assert.JSONEq(t, collectionsOf(t, atSnapshot), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)),
			"the export at the snapshot's time, credentials revealed")
		after := c.diff(t, "web", "from_snapshot=before-2.0&to=prod", alice).Summary
		assert.Equal(t, []int{0, 0, 0, 7}, []int{after.Added, after.Removed, after.Changed, after.Unchanged}, "nothing left to roll back")
		assert.Equal(t, []string{undo + " prod automatic", "before-2.0 prod"}, c.snapshots(t, "web", alice), "newest first")

		// A promote of staging/app to prod/app, undone by its own snapshot.
		beforePromote := c.export(t, "web", "?reveal=true", alice)
		p := c.promoteFull(t, "web", `{"from":"staging/app","to":"prod/app","delete":true}`, alice)
		require.NotNil(t, p.Snapshot)
		assert.NotEqual(t, collectionsOf(t, beforePromote), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)), "the promote changed prod/app")
		assert.Equal(t, []string{*p.Snapshot + " prod/app automatic", undo + " prod automatic", "before-2.0 prod"}, c.snapshots(t, "web", alice),
			"a snapshot of the cluster the promote changed")
		u := c.promoteFull(t, "web", `{"from_snapshot":`+strconv.Quote(*p.Snapshot)+`,"to":"prod/app","delete":true}`, alice)
		assert.Equal(t, p.Created, u.Deleted, "what the promote created, deleted")
		assert.JSONEq(t, collectionsOf(t, beforePromote), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)), "undone, credentials included")

		// Undoing the rollback: prod as released again; the cluster the
		// rollback created stays, empty.
		c.promoteFull(t, "web", `{"from_snapshot":`+strconv.Quote(undo)+`,"to":"prod","delete":true}`, alice)
		assert.JSONEq(t, withEmptyCluster(t, released, "prod", "legacy"), collectionsOf(t, c.export(t, "web", "?reveal=true", alice)),
			"the release back, legacy left empty")
	})
}
