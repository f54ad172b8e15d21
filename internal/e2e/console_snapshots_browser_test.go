package e2e_test

// The console's snapshots, in the compare tab
// (docs/api.md#snapshots-and-rollback-v13): take one, change the
// collection, compare the snapshot with it, roll back after a dry run
// (applied with the revision the comparison was read at and delete:
// true), which leaves the collection as the snapshot holds it and an
// automatic snapshot to undo with; a project changed since the comparison
// refuses the rollback (412); delete one (admins); a viewer lists and
// compares only.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapshotRows returns the rows of the snapshots list as "name of" (and
// " automatic" for an automatic one).
func (b *browser) snapshotRows() []string {
	b.t.Helper()
	return evalJSON[[]string](b, `[...document.querySelectorAll('table.snapshots tbody tr')].filter(tr => tr.querySelector('td.name')).map(tr =>
		tr.querySelector('td.name strong').textContent + ' ' + tr.querySelector('td[data-label=Of]').textContent +
		(tr.querySelector('td.name .badge') ? ' automatic' : ''))`)
}

// compareSnapshot opens the comparison of snapshot name with the
// collection or cluster the page picks first (the one it was taken of,
// want) and compares them.
func (b *browser) compareSnapshot(name, want string) {
	b.t.Helper()
	b.click(`button[data-snapshot=` + jsString(name) + `]`)
	col, clu, _ := strings.Cut(want, "/")
	b.waitFor(`document.querySelector('select[name=rollback-collection]')?.value === ` + jsString(col) +
		` && document.querySelector('select[name=rollback-cluster]')?.value === ` + jsString(clu))
	b.click(`.snapshot-compare form.compare-form button[type=submit]`)
}

