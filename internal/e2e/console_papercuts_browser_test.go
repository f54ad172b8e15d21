package e2e_test

// The console papercuts found by a new user (docs/api.md#the-console):
// the audit log filtered by username and by date, the API-token form's
// scope picked from lists, rename and delete in one place on every level,
// a missing resource's page without edit buttons, the tab row on a phone,
// notices that do not outlive their page, and the array editor without
// stray brackets.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// auditQueries returns the query of every audit list request the page
// sent since instrumentFetch.
func (b *browser) auditQueries() []url.Values {
	b.t.Helper()
	var out []url.Values
	for _, r := range b.sent() {
		u, err := url.Parse(r.URL)
		require.NoError(b.t, err)
		if strings.HasSuffix(u.Path, "/audit") {
			out = append(out, u.Query())
		}
	}
	return out
}

// auditRows returns the "Who" column of the audit rows shown, once the
// list has settled and the JavaScript condition ok holds of them (w).
func (b *browser) auditRows(ok string) []string {
	b.t.Helper()
	const rows = `[...document.querySelectorAll('table.list tbody tr')].filter(r => !r.querySelector('td.empty')).map(r => r.querySelector('td[data-label=Who]').textContent)`
	b.waitFor(`(() => { const w = ` + rows + `; return !document.querySelector('.listview.loading') && (` + ok + `); })()`)
	return evalJSON[[]string](b, rows)
}

// localTime is the instant the browser reads a local date and time
// ("2026-11-26T00:00:00") as.
func (b *browser) localTime(s string) time.Time {
	b.t.Helper()
	at, err := time.Parse(time.RFC3339, eval[string](b, `new Date(`+jsString(s)+`).toISOString()`))
	require.NoError(b.t, err)
	return at
}

