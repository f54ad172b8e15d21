package e2e_test

// A record's whole history in the console
// (docs/api.md#concurrency-control-and-record-history): paged past the
// first page, never listing a version twice while versions are written
// meanwhile; and a kept version viewed as it was (GET R?version=N),
// restorable from there.

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// shownVersions returns the version numbers the history lists, in order.
func (b *browser) shownVersions() []int {
	b.t.Helper()
	return eval[[]int](b, `[...document.querySelectorAll('ol.versions li .vhead strong')].map(e => Number(e.textContent.slice(1)))`)
}

// descending reports whether vs is strictly decreasing (newest first, no
// version twice).
func descending(vs []int) bool {
	for i := 1; i < len(vs); i++ {
		if vs[i] >= vs[i-1] {
			return false
		}
	}
	return true
}

func TestConsoleBrowserHistory(t *testing.T) {
	b := startBrowser(t, hds.WithMaxVersions(60))
	alice := b.api.token("alice")
	b.api.tree(alice, "shop", "prod", "api")
	kpath := pathK("shop", "prod", "api")
	// Version v holds the value v-1: 71 versions, of which the current
	// one and the 60 before it are kept (v11 to v71).
	b.api.addRecord(alice, kpath, "many", "INTEGER", `0`)
	rpath := pathR("shop", "prod", "api", "many")
	update := func(v int) {
		b.api.mustDo(http.MethodPut, rpath, fmt.Sprintf(`{"value":%d}`, v), alice, http.StatusOK)
	}
	for v := 1; v <= 70; v++ {
		update(v)
	}

	t.Run("every kept version, page by page", func(t *testing.T) {
		b.t = t
		b.signIn("alice", "#/p/shop/c/prod/k/api/r/many")
		b.waitText("50 of 61 versions")
		vs := b.shownVersions()
		require.Len(t, vs, 50)
		assert.Equal(t, 71, vs[0], "the current version first")
		b.button("Older versions")
		b.waitFor(`document.querySelector('section.history .list-status')?.textContent === '61 versions'`)
		vs = b.shownVersions()
		assert.Len(t, vs, 61)
		assert.True(t, descending(vs), "newest first, none twice: %v", vs)
		assert.Equal(t, 11, vs[60], "down to the oldest kept")
		assert.False(t, b.hasButton("Older versions"), "no page after the last")
	})

	t.Run("a version written between pages is not listed twice", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/shop/c/prod/k/api/r/many")
		b.waitText("50 of 61 versions")
		// Written here (this session's own change: the page does not
		// reload its history for it), it moves every offset by one.
		update(71)
		b.button("Older versions")
		b.waitFor(`!document.querySelector('.history .pager button')`)
		vs := b.shownVersions()
		assert.True(t, descending(vs), "none twice: %v", vs)
		assert.Len(t, vs, 60, "v71 down to v12 (v11 was dropped by the new version, v72 came after the first page)")
	})

	t.Run("view a kept version and restore it", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/shop/c/prod/k/api/r/many")
		b.waitText("50 of 61 versions")
		b.click(`a[aria-label="View version 30"]`)
		b.waitText("This is version 30, as it was then.")
		assert.Equal(t, "29", eval[string](b, `document.querySelector('.value-slot input').value`), "that version's value")
		assert.True(t, eval[bool](b, `document.querySelector('section.editor fieldset').disabled`), "read-only")
		assert.False(t, b.hasButton("Save"))
		assert.Contains(t, b.text(`section.editor .card-head`), "version 30")
		assert.True(t, b.has(`ol.versions li.viewing`), "the history marks it")
		assert.Contains(t, eval[string](b, `location.hash`), "/r/many/v/30")

		b.button("Restore this version")
		b.click(`dialog button[type=submit]`)
		b.waitText("Version 30 restored as version 73")
		b.waitFor(`!location.hash.includes('/v/')`)
		b.run(chromedp.WaitVisible(chromedp.CSS(`section.editor button[type=submit]`)))
		_, value, version := b.recordValue("many")
		assert.Equal(t, "29", value)
		assert.Equal(t, 73, version)
	})

	t.Run("a version no longer kept shows its error", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/shop/c/prod/k/api/r/many/v/3")
		b.waitText("404 RESOURCE_NOT_FOUND")
	})
}
