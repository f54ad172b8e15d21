package e2e_test

// The console's compare view (docs/api.md#compare-and-promote): two
// clusters picked from the project's lists and compared, records ticked,
// the promote reviewed (a dry run) and then applied with the revision the
// comparison was read at, the ticks left as they were; a project changed
// meanwhile refuses the promote (412) and changes nothing; a viewer
// compares without promoting.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
)

// comparedRows returns the rows of the comparison as "record change".
func (b *browser) comparedRows() []string {
	b.t.Helper()
	return evalJSON[[]string](b, `[...document.querySelectorAll('table.compare tbody tr')].map(tr =>
		tr.querySelector('td.name').textContent + ' ' + tr.querySelector('.change').textContent)`)
}

// pickSide picks one side of a comparison ("From" or "To"): side is a
// collection or collection/cluster, chosen from the lists the page offers.
func (b *browser) pickSide(which, side string) {
	b.t.Helper()
	col, clu, _ := strings.Cut(side, "/")
	sel := "select[name=" + strings.ToLower(which) + "-"
	b.waitFor(`[...document.querySelectorAll('` + sel + `collection] option')].some(o => o.value === ` + jsString(col) + `)`)
	b.set(sel+"collection]", col)
	if clu != "" {
		b.waitFor(`[...document.querySelectorAll('` + sel + `cluster] option')].some(o => o.value === ` + jsString(clu) + `)`)
	}
	b.set(sel+"cluster]", clu)
}

// compareSides picks both sides and compares them.
func (b *browser) compareSides(from, to string) {
	b.t.Helper()
	b.pickSide("From", from)
	b.pickSide("To", to)
	b.button("Compare")
}

// ticks returns the records whose promote box is ticked.
func (b *browser) ticks() []string {
	b.t.Helper()
	return evalJSON[[]string](b, `[...document.querySelectorAll('table.compare input[data-record]')].filter(x => x.checked).map(x => x.dataset.record)`)
}