func TestConsoleBrowserSnapshots(t *testing.T) {
	b := startBrowser(t)
	alice := b.api.token("alice")
	stagingAndProd(b.api, alice)
	b.api.share(alice, "web", "bob", "viewer")
	P := pathK("web", "prod", "app")

	t.Run("take, compare, roll back", func(t *testing.T) {
		b.t = t
		b.signIn("alice", "#/p/web/compare")
		b.waitText("No snapshots yet.")
		atSnapshot := b.api.export(t, "web", "?reveal=true", alice)

		b.button("Take a snapshot…")
		b.set(`dialog input[name=name]`, "before")
		b.waitFor(`[...document.querySelectorAll('dialog select[name=snapshot-collection] option')].some(o => o.value === 'prod')`)
		b.set(`dialog select[name=snapshot-collection]`, "prod")
		b.set(`dialog input[name=description]`, "before the release")
		b.click(`dialog button[type=submit]`)
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		b.waitText("Snapshot before taken: 7 records of prod at revision")
		b.waitFor(`document.querySelectorAll('table.snapshots td.name strong').length === 1`)
		assert.Equal(t, []string{"before prod"}, b.snapshotRows())
		assert.Contains(t, b.text(`table.snapshots tbody tr`), "before the release")

		// The release: a value changed, a credential changed, a record
		// deleted and one added.
		b.api.mustDo("PUT", pathR("web", "prod", "app", "host"), `{"value":"bad.example"}`, alice, http.StatusOK)
		b.api.mustDo("PUT", pathR("web", "prod", "app", "pw"), `{"value":"leaked"}`, alice, http.StatusOK)
		b.api.mustDo("DELETE", pathR("web", "prod", "app", "old"), "", alice, http.StatusNoContent)
		b.api.addRecord(alice, P, "extra", "INTEGER", "1")

		b.compareSnapshot("before", "prod")
		b.waitText("1 added, 1 removed, 2 changed, 4 unchanged")
		assert.Equal(t, []string{"extra Removed", "host Changed", "old Added", "pw Changed"}, evalJSON[[]string](b,
			`[...document.querySelectorAll('.snapshot-compare table.compare tbody tr')].map(tr => tr.querySelector('td.name').textContent + ' ' + tr.querySelector('.change').textContent)`),
			"what a rollback would change, by record name")
		assert.NotContains(t, b.text(`.snapshot-compare`), "leaked", "credentials masked")
		assert.NotContains(t, b.text(`.snapshot-compare`), "old-secret", "credentials masked")
		eval[bool](b, `(document.querySelector('.snapshot-compare').scrollIntoView(), true)`)
		b.screenshot("snapshots")

		// The review: a dry run, nothing changed yet.
		released := b.api.export(t, "web", "?reveal=true", alice)
		b.button("Roll back…")
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog ul.review`)))
		assert.Contains(t, b.text(`dialog`), "1 created, 2 updated, 1 deleted")
		assert.ElementsMatch(t, []string{"create prod / app / old", "delete prod / app / extra", "update prod / app / host", "update prod / app / pw"},
			evalJSON[[]string](b, `[...document.querySelectorAll('dialog ul.review li')].map(li => li.textContent)`), "the records it would change")
		assert.JSONEq(t, collectionsOf(t, released), collectionsOf(t, b.api.export(t, "web", "?reveal=true", alice)), "a review changes nothing")
		b.screenshot("snapshot-rollback")
		b.button("Cancel")
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		assert.JSONEq(t, collectionsOf(t, released), collectionsOf(t, b.api.export(t, "web", "?reveal=true", alice)), "cancelled: nothing rolled back")

		b.button("Roll back…")
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog ul.review`)))
		b.click(`dialog button[type=submit]`)
		b.waitText("Rolled back prod to before: 1 created, 2 updated, 1 deleted")
		b.waitText("Undo with snapshot auto-")
		b.waitText("0 added, 0 removed, 0 changed, 7 unchanged")
		assert.JSONEq(t, collectionsOf(t, atSnapshot), collectionsOf(t, b.api.export(t, "web", "?reveal=true", alice)),
			"the project as it was when the snapshot was taken, credentials included")

		// The rollback's own automatic snapshot, newest first.
		b.waitFor(`document.querySelectorAll('table.snapshots td.name strong').length === 2`)
		rows := b.snapshotRows()
		require.Len(t, rows, 2)
		assert.Regexp(t, `^auto-\d+ prod automatic$`, rows[0], "the automatic snapshot first")
		assert.Equal(t, "before prod", rows[1])
	})

	t.Run("a project changed since the comparison refuses the rollback", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/web/compare")
		b.waitFor(`document.querySelectorAll('table.snapshots td.name strong').length === 2`)
		b.api.mustDo("PUT", pathR("web", "prod", "app", "host"), `{"value":"bad.example"}`, alice, http.StatusOK)
		b.compareSnapshot("before", "prod")
		b.waitText("0 added, 0 removed, 1 changed, 6 unchanged")
		b.api.addRecord(alice, P, "later", "INTEGER", "1")
		before := b.api.export(t, "web", "?reveal=true", alice)
		b.button("Roll back…")
		b.waitText("The project changed since this comparison.")
		assert.Contains(t, b.text(`.snapshot-compare .alert`), "current revision is")
		assert.False(t, b.has(`dialog`), "no review of a stale comparison")
		assert.JSONEq(t, collectionsOf(t, before), collectionsOf(t, b.api.export(t, "web", "?reveal=true", alice)), "nothing rolled back")
		b.button("Compare again")
		b.waitText("0 added, 1 removed, 1 changed, 6 unchanged")
	})

	t.Run("a snapshot of a cluster compares with a cluster", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/web/compare")
		b.button("Take a snapshot…")
		b.set(`dialog input[name=name]`, "app-only")
		b.waitFor(`[...document.querySelectorAll('dialog select[name=snapshot-collection] option')].some(o => o.value === 'staging')`)
		b.set(`dialog select[name=snapshot-collection]`, "staging")
		b.waitFor(`[...document.querySelectorAll('dialog select[name=snapshot-cluster] option')].some(o => o.value === 'app')`)
		b.set(`dialog select[name=snapshot-cluster]`, "app")
		b.click(`dialog button[type=submit]`)
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		b.waitText("Snapshot app-only taken: 6 records of staging/app at revision")
		b.waitFor(`document.querySelectorAll('table.snapshots td.name strong').length === 3`)
		assert.Equal(t, "app-only staging/app", b.snapshotRows()[0], "newest first")

		// Compared with prod/app: what promoting it there would change.
		b.compareSnapshot("app-only", "staging/app")
		b.waitText("0 added, 0 removed, 0 changed, 6 unchanged")
		b.set(`select[name=rollback-collection]`, "prod")
		b.waitFor(`[...document.querySelectorAll('select[name=rollback-cluster] option')].some(o => o.value === 'app')`)
		b.set(`select[name=rollback-cluster]`, "app")
		b.click(`.snapshot-compare form.compare-form button[type=submit]`)
		b.waitText("1 added, 2 removed, 3 changed, 2 unchanged")
		assert.Equal(t, []string{"Cluster", "Record", "Change", "In snapshot app-only", "Now in prod/app"},
			evalJSON[[]string](b, `[...document.querySelectorAll('.snapshot-compare thead th')].map(th => th.textContent)`))

		// A name starting with auto- is the server's: its message shown.
		b.button("Take a snapshot…")
		b.set(`dialog input[name=name]`, "auto-1")
		b.waitFor(`[...document.querySelectorAll('dialog select[name=snapshot-collection] option')].some(o => o.value === 'prod')`)
		b.set(`dialog select[name=snapshot-collection]`, "prod")
		b.click(`dialog button[type=submit]`)
		b.waitFor(`!!document.querySelector('dialog .dialog-error .alert')`)
		assert.Contains(t, b.text(`dialog .dialog-error`), "400 VALIDATION_ERROR")
		b.button("Cancel")
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
	})

	t.Run("an admin deletes a snapshot", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/web/compare")
		b.waitFor(`document.querySelectorAll('table.snapshots td.name strong').length === 3`)
		b.click(`table.snapshots tbody tr:last-child button.danger-text`)
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog`)))
		assert.Contains(t, b.text(`dialog h2`), "Delete snapshot before?")
		b.click(`dialog button[type=submit]`)
		b.waitText("Snapshot before deleted")
		b.waitFor(`document.querySelectorAll('table.snapshots td.name strong').length === 2`)
		b.api.mustDo("GET", pathP("web")+"/snapshots/before", "", alice, http.StatusNotFound)
	})

	t.Run("a viewer lists and compares only", func(t *testing.T) {
		b.t = t
		b.signIn("bob", "#/p/web/compare")
		b.waitFor(`document.querySelector('.badge.role')?.textContent === 'viewer' && document.querySelectorAll('table.snapshots td.name strong').length === 2`)
		assert.False(t, b.hasButton("Take a snapshot…"), "no snapshot taken by a viewer")
		assert.False(t, b.has(`table.snapshots button.danger-text`), "no delete for a viewer")
		b.compareSnapshot("app-only", "staging/app")
		b.waitText("0 added, 0 removed, 0 changed, 6 unchanged")
		assert.False(t, b.hasButton("Roll back…"), "no rollback for a viewer")
	})
}
