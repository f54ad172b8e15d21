package e2e_test

// The console's Webhooks tab (docs/api.md#webhooks): an admin creates
// a webhook (its secret shown once, gone on reload), pings it, reads the
// delivery succeed and deletes it; an editor has no such tab, nor has
// anyone when the server has webhooks off.

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hds-go/hds"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// webhooksTab is a JavaScript expression: whether the project bar shows
// a Webhooks tab.
const webhooksTab = `[...document.querySelectorAll('nav.tabs a')].some(a => a.textContent === 'Webhooks' && !a.hidden)`

func TestConsoleBrowserWebhooks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b := startBrowser(t, hds.WithCredentialKey(testKey), hds.WithWebhooks(hds.Webhooks{Enabled: true, AllowPrivateAddresses: true}), hds.WithShutdown(ctx))
	alice := b.api.token("alice")
	b.api.tree(alice, "web", "prod", "db")
	b.api.share(alice, "web", "bob", "editor")
	rc := newReceiver(t, nil)
	target := rc.URL + "/hook"

	var secret, id string
	t.Run("create: the secret is shown once", func(t *testing.T) {
		b.t = t
		b.signIn("alice", "#/p/web")
		b.waitFor(webhooksTab)
		b.run(chromedp.Click(`//nav//a[normalize-space()="Webhooks"]`))
		b.waitText("No webhooks yet.")
		b.button("New webhook")
		b.set(`dialog input[name=url]`, target)
		eval[bool](b, `(() => {
			for (const o of document.querySelector('dialog select[name=actions]').options) o.selected = ['record.create', 'record.update'].includes(o.value);
			return true;
		})()`)
		b.waitFor(`!!document.querySelector('dialog select[name=collection] option[value=prod]')`)
		b.set(`dialog select[name=collection]`, "prod")
		b.waitFor(`!!document.querySelector('dialog select[name=cluster] option[value=db]')`)
		b.set(`dialog select[name=cluster]`, "db")
		b.dialogButton("Create webhook")
		b.waitText("it is shown only now, never again")
		secret = eval[string](b, `document.querySelector('input[aria-label="Webhook secret"]').value`)
		require.NotEmpty(t, secret, "the secret made by the server")
		assert.True(t, b.hasButton("Copy"), "a copy button beside it")
		b.waitText("record.create, record.update")
		assert.Contains(t, b.text(`table.list tbody`), "prod / db", "the scope picked")
		b.screenshot("webhooks")

		var page struct {
			Items []webhookJSON `json:"items"`
		}
		b.api.mustDo("GET", pathP("web")+"/webhooks", "", alice, http.StatusOK).decode(t, &page)
		require.Len(t, page.Items, 1)
		w := page.Items[0]
		id = w.ID
		assert.Equal(t, target, w.URL)
		assert.Equal(t, []string{"record.create", "record.update"}, w.Actions)
		assert.Equal(t, "prod", *w.Collection)
		assert.Equal(t, "db", *w.Cluster)

		b.run(chromedp.Reload())
		b.waitText(target)
		assert.False(t, eval[bool](b, fmt.Sprintf(`document.documentElement.outerHTML.includes(%q) ||
			[...document.querySelectorAll('input')].some(i => i.value === %q)`, secret, secret)), "the secret is gone after a reload")
		assert.False(t, b.has(`input[aria-label="Webhook secret"]`))
	})

	t.Run("ping reaches the receiver and its delivery shows succeeded", func(t *testing.T) {
		b.t = t
		b.rowButton(target, "Ping")
		req := rc.next(t, "ping")
		assert.Equal(t, "ping", req.header.Get("X-Hds-Event"))
		verifySignature(t, "ping", req, secret) // the secret shown is the one signing
		b.api.waitDeliveries(t, alice, "web", id, func(ds []deliveryJSON) bool { return len(ds) == 1 && ds[0].Status == "succeeded" })
		b.button("Refresh")
		b.waitFor(`[...document.querySelectorAll('section.deliveries tbody tr')].some(tr => tr.innerText.includes('ping') && tr.innerText.includes('succeeded'))`)
		row := evalJSON[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('section.deliveries tbody tr:first-child td')]
			.map(td => [td.dataset.label, td.textContent]))`)
		assert.Equal(t, "ping", row["Action"])
		assert.Equal(t, "succeeded", row["Status"])
		assert.Equal(t, "1", row["Attempts"])
		assert.Equal(t, "200", row["Last code"])
		assert.Equal(t, "—", row["Last error"])
		assert.Equal(t, "—", row["Next attempt"])
		b.screenshot("webhook-deliveries")
	})

	t.Run("delete removes it", func(t *testing.T) {
		b.t = t
		b.rowButton(target, "Delete")
		b.dialogButton("Delete")
		b.waitText("No webhooks yet.")
		assert.False(t, b.has(`section.deliveries`), "its deliveries go with it")
		b.api.mustDo("GET", pathP("web")+"/webhooks/"+id, "", alice, http.StatusNotFound)
	})

	t.Run("an editor has no Webhooks tab", func(t *testing.T) {
		b.t = t
		b.signIn("bob", "#/p/web")
		b.waitFor(`document.querySelector('.badge.role')?.textContent === 'editor' && !!document.querySelector('nav.tabs')`)
		assert.False(t, b.hasButton("Webhooks"))
	})
}

func TestConsoleBrowserWebhooksOff(t *testing.T) {
	b := startBrowser(t) // webhooks off, as the library has them by default
	alice := b.api.token("alice")
	b.api.mustDo("POST", pathP("web"), "", alice, http.StatusCreated)
	b.run(chromedp.Navigate(b.base))
	b.instrumentFetch()
	b.signIn("alice", "#/p/web")
	// Once the console has asked and had 404, the tab stays hidden.
	b.waitFor(`window.__sent.some(e => e.url.includes('/webhooks') && e.status === 404) && !!document.querySelector('nav.tabs a[href$="/tokens"]')`)
	assert.False(t, eval[bool](b, webhooksTab), "no Webhooks tab")
}
