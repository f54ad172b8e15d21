package e2e_test

// A console session whose token expired (a tab asleep past its renewal):
// an API call answered 401 renews the token once and is made again, and
// only a token that cannot be renewed ends the session
// (docs/api.md#authentication: refresh accepts an expired token within
// the refresh window).

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConsoleBrowserExpiredSession(t *testing.T) {
	b := startBrowser(t)
	alice := b.api.token("alice")
	b.api.mustDo(http.MethodPost, pathP("shop"), "", alice, http.StatusCreated)
	b.run(chromedp.Navigate(b.base))
	b.instrumentFetch()

	t.Run("renewed and asked again", func(t *testing.T) {
		b.t = t
		expired := hs256(t, with(claims(b.api.ids["alice"]), map[string]any{"exp": time.Now().Add(-time.Minute).Unix()}))
		b.signInWith("alice", expired, "#/")
		b.waitText("shop")
		// The page asks as it is drawn (twice here: the route and the
		// session changed); every call refused is renewed, by one refresh.
		refused, answered := map[string]int{}, map[string]int{}
		refreshes := 0
		for _, r := range b.sent() {
			if strings.HasSuffix(r.URL, "/auth/refresh") {
				refreshes++
				assert.Equal(t, expired, r.Token, "the expired token is renewed")
				continue
			}
			// The project list and who is logged in (the header asks
			// /auth/me first, so it is the call usually refused).
			u := strings.SplitN(r.URL, "?", 2)[0]
			if !strings.HasSuffix(u, "/api/v1/projects") && !strings.HasSuffix(u, "/api/v1/auth/me") {
				continue
			}
			require.NotNil(t, r.Status, "%+v", r)
			if r.Token == expired {
				refused[u]++
				assert.Equal(t, http.StatusUnauthorized, *r.Status)
			} else {
				answered[u]++
				assert.Equal(t, http.StatusOK, *r.Status)
			}
		}
		assert.Equal(t, 1, refreshes, "refresh is single-use: one at a time")
		assert.NotEmpty(t, refused, "a call was refused")
		for u, n := range refused {
			assert.Equal(t, n, answered[u], "each refused call was made again with the new token: %s", u)
		}
		assert.NotContains(t, strings.Join(b.toasts(), "\n"), "Signed out")
	})

	t.Run("not renewable: signed out with the reason", func(t *testing.T) {
		b.t = t
		forged := sign(t, claims(b.api.ids["alice"]), jwt.SigningMethodHS256, []byte(strings.Repeat("x", 32)))
		b.signInWith("alice", forged, "#/p/shop")
		b.run(chromedp.WaitVisible(chromedp.CSS(`form.login`)))
		b.waitText("Signed out: Invalid token signature")
		assert.Equal(t, "", eval[string](b, `sessionStorage.getItem('hds.session') || ''`), "the session is gone")
	})
}
