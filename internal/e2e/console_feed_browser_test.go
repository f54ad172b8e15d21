package e2e_test

// The console's change feed across an expired token
// (docs/api.md#authentication and
// docs/api.md#audit-log-and-change-feed): the server ends a stream when
// its token expires and refuses the expired token (401); the console renews
// the token and reopens the stream at once with Last-Event-ID, so that what
// happened meanwhile is shown, once, and nothing twice.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const feedLive = `document.querySelector('.live')?.textContent === 'Live'`

// startSharedShop starts a browser on a server where alice owns
// shop/prod/api and bob is an editor of shop, and returns alice's and
// bob's tokens and the cluster's path.
func startSharedShop(t *testing.T) (b *browser, alice, bob, kpath string) {
	b = startBrowser(t)
	alice = b.api.token("alice")
	b.api.tree(alice, "shop", "prod", "api")
	b.api.share(alice, "shop", "bob", "editor")
	return b, alice, b.api.token("bob"), pathK("shop", "prod", "api")
}

func TestConsoleBrowserFeedRenewsItsToken(t *testing.T) {
	b, alice, bob, kpath := startSharedShop(t)

	// The console's session starts with a token that expires in 3
	// seconds, as one does in a tab that slept past its renewal.
	short := hs256(t, with(claims(b.api.ids["alice"]), map[string]any{"exp": time.Now().Add(3 * time.Second).Unix()}))
	b.run(chromedp.Navigate(b.base))
	b.instrumentFetch()
	b.signInWith("alice", short, "#/p/shop/c/prod/k/api")
	b.waitFor(feedLive)

	b.api.addRecord(bob, kpath, "a1", "STRING", `"1"`)
	b.waitText("bob: record.create prod / api / a1")
	var audit listJSON[struct {
		Revision int64  `json:"revision"`
		Record   string `json:"record"`
	}]
	b.api.mustDo(http.MethodGet, pathP("shop")+"/audit?limit=1", "", alice, http.StatusOK).decode(t, &audit)
	require.Len(t, audit.Items, 1)
	require.Equal(t, "a1", audit.Items[0].Record)
	lastSeen := audit.Items[0].Revision

	// The token expires: the stream ends. A change made now reaches the
	// console through the reopened stream's Last-Event-ID.
	b.waitFor(`document.querySelector('.live')?.textContent !== 'Live'`)
	b.api.addRecord(bob, kpath, "b1", "STRING", `"2"`)
	b.waitFor(feedLive)
	b.waitText("bob: record.create prod / api / b1")
	b.api.addRecord(bob, kpath, "c1", "STRING", `"3"`)
	b.waitText("bob: record.create prod / api / c1")
	b.waitText("c1") // the list reloaded too

	var streams, refreshes []sentRequest
	for _, r := range b.sent() {
		switch {
		case strings.Contains(r.URL, "/events"):
			streams = append(streams, r)
		case strings.HasSuffix(r.URL, "/auth/refresh"):
			refreshes = append(refreshes, r)
		}
	}
	require.Len(t, refreshes, 1, "one renewal")
	assert.Equal(t, short, refreshes[0].Token, "of the expired token")
	require.GreaterOrEqual(t, len(streams), 3, "%+v", streams)
	assert.Equal(t, short, streams[0].Token)
	assert.Nil(t, streams[0].LastEventID, "the first stream starts with the next change")
	// The expired token is refused once; right after, the renewed token
	// reopens with the last event seen.
	refused := -1
	for i, s := range streams {
		if s.Status != nil && *s.Status == http.StatusUnauthorized {
			require.Equal(t, -1, refused, "refused once: %+v", streams)
			refused = i
		}
	}
	require.GreaterOrEqual(t, refused, 1, "the expired token was refused: %+v", streams)
	assert.Equal(t, short, streams[refused].Token)
	require.Greater(t, len(streams), refused+1)
	next := streams[refused+1]
	assert.NotEqual(t, short, next.Token, "reopened with the renewed token")
	require.NotNil(t, next.Status)
	assert.Equal(t, http.StatusOK, *next.Status)
	require.NotNil(t, next.LastEventID, "with Last-Event-ID")
	assert.Equal(t, strconv.FormatInt(lastSeen, 10), *next.LastEventID, "the revision of the last event shown")

	// Each change was shown once.
	count := map[string]int{}
	for _, s := range b.toasts() {
		count[s]++
	}
	for _, name := range []string{"a1", "b1", "c1"} {
		assert.Equal(t, 1, count["bob: record.create prod / api / "+name], "%s shown once: %v", name, count)
	}
	for s := range count {
		assert.NotContains(t, s, "Signed out", "the session went on")
	}
	assert.NotEqual(t, short, eval[string](b, `JSON.parse(sessionStorage.getItem('hds.session')).token`), "the session holds the renewed token")
}

func TestConsoleBrowserFeedFollowsARenewal(t *testing.T) {
	b, alice, bob, kpath := startSharedShop(t)

	// A session whose token the console renews 5 seconds after the page
	// loads (a minute before it expires, but not sooner than that).
	first := hs256(t, with(claims(b.api.ids["alice"]), map[string]any{"exp": time.Now().Add(65 * time.Second).Unix()}))
	sess, err := json.Marshal(map[string]any{"token": first, "user_id": b.api.ids["alice"], "username": "alice",
		"expires_at": time.Now().Add(65 * time.Second).UnixMilli()})
	require.NoError(t, err)
	q, _ := json.Marshal(string(sess))
	b.run(chromedp.Navigate(b.base))
	eval[bool](b, `(sessionStorage.setItem('hds.session', `+string(q)+`), location.hash = '#/p/shop/c/prod/k/api', true)`)
	b.run(chromedp.Reload())
	b.instrumentFetch()
	b.waitFor(feedLive)
	b.api.addRecord(bob, kpath, "a1", "STRING", `"1"`)
	b.waitText("bob: record.create prod / api / a1")
	var audit listJSON[struct {
		Revision int64 `json:"revision"`
	}]
	b.api.mustDo(http.MethodGet, pathP("shop")+"/audit?limit=1", "", alice, http.StatusOK).decode(t, &audit)
	require.Len(t, audit.Items, 1)

	// The renewal reopens the stream with the new token at once, from
	// the last event shown: the old one would end with its token.
	b.run(chromedp.Poll[chromedp.Void](`window.__sent.some(r => r.url.includes('/events') && r.token !== `+jsString(first)+` && r.status === 200)`,
		chromedp.WithPollingTimeout(15*time.Second)))
	b.waitFor(feedLive)
	b.api.addRecord(bob, kpath, "b1", "STRING", `"2"`)
	b.waitText("bob: record.create prod / api / b1")

	var streams []sentRequest
	for _, r := range b.sent() {
		if strings.Contains(r.URL, "/events") {
			streams = append(streams, r)
		}
	}
	require.Len(t, streams, 1, "one stream reopened, none refused: %+v", streams)
	assert.NotEqual(t, first, streams[0].Token)
	require.NotNil(t, streams[0].LastEventID)
	assert.Equal(t, strconv.FormatInt(audit.Items[0].Revision, 10), *streams[0].LastEventID, "from the last event shown")
	count := map[string]int{}
	for _, s := range b.toasts() {
		count[s]++
	}
	assert.Equal(t, 1, count["bob: record.create prod / api / a1"], "%v", count)
	assert.Equal(t, 1, count["bob: record.create prod / api / b1"], "%v", count)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
