package e2e_test

// The console papercuts of a second look (docs/api.md#the-console): a
// history that counts its versions in words; one action to show a
// credential's value; the audit log naming API tokens by name; a phone's
// screen used for records and audit entries, with the filters folded
// away; and the ownership of a project transferred from its members page,
// after a confirmation.

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConsoleBrowserSecondLook(t *testing.T) {
	b := startBrowser(t)
	alice := b.api.token("alice")
	b.api.tree(alice, "shop", "prod", "api")
	kpath := pathK("shop", "prod", "api")
	b.api.share(alice, "shop", "bob", "editor")
	b.api.addUser("rita", "rita-password")
	b.api.share(alice, "shop", "rita", "reader")
	b.api.addRecord(alice, kpath, "pw", "CREDENTIAL", `"s3cret"`)
	b.api.addRecord(alice, kpath, "greeting", "STRING", `"hello"`)
	b.run(chromedp.Navigate(b.base))

	t.Run("history counts its versions in words", func(t *testing.T) {
		b.t = t
		b.signIn("alice", "#/p/shop/c/prod/k/api/r/greeting")
		b.waitFor(`document.querySelectorAll('ol.versions li').length === 1`)
		assert.Equal(t, "1 version", b.text(`section.history .list-status`))
		b.api.mustDo(http.MethodPut, pathR("shop", "prod", "api", "greeting"), `{"value":"hi"}`, alice, http.StatusOK)
		b.goTo("#/p/shop/c/prod/k/api/r/greeting")
		b.waitFor(`document.querySelectorAll('ol.versions li').length === 2`)
		assert.Equal(t, "2 versions", b.text(`section.history .list-status`))
	})

	t.Run("one action shows a credential's value", func(t *testing.T) {
		for _, who := range []string{"alice", "rita"} { // an owner who may edit, a reader who may not
			b.t = t
			b.signIn(who, "#/p/shop/c/prod/k/api/r/pw")
			b.run(chromedp.WaitVisible(chromedp.CSS(`section.editor .value-slot input`)))
			shows := func() []string {
				return evalJSON[[]string](b, `[...document.querySelectorAll('section.editor button')].map(x => x.textContent.trim())
					.filter(x => /show|reveal|hide/i.test(x))`)
			}
			assert.Equal(t, []string{"Show value"}, shows(), "%s: one action to show the value", who)
			assert.Equal(t, "", eval[string](b, `document.querySelector('section.editor .value-slot input').value`), "%s: masked", who)
			b.button("Show value")
			b.waitFor(`document.querySelector('section.editor .value-slot input')?.value === 's3cret'`)
			assert.Equal(t, "text", eval[string](b, `document.querySelector('section.editor .value-slot input').type`), "%s: shown in plain text", who)
			assert.Equal(t, []string{"Hide value"}, shows(), who)
			b.button("Hide value")
			b.waitFor(`document.querySelector('section.editor .value-slot input')?.type === 'password'`)
			assert.Equal(t, []string{"Show value"}, shows(), who)
		}

		// What an editor types is shown by the same action, and nothing
		// typed is lost to a reveal.
		b.signIn("alice", "#/p/shop/c/prod/k/api/r/pw")
		b.run(chromedp.WaitVisible(chromedp.CSS(`section.editor .value-slot input`)))
		b.set(`section.editor .value-slot input`, "typed-now")
		b.button("Show value")
		b.waitFor(`document.querySelector('section.editor .value-slot input')?.type === 'text'`)
		assert.Equal(t, "typed-now", eval[string](b, `document.querySelector('section.editor .value-slot input').value`))
		b.save(2)
		var rec recordJSON
		b.api.mustDo(http.MethodGet, pathR("shop", "prod", "api", "pw")+"?reveal=true", "", alice, http.StatusOK).decode(t, &rec)
		assert.Equal(t, `"typed-now"`, string(rec.Value))
	})

	t.Run("the audit log names API tokens", func(t *testing.T) {
		b.t = t
		deploy := b.api.apiToken(alice, "shop", `{"name":"deploy bot","role":"editor"}`)
		ci := b.api.apiToken(alice, "shop", `{"name":"ci job","role":"editor"}`)
		b.api.addRecord(ci.Token, kpath, "from-ci", "INTEGER", "1")
		b.api.mustDo(http.MethodDelete, pathP("shop")+"/tokens/"+ci.ID, "", alice, http.StatusNoContent)
		temp := b.api.apiToken(alice, "shop", `{"name":"temp","role":"viewer"}`)
		b.api.mustDo(http.MethodDelete, pathP("shop")+"/tokens/"+temp.ID, "", alice, http.StatusNoContent)

		b.signIn("alice", "#/p/shop/audit")
		const rows = `[...document.querySelectorAll('table.list tbody tr')].filter(r => /token\./.test(r.textContent))
			.map(r => r.querySelector('td[data-label=Action]').textContent + ' ' + r.querySelector('td[data-label=What]').textContent)`
		b.waitFor(`(() => { const w = ` + rows + `; return w.length === 5 && w.every(x => !x.includes('…')); })()`)
		got := evalJSON[[]string](b, rows)
		want := []string{
			"token.delete a deleted token", // it never wrote: nothing names it
			"token.create a deleted token",
			"token.delete token “ci job” (deleted)",
			"token.create token “ci job” (deleted)",
			"token.create token “deploy bot”",
		}
		assert.Equal(t, want, got, "each token by its name, a deleted one's too when an entry it wrote names it")
		for _, id := range []string{deploy.ID, ci.ID, temp.ID} {
			assert.NotContains(t, eval[string](b, `document.querySelector('table.list tbody').innerText`), id, "no token id is read where a name would be")
		}
	})

	t.Run("a phone shows records and audit entries compactly", func(t *testing.T) {
		b.t = t
		for i := range 12 {
			b.api.addRecord(alice, kpath, fmt.Sprintf("r%02d", i), "STRING", fmt.Sprintf(`"value %d"`, i))
		}
		b.run(chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
		defer b.run(chromedp.EmulateViewport(1280, 800))
		b.signIn("alice", "#/p/shop/c/prod/k/api")
		b.waitText("1–15 of 15")
		b.waitFor(`!document.querySelector('.listview.loading')`)
		// Whole rows on the first screen, under the tabs and the filters.
		visible := `[...document.querySelectorAll('table.list tbody tr')].filter(r => r.getBoundingClientRect().bottom <= window.innerHeight).length`
		// The rows are laid out anew for the phone's viewport, which a
		// loaded machine may not have done yet: give the layout up to
		// 10 s to settle before counting (the full suite once counted 0).
		b.settle(visible + ` >= 5`)
		assert.GreaterOrEqual(t, eval[int](b, visible), 5, "records on a phone's first screen")
		b.screenshot("phone-cluster")
		assert.False(t, eval[bool](b, `!!document.querySelector('select[aria-label=Type]')?.checkVisibility()`), "the filters are folded away")
		b.button("Filters")
		b.run(chromedp.WaitVisible(chromedp.CSS(`select[aria-label=Type]`)))
		b.set(`select[aria-label=Type]`, "CREDENTIAL")
		b.waitText("1–1 of 1")
		b.button("Filters (1)") // folded again, counting what filters
		b.run(chromedp.WaitNotVisible(chromedp.CSS(`select[aria-label=Type]`)))

		b.goTo("#/p/shop/audit")
		b.waitFor(`document.querySelectorAll('table.list tbody td[data-label=Action]').length > 10 && !document.querySelector('.listview.loading')`)
		// Each entry takes at most two lines: its cells, grouped where they
		// overlap vertically, make two lines at most.
		lines := evalJSON[[]int](b, `[...document.querySelectorAll('table.list tbody tr')].map(r => {
			const boxes = [...r.querySelectorAll('td')].filter(td => td.checkVisibility()).map(td => td.getBoundingClientRect()).sort((a, c) => a.top - c.top);
			const lines = [];
			for (const x of boxes) {
				const last = lines[lines.length - 1];
				if (last && x.top < last.bottom - 2) last.bottom = Math.max(last.bottom, x.bottom);
				else lines.push({ bottom: x.bottom });
			}
			return lines.length;
		})`)
		require.NotEmpty(t, lines)
		for i, n := range lines {
			assert.LessOrEqual(t, n, 2, "audit entry %d: lines", i)
		}
		b.settle(visible + ` >= 6`)
		assert.GreaterOrEqual(t, eval[int](b, visible), 6, "audit entries on a phone's first screen")
		b.screenshot("phone-audit")
	})
	t.Run("the owner transfers the project, after a confirmation", func(t *testing.T) {
		b.t = t
		b.signIn("bob", "#/p/shop/members")
		b.waitText("rita")
		assert.False(t, b.hasButton("Transfer ownership"), "an editor may not transfer the project")

		b.signIn("alice", "#/p/shop/members")
		b.waitText("rita")
		b.button("Transfer ownership")
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog input[name=username]`)))
		b.waitFor(`document.querySelectorAll('dialog datalist option').length === 2`)
		assert.Equal(t, []string{"bob", "rita"}, evalJSON[[]string](b, `[...document.querySelectorAll('dialog datalist option')].map(o => o.value).sort()`),
			"the members are offered")
		b.set(`dialog input[name=username]`, "nobody")
		b.click(`dialog button[type=submit]`)
		b.waitText("Make nobody the owner of “shop”?")
		b.click(`dialog button[type=submit]`)
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog .dialog-error .alert`)))
		assert.Contains(t, b.text(`dialog .dialog-error .alert`), "404 RESOURCE_NOT_FOUND", "an unknown user, said in the dialog")
		b.button("Cancel")
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		var p struct {
			OwnerID string `json:"owner_id"`
		}
		b.api.mustDo(http.MethodGet, pathP("shop"), "", alice, http.StatusOK).decode(t, &p)
		assert.Equal(t, b.api.ids["alice"], p.OwnerID, "an unknown user: nothing changed")

		b.button("Transfer ownership")
		b.set(`dialog input[name=username]`, "bob")
		b.click(`dialog button[type=submit]`)
		b.waitText("Make bob the owner of “shop”?")
		b.screenshot("transfer")
		b.button("Cancel")
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
		b.api.mustDo(http.MethodGet, pathP("shop"), "", alice, http.StatusOK).decode(t, &p)
		assert.Equal(t, b.api.ids["alice"], p.OwnerID, "not confirmed: nothing changed")

		b.button("Transfer ownership")
		b.set(`dialog input[name=username]`, "bob")
		b.click(`dialog button[type=submit]`)
		b.waitText("Make bob the owner of “shop”?")
		assert.Equal(t, "Transfer ownership", b.text(`dialog button[type=submit]`))
		b.click(`dialog button[type=submit]`)
		b.waitText("bob is now the owner of “shop”")
		b.api.mustDo(http.MethodGet, pathP("shop"), "", alice, http.StatusOK).decode(t, &p)
		assert.Equal(t, b.api.ids["bob"], p.OwnerID, "bob owns the project")
		b.waitFor(`document.querySelector('.projectbar .role')?.textContent === 'admin'`)
		assert.False(t, b.hasButton("Transfer ownership"), "alice, an admin now, may not transfer it again")

		// Transferred elsewhere: the old owner's page follows at once.
		b.signIn("bob", "#/p/shop/members")
		b.waitFor(`document.querySelector('.projectbar .role')?.textContent === 'owner' && document.querySelector('.live')?.textContent === 'Live'`)
		assert.True(t, b.hasButton("Transfer ownership"))
		b.api.mustDo(http.MethodPut, pathP("shop")+"/owner", `{"username":"alice"}`, b.api.token("bob"), http.StatusOK)
		b.waitFor(`document.querySelector('.projectbar .role')?.textContent === 'admin'`)
		assert.False(t, b.hasButton("Transfer ownership"), "bob, an admin now")
	})
}

// settle waits up to 10 s for expr to hold, without failing when it does
// not: the assertion after it says what was wrong.
func (b *browser) settle(expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	_ = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(10*time.Second)))
}
