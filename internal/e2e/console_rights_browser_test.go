package e2e_test

// The console shows what the caller's role allows
// (docs/api.md#sharing-and-api-tokens and docs/api.md#the-console): a
// viewer no write button, a reader also reveal, an editor writes but no
// member or token management, an admin that too, the owner also the
// project's delete. And a delete from a record list is conditional on the
// version the list showed (If-Match).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// signIn makes username (password username-password) the console's
// session, as a login would, and opens route (a hash such as "#/p/shop").
// The page is not reloaded, so what instrumentFetch installed stays.
func (b *browser) signIn(username, route string) {
	b.t.Helper()
	b.signInWith(username, b.api.login(username, username+"-password"), route)
}

// signInWith is signIn with a given token.
func (b *browser) signInWith(username, token, route string) {
	b.t.Helper()
	sess, err := json.Marshal(map[string]any{"token": token, "user_id": b.api.ids[username], "username": username,
		"expires_at": time.Now().Add(time.Hour).UnixMilli()})
	require.NoError(b.t, err)
	q, _ := json.Marshal(string(sess))
	if !eval[bool](b, `location.pathname.endsWith('/console/')`) {
		b.run(chromedp.Navigate(b.base))
	}
	eval[bool](b, fmt.Sprintf(`(sessionStorage.setItem('hds.session', %s), true)`, q))
	b.goTo(route)
	eval[bool](b, `(window.dispatchEvent(new CustomEvent('hds:session')), true)`)
}

// goTo opens a route of the console in the same document (drawn anew
// when it is the route already open).
func (b *browser) goTo(route string) {
	b.t.Helper()
	q, _ := json.Marshal(route)
	eval[bool](b, fmt.Sprintf(`((r) => {
		if (location.hash === r) window.dispatchEvent(new HashChangeEvent('hashchange'));
		else location.hash = r;
		return true;
	})(%s)`, q))
}

// has reports whether an element matches the CSS selector now.
func (b *browser) has(sel string) bool {
	b.t.Helper()
	q, _ := json.Marshal(sel)
	return eval[bool](b, fmt.Sprintf(`!!document.querySelector(%s)`, q))
}

// hasButton reports whether a button or link whose text is label is on
// the page now.
func (b *browser) hasButton(label string) bool {
	b.t.Helper()
	q, _ := json.Marshal(label)
	return eval[bool](b, fmt.Sprintf(`[...document.querySelectorAll('button, a')].some(e => e.textContent.trim() === %s)`, q))
}

// waitFor waits until the JavaScript expression is true.
func (b *browser) waitFor(expr string) {
	b.t.Helper()
	b.run(chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(10*time.Second)))
}

// instrumentFetch wraps the page's fetch: every request is logged in
// window.__sent as {method, url, ifMatch, lastEventId, token, status}
// (status once answered), and while window.__feedOff is true the change
// feed's requests fail as a network would. Every notice shown is logged
// in window.__toasts. It lasts until the page is reloaded.
func (b *browser) instrumentFetch() {
	b.t.Helper()
	eval[bool](b, `(() => {
		if (window.__sent) return true;
		window.__sent = [];
		window.__toasts = [];
		const real = window.fetch.bind(window);
		window.fetch = async (u, o = {}) => {
			const hd = o.headers || {};
			const e = { method: o.method || 'GET', url: String(u), ifMatch: hd['If-Match'] || null,
				lastEventId: hd['Last-Event-ID'] || null, token: (hd.Authorization || '').replace('Bearer ', ''), status: null };
			window.__sent.push(e);
			if (window.__feedOff && e.url.includes('/events')) throw new TypeError('feed off by the test');
			const res = await real(u, o);
			e.status = res.status;
			return res;
		};
		new MutationObserver(ms => { for (const m of ms) for (const n of m.addedNodes) window.__toasts.push(n.textContent); })
			.observe(document.getElementById('toasts'), { childList: true });
		return true;
	})()`)
}

// evalJSON evaluates a JavaScript expression and decodes its value,
// passed through JSON.stringify, into a T.
func evalJSON[T any](b *browser, expr string) T {
	b.t.Helper()
	var out T
	require.NoError(b.t, json.Unmarshal([]byte(eval[string](b, `JSON.stringify(`+expr+`)`)), &out), "decode %s", expr)
	return out
}

// sent returns the requests logged by instrumentFetch.
func (b *browser) sent() []sentRequest {
	b.t.Helper()
	return evalJSON[[]sentRequest](b, `window.__sent`)
}

// sentRequest is one request the page made.
type sentRequest struct {
	Method      string  `json:"method"`
	URL         string  `json:"url"`
	IfMatch     *string `json:"ifMatch"`
	LastEventID *string `json:"lastEventId"`
	Token       string  `json:"token"`
	Status      *int    `json:"status"`
}

// toasts returns every notice shown since instrumentFetch.
func (b *browser) toasts() []string {
	b.t.Helper()
	return evalJSON[[]string](b, `window.__toasts`)
}

