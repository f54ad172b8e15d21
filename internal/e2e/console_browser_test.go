package e2e_test

// The console in a real browser (docs/api.md#the-console): Debian's
// chromium, driven over the DevTools protocol by
// github.com/chromedp/chromedp, against hds.New on httptest mounted under
// /hds. The tests skip when no chromium is installed, except under
// HDS_REQUIRE_BROWSER=1 (CI). With HDS_CONSOLE_SCREENSHOTS=DIR they write
// PNGs of the main screens there (docs/console/ holds the committed ones).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
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

	mu         sync.Mutex
	exceptions []string // uncaught in the page
}

func exceptionDescription(ev runtime.EventExceptionThrown) string {
	if ex := ev.ExceptionDetails.Exception; ex != nil {
		return ex.Description
	}
	return ""
}

// startBrowser starts chromium (or skips) and returns a tab on a new
// server with the console, mounted under /hds, and opts.
func startBrowser(t *testing.T, opts ...hds.Option) *browser {
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
	c := newServer(t, memoryKind, append([]hds.Option{hds.WithConsole(true), hds.WithCredentialKey(testKey)}, opts...)...)
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
	// Any uncaught JavaScript exception fails the test at its end.
	thrown := chromedp.Events(ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range thrown {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.exceptions = append(b.exceptions, ev.ExceptionDetails.Text+" "+exceptionDescription(ev))
			b.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		assert.Empty(t, b.exceptions, "uncaught exceptions in the page")
	})
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
	eval[bool](b, `(document.getElementById('toasts').replaceChildren(), true)`)
	time.Sleep(300 * time.Millisecond) // let transitions settle
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	require.NoError(b.t, err)
	require.NoError(b.t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
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

	t.Run("create a record in the dialog", func(t *testing.T) {
		b.t = t
		b.button("New record")
		b.set(`dialog input[name=name]`, "greeting")
		b.set(`dialog select[name=type]`, "STRING")
		b.set(`dialog .value-slot textarea`, "hello")
		b.click(`dialog button[type=submit]`)
		b.waitText(`Record “greeting” created`)
		typ, value, _ := b.recordValue("greeting")
		assert.Equal(t, "STRING", typ)
		assert.Equal(t, `"hello"`, value)
	})

	// A record of each type, made through the API, edited in the
	// browser's typed editor.
	tok := b.api.token("alice")
	kpath := pathK("shop", "prod", "api")
	for _, tc := range []struct {
		name, typ, initial string
		edit               func()
		want               string
	}{
		{"s", "STRING", `"a"`, func() { b.set(`.value-slot textarea`, "line one\nline two") }, `"line one\nline two"`},
		{"i", "INTEGER", `1`, func() { b.set(`.value-slot input`, "9007199254740993") }, `9007199254740993`},
		{"f", "FLOAT", `1.5`, func() { b.set(`.value-slot input`, "-2.25e3") }, `-2250`},
		{"b", "BOOLEAN", `false`, func() { b.set(`.value-slot select`, "true") }, `true`},
		{"d", "DATE", `"2026-01-01"`, func() { b.set(`.value-slot input[type=date]`, "2026-11-24") }, `"2026-11-24"`},
		{"t", "TIME", `"08:00:00"`, func() { b.set(`.value-slot input[type=time]`, "13:45:30") }, `"13:45:30"`},
		{"dt", "DATETIME", `"2026-01-01T00:00:00Z"`, func() {
			b.set(`.value-slot input[type=datetime-local]`, "2026-11-24T10:20:30")
			b.set(`.value-slot input.offset`, "+01:00")
		}, `"2026-11-24T10:20:30+01:00"`},
		{"u", "UUID", `"00000000-0000-0000-0000-000000000000"`, func() {
			b.set(`.value-slot input`, "0190E7A4-1D2B-7C3D-8E4F-A1B2C3D4E5F6")
		}, `"0190e7a4-1d2b-7c3d-8e4f-a1b2c3d4e5f6"`},
		{"n", "STRING", `"soon null"`, func() { b.set(`select[name=type]`, "NULL") }, `null`},
		{"pw", "CREDENTIAL", `"old-secret"`, func() { b.set(`.value-slot input[type=password]`, "n3w-secret") }, `"n3w-secret"`},
		{"tags", "[]STRING", `["a"]`, func() {
			b.button("+ Add item")
			b.set(`.array-editor li:nth-child(2) input`, "b")
		}, `["a","b"]`},
		{"ports", "[]INTEGER", `[80,443]`, func() { b.click(`.array-editor li:first-child button`) }, `[443]`},
		{"flags", "[]BOOLEAN", `[true]`, func() { b.set(`.array-editor li select`, "false") }, `[false]`},
		{"days", "[]DATE", `[]`, func() {
			b.button("+ Add item")
			b.set(`.array-editor li input[type=date]`, "2026-12-24")
		}, `["2026-12-24"]`},
		{"keys", "[]CREDENTIAL", `["k1","k2"]`, func() {
			b.set(`.array-editor li:nth-child(1) input`, "k1b")
			b.set(`.array-editor li:nth-child(2) input`, "k2b")
		}, `["k1b","k2b"]`},
	} {
		t.Run("edit "+tc.typ, func(t *testing.T) {
			b.t = t
			b.api.addRecord(tok, kpath, tc.name, tc.typ, tc.initial)
			b.openRecord(tc.name)
			tc.edit()
			b.save(2)
			_, value, version := b.recordValue(tc.name)
			assert.Equal(t, tc.want, value)
			assert.Equal(t, 2, version)
		})
	}

	t.Run("a bad value shows the API's error", func(t *testing.T) {
		b.t = t
		b.openRecord("i")
		assert.Equal(t, "9007199254740993", eval[string](b, `document.querySelector('.value-slot input').value`),
			"an int64 beyond 2^53 is shown exactly")
		b.set(`.value-slot input`, "twelve")
		b.click(`section.editor button[type=submit]`)
		b.waitText("VALIDATION_ERROR")
		_, value, version := b.recordValue("i")
		assert.Equal(t, `9007199254740993`, value, "nothing changed")
		assert.Equal(t, 2, version)
		b.screenshot("record-error")
	})

	t.Run("reveal and copy a credential", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(b.base + "#/p/shop/c/prod/k/api"))
		b.set(`.filters input[type=search]`, "pw")
		b.waitText("1–1 of 1")
		assert.NotContains(t, eval[string](b, `document.body.innerText`), "n3w-secret", "masked")
		b.click(`button[aria-label="Reveal pw"]`)
		b.waitText("n3w-secret")
		b.click(`button[aria-label="Reveal pw"]`)
		b.run(chromedp.Poll[chromedp.Void](`!document.body.innerText.includes("n3w-secret")`, chromedp.WithPollingTimeout(5*time.Second)))
		b.click(`button[aria-label="Copy pw"]`)
		b.waitText("Copied to the clipboard")
		b.set(`.filters input[type=search]`, "")
		b.waitText("greeting")
		eval[bool](b, `(window.scrollTo(0, 0), true)`)
		b.click(`button[aria-label="Reveal keys"]`)
		b.waitText("k2b")
		b.screenshot("cluster")
	})

	t.Run("history and restore", func(t *testing.T) {
		b.t = t
		b.openRecord("s")
		b.waitText("v1")
		b.screenshot("record")
		b.click(`button[aria-label="Restore version 1"]`)
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog`)))
		b.screenshot("restore")
		b.click(`dialog button[type=submit]`)
		b.waitText("Version 1 restored as version 3")
		_, value, version := b.recordValue("s")
		assert.Equal(t, `"a"`, value)
		assert.Equal(t, 3, version)
	})

	t.Run("rename and delete", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(b.base + "#/p/shop"))
		b.createIn("collection", "tmp")
		b.run(chromedp.Navigate(b.base + "#/p/shop"))
		b.click(`button[aria-label="Rename tmp"]`)
		b.set(`dialog input[name=name]`, "prod")
		b.click(`dialog button[type=submit]`)
		b.waitText("RESOURCE_EXISTS") // shown in the dialog, which stays open
		b.set(`dialog input[name=name]`, "scratch")
		b.click(`dialog button[type=submit]`)
		b.waitText(`Renamed to “scratch”`)
		b.click(`button[aria-label="Delete scratch"]`)
		b.waitText("This deletes the collection and everything in it")
		b.click(`dialog button[type=submit]`)
		b.waitText(`Collection “scratch” deleted`)
		status, _, _ := b.api.do(http.MethodGet, pathC("shop", "scratch"), "", tok)
		assert.Equal(t, http.StatusNotFound, status)
		b.screenshot("collections")
	})

	t.Run("members", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(b.base + "#/p/shop/members"))
		b.waitText("owner")
		b.button("Add member")
		b.set(`dialog input[name=username]`, "carol")
		b.click(`dialog button[type=submit]`)
		b.run(chromedp.WaitVisible(chromedp.CSS(`dialog .dialog-error .alert`)))
		assert.Contains(t, b.text(`dialog .dialog-error .alert`), "404 RESOURCE_NOT_FOUND", "an unknown user")
		b.set(`dialog input[name=username]`, "bob")
		b.set(`dialog select[name=role]`, "editor")
		b.click(`dialog button[type=submit]`)
		b.waitText("bob added as editor")
		b.screenshot("members")
	})

	t.Run("tokens", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(b.base + "#/p/shop/tokens"))
		b.waitText("No API tokens yet")
		b.button("New token")
		b.set(`dialog input[name=name]`, "deploy bot")
		b.set(`dialog select[name=role]`, "reader")
		b.waitFor(`[...document.querySelectorAll('dialog select[name=collection] option')].some(o => o.value === 'prod')`)
		b.set(`dialog select[name=collection]`, "prod")
		b.click(`dialog button[type=submit]`)
		b.waitText("it is shown only once")
		tokenText := eval[string](b, `document.querySelector('input.token').value`)
		assert.Regexp(t, `^hds_[0-9A-Za-z]{40,}$`, tokenText)
		b.waitText("deploy bot")
		b.screenshot("tokens")
		b.button("Done")
		b.run(chromedp.WaitNotPresent(chromedp.CSS(`input.token`)))
	})

	t.Run("live change from another client", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(b.base + "#/p/shop/c/prod/k/api"))
		b.run(chromedp.Poll[chromedp.Void](`document.querySelector('.live')?.textContent === 'Live'`, chromedp.WithPollingTimeout(10*time.Second)))
		// bob, an editor since "members", writes from elsewhere.
		b.api.addRecord(b.api.token("bob"), kpath, "from-elsewhere", "STRING", `"hi"`)
		b.waitText("bob: record.create prod / api / from-elsewhere")
		b.waitText("from-elsewhere")
	})

	t.Run("audit", func(t *testing.T) {
		b.t = t
		b.run(chromedp.Navigate(b.base + "#/p/shop/audit"))
		b.waitText("record.create")
		b.screenshot("audit")
	})

	t.Run("paging", func(t *testing.T) {
		b.t = t
		for i := range 12 {
			b.api.addRecord(tok, kpath, fmt.Sprintf("zz%02d", i), "INTEGER", fmt.Sprint(i))
		}
		b.run(chromedp.Navigate(b.base + "#/p/shop/c/prod/k/api"))
		b.waitText("1–25 of ")
		b.button("Next →")
		b.waitText("zz11")
		b.waitText("26–")
		b.button("← Previous")
		b.waitText("1–25 of ")
	})

	t.Run("projects and phone size", func(t *testing.T) {
		b.t = t
		for _, p := range []string{"billing", "internal-tools", "website"} {
			b.api.mustDo(http.MethodPost, pathP(p), "", tok, http.StatusCreated)
		}
		b.run(chromedp.Navigate(b.base + "#/"))
		b.waitText("website")
		b.screenshot("projects")
		b.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		b.run(chromedp.Navigate(b.base + "#/p/shop/c/prod/k/api"))
		b.waitText("greeting")
		// docs/console/phone-cluster.png is TestConsoleBrowserSecondLook's, at 375 px.
		b.run(chromedp.EmulateViewport(1280, 800))
	})
}

// recordValue reads a record through the API, revealed, as raw JSON.
func (b *browser) recordValue(name string) (typ string, value string, version int) {
	b.t.Helper()
	env := b.api.mustDo(http.MethodGet, pathR("shop", "prod", "api", name)+"?reveal=true", "", b.api.token("alice"), http.StatusOK)
	var r struct {
		Type    string          `json:"type"`
		Value   json.RawMessage `json:"value"`
		Version int             `json:"version"`
	}
	env.decode(b.t, &r)
	return r.Type, string(r.Value), r.Version
}

// openRecord opens a record's page from the cluster's list.
func (b *browser) openRecord(name string) {
	b.t.Helper()
	b.run(chromedp.Navigate(b.base + "#/p/shop/c/prod/k/api/r/" + name))
	b.run(chromedp.WaitVisible(chromedp.CSS(`section.editor form`)))
}

// save clicks Save and waits for the toast of the new version.
func (b *browser) save(version int) {
	b.t.Helper()
	b.click(`section.editor button[type=submit]`)
	b.run(chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector('section.editor .card-head')?.innerText.includes('version %d')`, version),
		chromedp.WithPollingTimeout(10*time.Second)))
}
