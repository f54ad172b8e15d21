package hds_test

// The console in a real browser (API.md section 19): Debian's chromium,
// driven over the DevTools protocol by github.com/chromedp/chromedp,
// against hds.New on httptest mounted under /hds. The tests skip when no
// chromium is installed, except under HDS_REQUIRE_BROWSER=1 (CI). With
// HDS_CONSOLE_SCREENSHOTS=DIR they write PNGs of the main screens there
// (docs/console/ holds the committed ones).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

// browser is one tab of the shared test browser, with the server it
// talks to.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // the console's URL, ending in /console/
	api  *client
}

// startBrowser starts chromium (or skips) and returns a tab on a new
// server with the console, mounted under /hds.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		if os.Getenv("HDS_REQUIRE_BROWSER") == "1" {
			t.Fatal("HDS_REQUIRE_BROWSER=1 but no chromium is installed")
		}
		t.Skip("no chromium installed (set HDS_REQUIRE_BROWSER=1 to make this a failure)")
	}
	c := newServer(t, memoryKind, hds.WithConsole(true), hds.WithCredentialKey(testKey))
	srv := mounted(c.h)
	t.Cleanup(srv.Close)

	// These flags keep chromium from reaching out to the network (which
	// is closed here: connections would be refused and slow it down).
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800))
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, base: srv.URL + "/hds/console/", api: c}
	// The first action starts the browser and binds it to its context:
	// ctx itself, not one of run's short-lived children.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)), "start chromium")
	return b
}

// run runs actions with a time limit, failing the test on error.
func (b *browser) run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		b.t.Fatalf("browser: %v\npage text:\n%s", err, text)
	}
}

// eval evaluates a JavaScript expression and returns its value.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(b.t, err, "evaluate %s", expr)
	return v
}

// waitText waits until the page shows s.
func (b *browser) waitText(s string) {
	b.t.Helper()
	q, _ := json.Marshal(s)
	b.run(chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.body.innerText.includes(%s)`, q), chromedp.WithPollingTimeout(10*time.Second)))
}

// text returns the text of the first element matching sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(b.t, err, "text of %s", sel)
	return s
}

// set gives the input matching sel a value and fires input and change,
// as a person's editing would.
func (b *browser) set(sel, value string) {
	b.t.Helper()
	qs, _ := json.Marshal(sel)
	qv, _ := json.Marshal(value)
	b.run(chromedp.WaitVisible(chromedp.CSS(sel)))
	eval[bool](b, fmt.Sprintf(`(() => {
		const el = document.querySelector(%s);
		el.focus();
		el.value = %s;
		el.dispatchEvent(new Event('input', {bubbles: true}));
		el.dispatchEvent(new Event('change', {bubbles: true}));
		return true;
	})()`, qs, qv))
}

// click clicks the element matching the CSS selector.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.run(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// button clicks the visible button whose text is label.
func (b *browser) button(label string) {
	b.t.Helper()
	xp := fmt.Sprintf(`//button[normalize-space()=%q]`, label)
	b.run(chromedp.WaitVisible(xp), chromedp.Click(xp))
}

// screenshot writes the viewport to $HDS_CONSOLE_SCREENSHOTS/name.png.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	dir := os.Getenv("HDS_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	time.Sleep(700 * time.Millisecond) // let toasts and transitions settle
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	require.NoError(b.t, err)
	require.NoError(b.t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

// login logs alice in through the form.
func (b *browser) login() {
	b.t.Helper()
	b.run(chromedp.Navigate(b.base), chromedp.WaitVisible(chromedp.CSS(`form.login`)))
	b.set(`input[name=username]`, "alice")
	b.set(`input[name=password]`, "alice-password")
	b.click(`form.login button[type=submit]`)
	b.waitText("New project")
}

// createIn clicks the "New <kind>" button, names it and waits for its page.
func (b *browser) createIn(kind, name string) {
	b.t.Helper()
	b.button("New " + kind)
	b.set(`dialog input[name=name]`, name)
	b.run(chromedp.SendKeys(chromedp.CSS(`dialog input[name=name]`), "\r"))
	b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
}

func TestConsoleBrowser(t *testing.T) {
	b := startBrowser(t)

	t.Run("login", func(t *testing.T) {
		b.t = t
		// /hds/console redirects to /hds/console/ under the prefix.
		b.run(chromedp.Navigate(strings.TrimSuffix(b.base, "/")), chromedp.WaitVisible(chromedp.CSS(`form.login`)))
		b.screenshot("login")
		b.set(`input[name=username]`, "alice")
		b.set(`input[name=password]`, "wrong")
		b.click(`form.login button[type=submit]`)
		b.waitText("Invalid username or password")
		b.set(`input[name=password]`, "alice-password")
		b.click(`form.login button[type=submit]`)
		b.waitText("New project")
		stored := eval[string](b, `document.cookie + '|' + (sessionStorage.getItem('hds.session') ? 'session' : '')`)
		assert.Equal(t, "|session", stored, "the token is in sessionStorage, not a cookie")
	})

	t.Run("four levels", func(t *testing.T) {
		b.t = t
		b.createIn("project", "shop")
		b.waitText("No collections yet")
		b.createIn("collection", "prod")
		b.waitText("No clusters yet")
		b.createIn("cluster", "api")
		b.waitText("No records yet")
		status, _, _ := b.api.do(http.MethodGet, pathK("shop", "prod", "api"), "", b.api.token("alice"))
		assert.Equal(t, http.StatusOK, status, "the cluster exists")
	})
}