func TestConsoleBrowserRoles(t *testing.T) {
	b := startBrowser(t)
	alice := b.api.token("alice")
	b.api.tree(alice, "shop", "prod", "api")
	kpath := pathK("shop", "prod", "api")
	b.api.addRecord(alice, kpath, "pw", "CREDENTIAL", `"s3cret"`)
	b.api.mustDo(http.MethodPut, pathR("shop", "prod", "api", "pw"), `{"value":"s3cret-2"}`, alice, http.StatusOK)
	b.api.addRecord(alice, kpath, "plain", "STRING", `"hello"`)
	for _, role := range []string{"viewer", "reader", "editor", "admin"} {
		b.api.addUser(role+"-user", role+"-user-password")
		b.api.share(alice, "shop", role+"-user", role)
	}

	for _, tc := range []struct {
		user, role                string
		reveal, write, admin, own bool
	}{
		{"viewer-user", "viewer", false, false, false, false},
		{"reader-user", "reader", true, false, false, false},
		{"editor-user", "editor", true, true, false, false},
		{"admin-user", "admin", true, true, true, false},
		{"alice", "owner", true, true, true, true},
	} {
		t.Run(tc.role, func(t *testing.T) {
			b.t = t
			b.signIn(tc.user, "#/")

			// The project list: each row by its own role.
			b.waitText("1–1 of 1")
			assert.Equal(t, tc.role, b.text(`table.list td[data-label=Role]`), "the role the list gives")
			assert.True(t, b.hasButton("New project"), "anyone may create a project of their own")
			assert.Equal(t, tc.admin, b.has(`button[aria-label="Rename shop"]`), "rename the project: admin")
			assert.Equal(t, tc.own, b.has(`button[aria-label="Delete shop"]`), "delete the project: owner")

			// The project: its collections and tabs.
			b.goTo("#/p/shop")
			b.run(chromedp.WaitVisible(chromedp.CSS(`a[href="#/p/shop/c/prod"]`)))
			b.waitFor(`document.querySelector('.projectbar .role')?.textContent === ` + fmt.Sprintf("%q", tc.role))
			assert.Equal(t, tc.write, b.hasButton("New collection"), "create a collection: editor")
			assert.Equal(t, tc.write, b.has(`button[aria-label="Rename prod"]`), "rename a collection: editor")
			assert.Equal(t, tc.write, b.has(`button[aria-label="Delete prod"]`), "delete a collection: editor")
			assert.True(t, b.hasButton("Members"), "anyone sees the members")
			assert.Equal(t, tc.admin, b.hasButton("API tokens"), "API tokens: admin")
			assert.Equal(t, tc.admin, b.hasButton("Audit log"), "audit log: admin")

			b.goTo("#/p/shop/c/prod")
			b.run(chromedp.WaitVisible(chromedp.CSS(`a[href="#/p/shop/c/prod/k/api"]`)))
			assert.Equal(t, tc.write, b.hasButton("New cluster"), "create a cluster: editor")
			assert.Equal(t, tc.write, b.has(`button[aria-label="Delete api"]`), "delete a cluster: editor")

			// The records.
			b.goTo("#/p/shop/c/prod/k/api")
			b.waitText("1–2 of 2")
			assert.Equal(t, tc.write, b.hasButton("New record"), "create a record: editor")
			assert.Equal(t, tc.write, b.has(`button[aria-label="Delete plain"]`), "delete a record: editor")
			assert.Equal(t, tc.write, b.hasButton("Rename cluster"), "rename the cluster: editor")
			assert.Equal(t, tc.write, b.hasButton("Delete cluster"), "delete the cluster: editor")
			assert.Equal(t, tc.reveal, b.has(`button[aria-label="Reveal pw"]`), "reveal: reader")
			assert.Equal(t, tc.reveal, b.has(`button[aria-label="Copy pw"]`), "copy a credential: reader")
			if tc.reveal {
				b.click(`button[aria-label="Reveal pw"]`)
				b.waitText("s3cret-2")
			}

			// One record and its history.
			b.goTo("#/p/shop/c/prod/k/api/r/pw")
			b.waitText("v1")
			assert.Equal(t, tc.write, b.hasButton("Save"), "save: editor")
			assert.Equal(t, tc.write, b.hasButton("Delete record"), "delete: editor")
			assert.Equal(t, !tc.write, eval[bool](b, `document.querySelector('section.editor fieldset').disabled`), "the editor is read-only without write")
			assert.Equal(t, !tc.write, eval[bool](b, `[...document.querySelectorAll('section.editor input, section.editor select')].every(e => e.matches(':disabled'))`), "every field of it")
			assert.Equal(t, !tc.write, b.has(`.read-only`), "and says so")
			assert.Equal(t, tc.write, b.has(`button[aria-label="Restore version 1"]`), "restore: editor")
			assert.Equal(t, tc.reveal, b.hasButton("Show value"), "show the value: reader")
			assert.Equal(t, tc.reveal, b.hasButton("Reveal values"), "reveal the history: reader")
			assert.True(t, b.has(`a[aria-label="View version 1"]`), "anyone may look at an old version")

			// Members: managed by admins; anyone else may leave.
			b.goTo("#/p/shop/members")
			b.waitText("viewer-user")
			assert.Equal(t, tc.admin, b.hasButton("Add member"), "add a member: admin")
			assert.Equal(t, tc.admin, b.has(`select[aria-label="Role of viewer-user"]`), "change a role: admin")
			assert.Equal(t, tc.admin, b.hasButton("Remove"), "remove a member: admin")
			assert.Equal(t, !tc.admin, b.hasButton("Leave project"), "leave: a member who is not an admin")
			assert.Equal(t, tc.own, b.hasButton("Transfer ownership"), "transfer the project: the owner")
			assert.NotContains(t, eval[string](b, `document.body.innerText`), "Insufficient permissions", "nothing the role may not do was asked")
		})
	}

	t.Run("a role changed elsewhere shows at once", func(t *testing.T) {
		b.t = t
		b.signIn("viewer-user", "#/p/shop/c/prod/k/api")
		b.waitText("1–2 of 2")
		b.waitFor(`document.querySelector('.live')?.textContent === 'Live'`)
		assert.False(t, b.hasButton("New record"))
		b.api.share(alice, "shop", "viewer-user", "editor")
		b.waitFor(`[...document.querySelectorAll('button')].some(e => e.textContent === 'New record')`)
		assert.Equal(t, "editor", b.text(`.projectbar .role`))
		b.api.share(alice, "shop", "viewer-user", "viewer")
	})

	t.Run("a viewer leaves", func(t *testing.T) {
		b.t = t
		b.signIn("viewer-user", "#/p/shop/members")
		b.button("Leave project")
		b.click(`dialog button[type=submit]`)
		b.waitText(`You left project “shop”`)
		b.waitText("No projects yet")
		status, _, env := b.api.do(http.MethodGet, pathP("shop"), "", b.api.login("viewer-user", "viewer-user-password"))
		wantError(t, "after leaving", status, env, http.StatusForbidden, "AUTHORIZATION_FAILED", "Insufficient permissions")
	})

	t.Run("a project out of reach shows its error", func(t *testing.T) {
		b.t = t
		b.goTo("#/p/shop/c/prod")
		b.waitText("403 AUTHORIZATION_FAILED")
		b.waitText("Insufficient permissions")
	})
}

