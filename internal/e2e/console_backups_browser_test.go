package e2e_test

// The console's Backups page (docs/api.md#backups-v13): for a server
// administrator of a server that serves the backup routes (the standalone
// server's, package internal/backups, on hds.WithAdminRoutes): list, make
// one now, download when the server serves downloads, delete; the header
// links to it only there; others are told it is not theirs.

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/backups"
	"github.com/hds-go/hds/store/sqlite"
)

// backupsDir returns the backups of a new SQLite database.
func backupsDir(t *testing.T, allowDownload bool) *backups.Dir {
	t.Helper()
	lite, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hds.db"))
	require.NoError(t, err)
	t.Cleanup(func() { lite.Close() })
	return &backups.Dir{Source: lite, Dir: filepath.Join(t.TempDir(), "backups"), Keep: 7, AllowDownload: allowDownload}
}

// backupNames polls the directory until it holds n backups and returns
// their names, newest first.
func backupNames(t *testing.T, d *backups.Dir, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		items, err := d.List()
		require.NoError(t, err)
		if len(items) == n {
			var names []string
			for _, it := range items {
				names = append(names, it.Name)
			}
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backups, want %d", len(items), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// backupsLinkShown is true once the header shows its Backups link.
const backupsLinkShown = `[...document.querySelectorAll('#who a.nav')].some(a => a.textContent === 'Backups' && !a.hidden)`

func TestConsoleBrowserBackups(t *testing.T) {
	t.Run("downloads served", func(t *testing.T) {
		d := backupsDir(t, true)
		b := startBrowser(t, hds.WithAdminRoutes(d.Routes(nil)...))
		b.api.addAdmin("root")
		b.api.token("bob")
		b.run(chromedp.Navigate(b.base))
		b.instrumentFetch()
		b.signIn("root", "#/")
		b.waitFor(backupsLinkShown)
		b.run(chromedp.Click(`//a[normalize-space()='Backups']`))
		b.waitText("No backups yet.")
		b.waitText("keys.json is never in a backup")

		b.button("Make a backup now")
		name := backupNames(t, d, 1)[0]
		b.waitText("Backup " + name + " made")
		b.waitText(name)
		b.waitFor(`[...document.querySelectorAll('button')].some(e => e.textContent.trim() === 'Download')`)
		assert.True(t, eval[bool](b, `document.getElementById('backups-download-note').hidden`), "no note when downloads are served")
		b.screenshot("backups")

		b.rowButton(name, "Download")
		b.waitText("Backup " + name + " downloaded")
		got := false
		for _, r := range b.sent() {
			u, err := url.Parse(r.URL)
			require.NoError(t, err)
			if r.Method == "GET" && strings.HasSuffix(u.Path, "/api/v1/backups/"+name) && r.Status != nil && *r.Status == 200 {
				got = true
			}
		}
		assert.True(t, got, "the console fetched the backup's file: %+v", b.sent())

		b.rowButton(name, "Delete")
		b.dialogButton("Delete")
		b.waitText(name + " deleted")
		backupNames(t, d, 0)
		b.waitText("No backups yet.")

		// Not an administrator: no link, and the page says why.
		b.signIn("bob", "#/backups")
		b.waitText("Only server administrators manage backups.")
		assert.Equal(t, 0, eval[int](b, `document.querySelectorAll('#who a.nav').length`), "no administrator links for bob")
	})

	t.Run("downloads not served", func(t *testing.T) {
		d := backupsDir(t, false)
		b := startBrowser(t, hds.WithAdminRoutes(d.Routes(nil)...))
		b.api.addAdmin("root")
		b.run(chromedp.Navigate(b.base))
		b.signIn("root", "#/backups")
		b.waitText("No backups yet.")
		b.button("Make a backup now")
		name := backupNames(t, d, 1)[0]
		b.waitText(name)
		b.waitFor(`!document.getElementById('backups-download-note').hidden`)
		b.waitText("Downloads are off on this server (backups.allow_download is false)")
		assert.False(t, b.hasButton("Download"), "no Download button")
		assert.True(t, b.hasButton("Delete"), "Delete stays")
	})

	t.Run("no backup routes", func(t *testing.T) {
		b := startBrowser(t)
		b.api.addAdmin("root")
		b.run(chromedp.Navigate(b.base))
		b.signIn("root", "#/")
		b.run(chromedp.WaitVisible(chromedp.CSS(`#who a.nav`)))
		b.signIn("root", "#/backups")
		b.waitText("This server keeps no backups")
		assert.False(t, eval[bool](b, backupsLinkShown), "no Backups link where the routes are not served")
		assert.False(t, b.hasButton("Make a backup now"), fmt.Sprint("nothing to make"))
	})
}