func TestConsoleBrowserCompare(t *testing.T) {
	b := startBrowser(t)
	alice := b.api.token("alice")
	stagingAndProd(b.api, alice)
	b.api.share(alice, "web", "bob", "viewer")

	t.Run("compare two clusters, tick records, promote", func(t *testing.T) {
		b.t = t
		b.signIn("alice", "#/p/web/compare")
		b.waitFor(`document.querySelectorAll('select[name=from-collection] option').length === 3`)
		for _, sel := range []string{"from-collection", "to-collection"} {
			assert.Equal(t, []string{"", "prod", "staging"}, evalJSON[[]string](b, `[...document.querySelectorAll('select[name=`+sel+`] option')].map(o => o.value)`),
				"%s: the project's collections to pick from", sel)
		}
		b.compareSides("staging/app", "prod/app")
		b.waitText("1 added, 1 removed, 3 changed, 2 unchanged")
		assert.Equal(t, []string{"Zed Added", "host Changed", "old Removed", "port Changed", "pw Changed"}, b.comparedRows(),
			"by record name, byte-wise")
		assert.NotContains(t, b.text(`table.compare`), "new-secret", "credentials masked")
		b.screenshot("compare")

		// Take host and pw only.
		b.click(`input[data-record=Zed]`)
		b.click(`input[data-record=old]`)
		b.click(`input[data-record=port]`)
		before := b.api.export(t, "web", "", alice)

		// The review: a dry run of what would change, nothing changed yet.
		b.button("Promote the ticked records…")
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog ul.review`)))
		assert.Contains(t, b.text(`dialog`), "0 created, 2 updated, 0 deleted")
		assert.Equal(t, []string{"update prod / app / host", "update prod / app / pw"},
			evalJSON[[]string](b, `[...document.querySelectorAll('dialog ul.review li')].map(li => li.textContent)`), "the records it would change")
		assert.JSONEq(t, collectionsOf(t, before), collectionsOf(t, b.api.export(t, "web", "", alice)), "a review changes nothing")
		b.screenshot("compare-review")
		b.button("Cancel")
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		assert.JSONEq(t, collectionsOf(t, before), collectionsOf(t, b.api.export(t, "web", "", alice)), "cancelled: nothing promoted")
		assert.Equal(t, []string{"host", "pw"}, b.ticks(), "the ticks stay as they were")

		b.button("Promote the ticked records…")
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog ul.review`)))
		b.click(`dialog button[type=submit]`)
		b.waitText("Promoted: 0 created, 2 updated, 0 deleted")
		b.waitText("1 added, 1 removed, 1 changed, 4 unchanged")
		assert.Equal(t, []string{"Zed Added", "old Removed", "port Changed"}, b.comparedRows(), "what was left")
		assert.Empty(t, b.ticks(), "the rows left keep the ticks the user left them with: none")
		var pw recordJSON
		b.api.mustDo("GET", pathR("web", "prod", "app", "pw")+"?reveal=true", "", alice, http.StatusOK).decode(t, &pw)
		assert.Equal(t, `"new-secret"`, string(pw.Value), "the credential promoted")

		// A row new to the comparison of the same pair comes unticked.
		b.api.addRecord(alice, pathK("web", "staging", "app"), "fresh", "INTEGER", "1")
		b.button("Compare")
		b.waitText("2 added, 1 removed, 1 changed, 4 unchanged")
		assert.Empty(t, b.ticks(), "nothing unreviewed is ticked")
		assert.Equal(t, []string{"fresh"}, evalJSON[[]string](b, `[...document.querySelectorAll('table.compare tr')].filter(tr => tr.querySelector('.badge.new')).map(tr => tr.querySelector('td.name').textContent)`),
			"marked new: the row that was not in the comparison before")
		b.click(`input[data-record=port]`)
		assert.Equal(t, []string{"port"}, b.ticks())
		b.button("Compare")
		b.waitText("2 added, 1 removed, 1 changed, 4 unchanged")
		b.waitFor(`!!document.querySelector('input[data-record=fresh]')`)
		assert.Equal(t, []string{"port"}, b.ticks(), "comparing again keeps the ticks")
		b.api.mustDo("DELETE", pathR("web", "staging", "app", "fresh"), "", alice, http.StatusNoContent)
	})

	t.Run("a project changed since the comparison refuses the promote", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/web/compare")
		b.compareSides("staging/app", "prod/app")
		b.waitText("1 added, 1 removed, 1 changed, 4 unchanged")
		assert.Equal(t, []string{"Zed", "old", "port"}, b.ticks(), "a first comparison ticks every difference")
		before := b.api.export(t, "web", "", alice)
		b.api.addRecord(alice, pathK("web", "prod", "app"), "later", "INTEGER", "1")
		b.button("Promote the ticked records…")
		b.waitText("The project changed since this comparison.")
		assert.Contains(t, b.text(`.compare-result .alert`), "current revision is")
		assert.False(t, b.has(`dialog`), "no review of a stale comparison")
		b.api.mustDo("DELETE", pathR("web", "prod", "app", "later"), "", alice, http.StatusNoContent)
		assert.JSONEq(t, collectionsOf(t, before), collectionsOf(t, b.api.export(t, "web", "", alice)), "nothing promoted")
		b.button("Compare again")
		b.waitText("1 added, 1 removed, 1 changed, 4 unchanged")

		// Changed between the review and its confirmation: refused too.
		before = b.api.export(t, "web", "", alice)
		b.button("Promote the ticked records…")
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog ul.review`)))
		b.api.addRecord(alice, pathK("web", "prod", "app"), "later", "INTEGER", "1")
		b.click(`dialog button[type=submit]`)
		b.waitText("The project changed since this comparison.")
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		b.api.mustDo("DELETE", pathR("web", "prod", "app", "later"), "", alice, http.StatusNoContent)
		assert.JSONEq(t, collectionsOf(t, before), collectionsOf(t, b.api.export(t, "web", "", alice)), "nothing promoted")
	})

	t.Run("a viewer compares collections without promoting", func(t *testing.T) {
		b.t = t
		b.signIn("bob", "#/p/web/compare")
		b.waitFor(`document.querySelector('.badge.role')?.textContent === 'viewer' && !!document.querySelector('select[name=from-collection]')`)
		b.compareSides("staging", "prod")
		b.waitText("2 added, 2 removed, 1 changed, 4 unchanged")
		assert.False(t, b.hasButton("Promote all differences…"), "no promote for a viewer")
		assert.False(t, b.has(`table.compare input[type=checkbox]`), "nothing to tick")
		b.pickSide("To", "prod/app")
		b.button("Compare")
		b.waitText("from and to must be two collections or two clusters, not one of each")
	})
}