func TestConsoleBrowserListDeleteIfMatch(t *testing.T) {
	b := startBrowser(t)
	alice := b.api.token("alice")
	b.api.tree(alice, "shop", "prod", "api")
	kpath := pathK("shop", "prod", "api")
	b.api.addRecord(alice, kpath, "stale", "STRING", `"one"`)
	b.run(chromedp.Navigate(b.base))
	b.instrumentFetch()
	// The feed would reload the list on the change below; this test is
	// about a list read before a change it has not heard of.
	eval[bool](b, `(window.__feedOff = true)`)
	b.signIn("alice", "#/p/shop/c/prod/k/api")
	b.waitText("1–1 of 1")

	// Changed elsewhere after the list was read: the delete is refused.
	b.api.mustDo(http.MethodPut, pathR("shop", "prod", "api", "stale"), `{"value":"two"}`, alice, http.StatusOK)
	b.click(`button[aria-label="Delete stale"]`)
	b.click(`dialog button[type=submit]`)
	b.waitText("Precondition failed: current version is 2")
	status, hdr, _ := b.api.do(http.MethodGet, pathR("shop", "prod", "api", "stale"), "", alice)
	require.Equal(t, http.StatusOK, status, "not deleted")
	etag2 := hdr.Get("ETag")

	deletes := func() []sentRequest {
		var dels []sentRequest
		for _, r := range b.sent() {
			if r.Method == http.MethodDelete {
				dels = append(dels, r)
			}
		}
		return dels
	}
	dels := deletes()
	require.Len(t, dels, 1)
	require.NotNil(t, dels[0].IfMatch, "the delete is conditional")
	assert.NotEqual(t, etag2, *dels[0].IfMatch, "on the version the list showed")
	assert.Equal(t, http.StatusPreconditionFailed, *dels[0].Status)

	// The list is read again; now the delete names the current tag.
	b.waitFor(`document.querySelector('td[data-label=Version]')?.textContent === '2'`)
	b.click(`button[aria-label="Delete stale"]`)
	b.click(`dialog button[type=submit]`)
	b.waitText(`Record “stale” deleted`)
	dels = deletes()
	require.Len(t, dels, 2)
	require.NotNil(t, dels[1].IfMatch)
	assert.Equal(t, etag2, *dels[1].IfMatch, "the tag the console forms from a list item is the record's ETag")
	assert.Equal(t, http.StatusNoContent, *dels[1].Status)
	status, _, env := b.api.do(http.MethodGet, pathR("shop", "prod", "api", "stale"), "", alice)
	wantError(t, "deleted", status, env, http.StatusNotFound, "RESOURCE_NOT_FOUND", "Resource not found")
}
