package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

// TestQuotas checks the quotas of
// docs/api.md#limits-rate-limits-and-quotas over HTTP on every store: a
// write that would pass one is 403 QUOTA_EXCEEDED, message "Quota
// exceeded", details naming the quota, and changes nothing.
func TestQuotas(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithQuotas(store.Quotas{MaxRecordsPerCluster: 2, MaxProjectsPerUser: 2, MaxBytesPerProject: 200}))
		tok := c.token("alice")
		c.tree(tok, "p", "c", "k")
		kpath := pathK("p", "c", "k")

		// Projects per user: the body form and the path form.
		c.mustDo("POST", "/api/v1/projects", `{"name":"p2"}`, tok, http.StatusCreated)
		status, _, env := c.do("POST", "/api/v1/projects", `{"name":"p3"}`, tok)
		wantError(t, "a 3rd project (body form)", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		wantDetails(t, "a 3rd project", env, "max_projects_per_user", "2")
		status, _, env = c.do("POST", pathP("p3"), "", tok)
		wantError(t, "a 3rd project (path form)", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		c.mustDo("GET", pathP("p3"), "", tok, http.StatusNotFound)
		c.mustDo("POST", pathP("bobs"), "", c.token("bob"), http.StatusCreated) // bob has his own count

		// Projects per user on a transfer (PUT P/owner): the new owner's
		// count, refused with nothing changed.
		c.mustDo("POST", pathP("bobs2"), "", c.token("bob"), http.StatusCreated)
		status, _, env = c.do("PUT", pathP("p2")+"/owner", `{"username":"bob"}`, tok)
		wantError(t, "a transfer to an owner at the quota", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		wantDetails(t, "a transfer to an owner at the quota", env, "max_projects_per_user", "2")
		var p2 struct {
			Role string `json:"role"`
		}
		c.mustDo("GET", pathP("p2"), "", tok, http.StatusOK).decode(t, &p2)
		assert.Equal(t, "owner", p2.Role, "the refused transfer left alice the owner")
		c.mustDo("GET", pathP("p2"), "", c.token("bob"), http.StatusForbidden) // and made bob no member
		c.mustDo("DELETE", pathP("bobs2"), "", c.token("bob"), http.StatusNoContent)
		c.mustDo("PUT", pathP("p2")+"/owner", `{"username":"bob"}`, tok, http.StatusOK) // below the quota

		// Records per cluster: both create forms.
		c.addRecord(tok, kpath, "a", "INTEGER", "1")
		c.addRecord(tok, kpath, "b", "INTEGER", "2")
		status, _, env = c.do("POST", kpath+"/records", `{"name":"x","type":"INTEGER","value":3}`, tok)
		wantError(t, "a 3rd record (body form)", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		wantDetails(t, "a 3rd record", env, "max_records_per_cluster", "2")
		status, _, env = c.do("POST", pathR("p", "c", "k", "x")+"?type=INTEGER&value=3", "", tok)
		wantError(t, "a 3rd record (path form)", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		c.mustDo("GET", pathR("p", "c", "k", "x"), "", tok, http.StatusNotFound)

		// Bytes per project: an update, a restore and container writes.
		big := `"` + strings.Repeat("z", 200) + `"`
		status, _, env = c.do("PUT", pathR("p", "c", "k", "a"), `{"type":"STRING","value":`+big+`}`, tok)
		wantError(t, "an update past the byte quota", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		wantDetails(t, "an update past the byte quota", env, "max_bytes_per_project", "200")
		var rec recordJSON
		c.mustDo("GET", pathR("p", "c", "k", "a"), "", tok, http.StatusOK).decode(t, &rec)
		assert.Equal(t, int64(1), rec.Version, "the refused update changed nothing")
		assert.JSONEq(t, "1", string(rec.Value), "the refused update changed nothing")

		half := `"` + strings.Repeat("h", 150) + `"`
		c.mustDo("PUT", pathR("p", "c", "k", "a"), `{"type":"STRING","value":`+half+`}`, tok, http.StatusOK)
		// Its old state is history now; going back to a shorter value still
		// grows the project by the new state.
		status, _, env = c.do("PUT", pathR("p", "c", "k", "a"), `{"value":`+half+`}`, tok)
		wantError(t, "an update whose old value joins the history", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		status, _, env = c.do("POST", pathR("p", "c", "k", "a")+"/restore?version=2", "", tok)
		wantError(t, "a restore past the byte quota", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		long := strings.Repeat("n", 60)
		status, _, env = c.do("POST", pathC("p", long), "", tok)
		wantError(t, "a collection past the byte quota", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		status, _, env = c.do("POST", pathK("p", "c", long), "", tok)
		wantError(t, "a cluster past the byte quota", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		status, _, env = c.do("PUT", pathK("p", "c", "k")+"?rename="+long, "", tok)
		wantError(t, "a cluster rename past the byte quota", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		status, _, env = c.do("PUT", pathC("p", "c")+"?rename="+long, "", tok)
		wantError(t, "a collection rename past the byte quota", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		// Deleting gives the space back.
		c.mustDo("DELETE", pathR("p", "c", "k", "a"), "", tok, http.StatusNoContent)
		c.mustDo("POST", pathC("p", long), "", tok, http.StatusCreated)
	})
}

// TestQuotaDefaults checks that New enforces API.md's default quotas on
// its default store, and refuses WithQuotas for a store that cannot
// enforce them.
func TestQuotaDefaults(t *testing.T) {
	c := newServer(t, storeKinds[0])
	tok := c.token("alice")
	for i := range store.DefaultQuotas.MaxProjectsPerUser {
		_, err := c.store.CreateProject(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: c.ids["alice"]}, Project: fmt.Sprint("p", i)})
		require.NoError(t, err)
	}
	status, _, env := c.do("POST", pathP("one-more"), "", tok)
	wantError(t, "project 1001", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
	wantDetails(t, "project 1001", env, "max_projects_per_user", "1000")

	_, err := hds.NewHandler(hds.WithStore(plainStore{memory.New()}), hds.WithQuotas(store.Quotas{}))
	require.Error(t, err, "WithQuotas on a store without quotas")
	assert.True(t, strings.HasPrefix(err.Error(), "hds: "), err.Error())
	assert.Contains(t, err.Error(), "WithQuotas")
	_, err = hds.NewHandler(hds.WithQuotas(store.Quotas{MaxProjectsPerUser: -2}))
	assert.ErrorContains(t, err, "WithQuotas", "a negative quota other than store.Unlimited")
}

// plainStore hides every method of a store but store.Projects'.
type plainStore struct{ store.Projects }