func TestConsoleBrowserPapercuts(t *testing.T) {
	b := startBrowser(t)
	alice := b.api.token("alice")
	b.api.tree(alice, "shop", "prod", "api")
	b.api.mustDo(http.MethodPost, pathC("shop", "staging"), "", alice, http.StatusCreated)
	b.api.mustDo(http.MethodPost, pathK("shop", "staging", "web"), "", alice, http.StatusCreated)
	b.api.mustDo(http.MethodPost, pathK("shop", "staging", "worker"), "", alice, http.StatusCreated)
	b.api.share(alice, "shop", "bob", "editor")
	kpath := pathK("shop", "prod", "api")
	b.api.addRecord(b.api.token("bob"), kpath, "from-bob", "STRING", `"hi"`)
	b.api.addRecord(alice, kpath, "greeting", "STRING", `"hello"`)
	b.api.addRecord(alice, kpath, "tags", "[]STRING", `["a","b"]`)
	b.run(chromedp.Navigate(b.base))
	b.instrumentFetch()
	b.signIn("alice", "#/p/shop/audit")

	t.Run("audit by username", func(t *testing.T) {
		b.t = t
		b.waitText("record.create")
		who := `input[aria-label="User or token"]`
		b.set(who, "bob")
		b.run(chromedp.SendKeys(chromedp.CSS(who), "\r"))
		rows := b.auditRows(`w.length > 0 && w.every(x => x === 'bob')`)
		assert.NotEmpty(t, rows)
		qs := b.auditQueries()
		assert.Equal(t, b.api.ids["bob"], qs[len(qs)-1].Get("actor"), "the username becomes bob's id in the request")

		b.set(who, "zed")
		b.run(chromedp.SendKeys(chromedp.CSS(who), "\r"))
		b.waitText("No member or API token of this project is named “zed”")
		b.set(who, "")
		b.run(chromedp.SendKeys(chromedp.CSS(who), "\r"))
		rows = b.auditRows(`w.includes('alice') && w.includes('bob')`)
		assert.Contains(t, rows, "alice", "an empty filter shows everyone again")
	})

	t.Run("audit by date", func(t *testing.T) {
		b.t = t
		today := eval[string](b, `(() => { const d = new Date(); return d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, '0'); })()`)
		day, err := time.ParseInLocation("2006-01-02", today, time.Local)
		require.NoError(t, err)
		tomorrow, yesterday := day.AddDate(0, 0, 1).Format("2006-01-02"), day.AddDate(0, 0, -1).Format("2006-01-02")
		since, until := `input[type=date][aria-label="Since"]`, `input[type=date][aria-label="Until"]`

		b.set(since, tomorrow)
		b.auditRows(`w.length === 0`)
		b.waitText("No entries.")
		q := b.auditQueries()
		got, err := time.Parse(time.RFC3339, q[len(q)-1].Get("since"))
		require.NoError(t, err, "since is RFC 3339")
		assert.Equal(t, b.localTime(tomorrow+"T00:00:00"), got, "since: the start of the day, where the browser is")

		b.set(since, today)
		assert.NotEmpty(t, b.auditRows(`w.length > 0`), "today's entries, since today")
		b.set(until, yesterday)
		b.auditRows(`w.length === 0`)
		b.set(until, today)
		assert.NotEmpty(t, b.auditRows(`w.length > 0`), "until today includes the whole day")
		q = b.auditQueries()
		got, err = time.Parse(time.RFC3339, q[len(q)-1].Get("until"))
		require.NoError(t, err, "until is RFC 3339")
		assert.Equal(t, b.localTime(today+"T23:59:59"), got.Truncate(time.Second), "until: the end of the day")
	})

	t.Run("token scope from lists", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/shop/tokens")
		b.button("New token")
		b.set(`dialog input[name=name]`, "web deploy")
		options := func(sel string) []string {
			return evalJSON[[]string](b, `[...document.querySelectorAll('`+sel+` option')].map(o => o.value)`)
		}
		b.waitFor(`document.querySelectorAll('dialog select[name=collection] option').length === 3`)
		assert.Equal(t, []string{"", "prod", "staging"}, options(`dialog select[name=collection]`), "every collection, and the whole project")
		assert.True(t, eval[bool](b, `document.querySelector('dialog select[name=cluster]').disabled`), "no cluster before a collection")
		b.set(`dialog select[name=collection]`, "staging")
		b.waitFor(`document.querySelectorAll('dialog select[name=cluster] option').length === 3`)
		assert.Equal(t, []string{"", "web", "worker"}, options(`dialog select[name=cluster]`), "the collection's clusters")
		b.set(`dialog select[name=cluster]`, "worker")
		b.click(`dialog button[type=submit]`)
		b.waitText("it is shown only once")
		b.waitText("staging / worker")
		var list struct {
			Items []struct{ Name, Collection, Cluster string } `json:"items"`
		}
		b.api.mustDo(http.MethodGet, pathP("shop")+"/tokens", "", alice, http.StatusOK).decode(t, &list)
		require.Len(t, list.Items, 1)
		assert.Equal(t, "staging", list.Items[0].Collection)
		assert.Equal(t, "worker", list.Items[0].Cluster)
		b.button("Done")
	})

	t.Run("rename and delete in one place", func(t *testing.T) {
		b.t = t
		type place struct {
			Labels      []string
			Right, Top  float64
			InHeadOfTop bool
		}
		at := func(route, kind string) place {
			b.goTo(route)
			b.waitFor(`[...document.querySelectorAll('main button')].some(x => x.textContent.trim() === ` + jsString("Delete "+kind) + `)`)
			return evalJSON[place](b, `(() => {
				const a = document.querySelector('.view-head .head-actions');
				const r = a.getBoundingClientRect();
				return { Labels: [...a.querySelectorAll('button')].map(x => x.textContent.trim()), Right: Math.round(r.right), Top: Math.round(r.top),
					InHeadOfTop: a.closest('.view') === document.querySelector('main .view') };
			})()`)
		}
		levels := []struct{ route, kind string }{
			{"#/p/shop", "project"}, {"#/p/shop/c/prod", "collection"},
			{"#/p/shop/c/prod/k/api", "cluster"}, {"#/p/shop/c/prod/k/api/r/greeting", "record"},
		}
		var first place
		for i, l := range levels {
			p := at(l.route, l.kind)
			assert.Equal(t, []string{"Rename " + l.kind, "Delete " + l.kind}, p.Labels[len(p.Labels)-2:], "%s: rename and delete, in that order, last", l.kind)
			assert.True(t, p.InHeadOfTop, "%s: in the page's heading", l.kind)
			if i == 0 {
				first = p
				continue
			}
			assert.Equal(t, first.Right, p.Right, "%s: at the same right edge as the project's", l.kind)
			assert.Equal(t, first.Top, p.Top, "%s: at the same height as the project's", l.kind)
		}

		// The record's own: rename, then delete, from the heading.
		b.button("Rename record")
		b.set(`dialog input[name=name]`, "salutation")
		b.click(`dialog button[type=submit]`)
		b.waitText(`Renamed to “salutation”`)
		b.waitFor(`location.hash.endsWith('/r/salutation')`)
		b.api.mustDo(http.MethodGet, pathR("shop", "prod", "api", "salutation"), "", alice, http.StatusOK)
		b.button("Delete record")
		b.click(`dialog button[type=submit]`)
		b.waitFor(`location.hash === '#/p/shop/c/prod/k/api'`)
		b.api.mustDo(http.MethodGet, pathR("shop", "prod", "api", "salutation"), "", alice, http.StatusNotFound)
		// The project's own, from the project's page.
		b.goTo("#/p/shop")
		b.button("Rename project")
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog input[name=name]`)))
		assert.Equal(t, "shop", eval[string](b, `document.querySelector('dialog input[name=name]').value`))
		b.button("Cancel")
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
	})

	t.Run("a missing resource shows its error only", func(t *testing.T) {
		b.t = t
		for _, tc := range []struct{ route, msg string }{
			{"#/p/nope", `project "nope" not found`},
			{"#/p/shop/c/nope", `collection "nope" not found`},
			{"#/p/shop/c/prod/k/nope", `cluster "nope" not found`},
			{"#/p/shop/c/prod/k/api/r/nope", `record "nope" not found`},
			{"#/p/shop/c/nope/k/api/r/greeting", `collection "nope" not found`},
		} {
			b.goTo(tc.route)
			b.waitFor(`location.hash === ` + jsString(tc.route) + ` && !!document.querySelector('main .alert')?.textContent.includes(` + jsString(tc.msg) + `)`)
			assert.Contains(t, eval[string](b, `document.querySelector('main .alert').textContent`), "404 RESOURCE_NOT_FOUND", tc.route)
			buttons := evalJSON[[]string](b, `[...document.querySelectorAll('main button')].map(x => x.textContent.trim())`)
			assert.Equal(t, []string{"Try again"}, buttons, "%s: no edit buttons, no list, only the error's", tc.route)
			assert.False(t, b.has(`main table`), "%s: no list", tc.route)
		}
	})

	t.Run("notices do not outlive their page", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/shop/c/prod/k/api/r/from-bob")
		b.waitFor(`!!document.querySelector('section.editor .card-head')?.textContent.includes('from-bob')`)
		b.set(`.value-slot textarea`, "changed")
		b.save(2)
		b.waitFor(`document.querySelector('#toasts').textContent.includes('Saved: version 2')`)
		b.goTo("#/p/shop/members") // a link elsewhere
		b.waitText("bob")
		assert.Equal(t, 0, eval[int](b, `document.querySelectorAll('#toasts .toast').length`), "the record's notice went with its page")

		// A notice of what made the page change goes along with it.
		b.goTo("#/p/shop/c/prod/k/api/r/from-bob")
		b.waitFor(`!!document.querySelector('section.editor .card-head')?.textContent.includes('from-bob')`)
		b.button("Delete record")
		b.click(`dialog button[type=submit]`)
		b.waitFor(`location.hash === '#/p/shop/c/prod/k/api'`)
		b.waitText("1–1 of 1")
		assert.Contains(t, eval[string](b, `document.querySelector('#toasts').textContent`), "Record “from-bob” deleted")
	})

	t.Run("the array editor has no stray brackets", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/shop/c/prod/k/api/r/tags")
		b.run(chromedp.WaitVisible(chromedp.CSS(`.value-slot .array-editor`)))
		stray := evalJSON[[]string](b, `[...document.querySelectorAll('.value-slot, .value-slot *')].flatMap(e =>
			['::before', '::after'].map(p => getComputedStyle(e, p).content)).filter(c => c.includes('[') || c.includes(']'))`)
		assert.Empty(t, stray, "no bracket drawn around the editor")
		assert.NotContains(t, b.text(`.value-slot`), "[")
		b.screenshot("record-array")
	})

	t.Run("the tab row fits a phone", func(t *testing.T) {
		b.t = t
		b.run(chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
		defer b.run(chromedp.EmulateViewport(1280, 800))
		for _, route := range []string{"#/p/shop", "#/p/shop/audit", "#/p/shop/c/prod/k/api"} {
			b.goTo(route)
			b.run(chromedp.WaitVisible(chromedp.CSS(`nav.tabs a`)))
			b.waitFor(`!document.querySelector('.listview.loading')`)
			fit := evalJSON[map[string]float64](b, `(() => {
				const t = document.querySelector('nav.tabs');
				const last = [...t.querySelectorAll('a')].pop().getBoundingClientRect();
				return { page: document.documentElement.scrollWidth, view: window.innerWidth, tabs: t.scrollWidth, tabsBox: t.clientWidth, lastRight: last.right };
			})()`)
			assert.LessOrEqual(t, fit["page"], fit["view"], "%s: no horizontal overflow of the page", route)
			assert.LessOrEqual(t, fit["tabs"], fit["tabsBox"], "%s: every tab in view, none scrolled away", route)
			assert.LessOrEqual(t, fit["lastRight"], fit["view"], "%s: the last tab on the screen", route)
		}
	})
}
