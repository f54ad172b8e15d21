package e2e_test

// The console's compare view (docs/api.md#21-compare-and-promote): two
// clusters compared, records ticked and promoted with the revision the
// comparison was read at; a project changed meanwhile refuses the promote
// (412) and changes nothing; a viewer compares without promoting.

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// comparedRows returns the rows of the comparison as "record change".
func (b *browser) comparedRows() []string {
	b.t.Helper()
	return evalJSON[[]string](b, `[...document.querySelectorAll('table.compare tbody tr')].map(tr =>
		tr.querySelector('td.name').textContent + ' ' + tr.querySelector('.change').textContent)`)
}

func TestConsoleBrowserCompare(t *testing.T) {
	b := startBrowser(t)
	alice := b.api.token("alice")
	stagingAndProd(b.api, alice)
	b.api.share(alice, "web", "bob", "viewer")

	t.Run("compare two clusters, tick records, promote", func(t *testing.T) {
		b.t = t
		b.signIn("alice", "#/p/web/compare")
		b.set(`input[name=from]`, "staging/app")
		b.set(`input[name=to]`, "prod/app")
		b.button("Compare")
		b.waitText("1 added, 1 removed, 3 changed, 2 unchanged")
		assert.Equal(t, []string{"Zed Added", "host Changed", "old Removed", "port Changed", "pw Changed"}, b.comparedRows(),
			"by record name, byte-wise")
		assert.NotContains(t, b.text(`table.compare`), "new-secret", "credentials masked")
		b.screenshot("compare")

		// Take host and pw only.
		b.click(`input[data-record=Zed]`)
		b.click(`input[data-record=old]`)
		b.click(`input[data-record=port]`)
		b.button("Promote the ticked records")
		b.waitText("Promoted: 0 created, 2 updated, 0 deleted")
		b.waitText("1 added, 1 removed, 1 changed, 4 unchanged")
		assert.Equal(t, []string{"Zed Added", "old Removed", "port Changed"}, b.comparedRows(), "what was left")
		var pw recordJSON
		b.api.mustDo("GET", pathR("web", "prod", "app", "pw")+"?reveal=true", "", alice, http.StatusOK).decode(t, &pw)
		assert.Equal(t, `"new-secret"`, string(pw.Value), "the credential promoted")
	})

	t.Run("a project changed since the comparison refuses the promote", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/web/compare")
		b.set(`input[name=from]`, "staging/app")
		b.set(`input[name=to]`, "prod/app")
		b.button("Compare")
		b.waitText("1 added, 1 removed, 1 changed, 4 unchanged")
		before := b.api.export(t, "web", "", alice)
		b.api.addRecord(alice, pathK("web", "prod", "app"), "later", "INTEGER", "1")
		b.button("Promote the ticked records")
		b.waitText("The project changed since this comparison.")
		assert.Contains(t, b.text(`.compare-result .alert`), "current revision is")
		b.api.mustDo("DELETE", pathR("web", "prod", "app", "later"), "", alice, http.StatusNoContent)
		assert.JSONEq(t, collectionsOf(t, before), collectionsOf(t, b.api.export(t, "web", "", alice)), "nothing promoted")
		b.button("Compare again")
		b.waitText("1 added, 1 removed, 1 changed, 4 unchanged")
	})

	t.Run("a viewer compares collections without promoting", func(t *testing.T) {
		b.t = t
		b.signIn("bob", "#/p/web/compare")
		b.waitFor(`document.querySelector('.badge.role')?.textContent === 'viewer' && !!document.querySelector('input[name=from]')`)
		b.set(`input[name=from]`, "staging")
		b.set(`input[name=to]`, "prod")
		b.button("Compare")
		b.waitText("2 added, 2 removed, 1 changed, 4 unchanged")
		assert.False(t, b.hasButton("Promote all differences"), "no promote for a viewer")
		assert.False(t, b.has(`table.compare input[type=checkbox]`), "nothing to tick")
		b.set(`input[name=to]`, "prod/app")
		b.button("Compare")
		b.waitText("from and to must be two collections or two clusters, not one of each")
	})
}
