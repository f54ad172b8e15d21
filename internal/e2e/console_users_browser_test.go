package e2e_test

// The console's user administration
// (docs/api.md#server-administrators-and-user-accounts-v12): a server
// administrator's Users page (list, search, add, make and unmake
// administrator, set a password, disable, enable, delete, each refusal
// shown as the API's message), "My account" for everyone (change my
// password), and the header from GET /api/v1/auth/me.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/store"
)

// rowButton clicks the button labelled label in the row of the user
// named name.
func (b *browser) rowButton(name, label string) {
	b.t.Helper()
	xp := fmt.Sprintf(`//tr[.//strong[normalize-space(text())=%q]]//button[normalize-space()=%q]`, name, label)
	b.run(chromedp.WaitVisible(xp), chromedp.Click(xp))
}

// dialogButton clicks the button labelled label in the open dialog.
func (b *browser) dialogButton(label string) {
	b.t.Helper()
	xp := fmt.Sprintf(`//dialog//button[normalize-space()=%q]`, label)
	b.run(chromedp.WaitVisible(xp), chromedp.Click(xp))
	b.run(chromedp.WaitNotPresent(chromedp.CSS(`dialog`)))
}

// userNow reads a user from the directory, polling until ok holds (the
// console's call may still be under way), for up to 5 s.
func (b *browser) userNow(name string, ok func(*store.User) bool) *store.User {
	b.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		u, err := b.api.users.FindUserByName(b.t.Context(), name)
		if err == nil && ok(u) {
			return u
		}
		if time.Now().After(deadline) {
			require.Fail(b.t, "user not as expected", "%s: %+v, %v", name, u, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestConsoleBrowserUsers(t *testing.T) {
	b := startBrowser(t)
	b.api.addAdmin("root")
	bob := b.api.token("bob")
	b.api.mustDo(http.MethodPost, pathP("bobs"), "", bob, http.StatusCreated)
	b.run(chromedp.Navigate(b.base))
	b.instrumentFetch()

	t.Run("administrator", func(t *testing.T) {
		b.t = t
		b.signIn("root", "#/")
		b.run(chromedp.WaitVisible(chromedp.CSS(`#who a.nav`)))
		assert.Contains(t, b.text(`#who a.user`), "root", "the header names who is logged in (from /auth/me)")
		assert.Contains(t, b.text(`#who a.user`), "admin", "and that it is an administrator")
		b.click(`#who a.nav`)
		b.waitText("Accounts of this server")
		for _, name := range []string{"alice", "bob", "root"} {
			b.waitText(name)
		}
		b.screenshot("users")

		b.button("Add user")
		b.set(`dialog input[name=username]`, "carol")
		b.set(`dialog input[name=password]`, "carol-password")
		b.dialogButton("Add")
		b.waitText("carol added")
		u := b.userNow("carol", func(u *store.User) bool { return true })
		assert.False(t, u.Admin, "carol is no administrator")
		b.api.login("carol", "carol-password")

		b.set(`input[type=search]`, "CAR")
		b.run(chromedp.Poll[chromedp.Void](`!document.querySelector('table.list').innerText.includes('alice')`, chromedp.WithPollingTimeout(5*time.Second)))
		assert.Contains(t, b.text(`table.list`), "carol", "the search keeps carol")
		b.set(`input[type=search]`, "")
		b.waitText("alice")

		b.rowButton("carol", "Make admin")
		b.waitText("carol is an administrator")
		b.userNow("carol", func(u *store.User) bool { return u.Admin })

		b.rowButton("carol", "Set password")
		b.set(`dialog input[name=password]`, "carol-new-password")
		b.dialogButton("Set password")
		b.waitText("Password of carol set")
		b.userNow("carol", func(u *store.User) bool { return u.SessionGeneration == 1 })
		b.api.login("carol", "carol-new-password")

		b.rowButton("carol", "Disable")
		b.dialogButton("Disable")
		b.waitText("carol disabled")
		b.userNow("carol", func(u *store.User) bool { return !u.Active })
		b.rowButton("carol", "Enable")
		b.waitText("carol enabled")
		b.userNow("carol", func(u *store.User) bool { return u.Active })

		// Refusals show the API's message.
		b.rowButton("bob", "Delete")
		b.dialogButton("Delete")
		b.waitText("the user owns 1 project: transfer or delete them first, or disable the user")
		b.userNow("bob", func(u *store.User) bool { return true })
		b.rowButton("carol", "Unmake admin")
		b.waitText("carol is no longer an administrator")
		b.rowButton("root", "Unmake admin")
		b.waitText(store.LastAdminRule)
		b.userNow("root", func(u *store.User) bool { return u.Admin })

		b.rowButton("carol", "Delete")
		b.dialogButton("Delete")
		b.waitText("carol deleted")
		_, err := b.api.users.FindUserByName(t.Context(), "carol")
		for deadline := time.Now().Add(5 * time.Second); err == nil && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			_, err = b.api.users.FindUserByName(t.Context(), "carol")
		}
		assert.ErrorIs(t, err, store.ErrNotFound, "carol was deleted")
	})

	t.Run("everyone: my account", func(t *testing.T) {
		b.t = t
		b.signIn("alice", "#/")
		b.run(chromedp.WaitVisible(chromedp.CSS(`#who a.user`)))
		assert.Equal(t, 0, eval[int](b, `document.querySelectorAll('#who a.nav').length`), "no Users link for a user who is no administrator")
		b.goTo("#/users")
		b.waitText("Only server administrators manage users.")
		b.click(`#who a.user`)
		b.waitText("Change my password")
		b.screenshot("account")
		b.set(`input[name=current_password]`, "alice-password")
		b.set(`input[name=new_password]`, "alice-new-password")
		b.button("Change password")
		b.waitText("Password changed")
		b.api.login("alice", "alice-new-password")
		b.api.loginFrom("", "alice", "alice-password").wantError(t, "the old password", http.StatusUnauthorized, "AUTHENTICATION_FAILED", "Invalid username or password")
		// The console goes on with the new session.
		b.goTo("#/")
		b.waitText("Projects")
		assert.NotContains(t, strings.Join(b.toasts(), "\n"), "Signed out")

		b.goTo("#/account")
		b.set(`input[name=current_password]`, "wrong")
		b.set(`input[name=new_password]`, "whatever")
		b.button("Change password")
		b.waitText("current_password is not the password of the account")
	})
}
