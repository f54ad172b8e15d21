package handler

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/store"
)

// User administration
// (docs/api.md#server-administrators-and-user-accounts-v12): GET
// /api/v1/auth/me for every user, the /api/v1/users routes for server
// administrators, and PUT P/owner. The rules of the directory (the last
// administrator, owners that cannot be deleted, sessions that end) are the
// store's; these handlers check the caller, decode and validate, and write
// the audit log lines of user changes.

// userOut is a user as the /api/v1/users routes show it.
type userOut struct {
	ID        string `json:"id"`
	Username  string `json:"username"`
	Admin     bool   `json:"admin"`
	Disabled  bool   `json:"disabled"`
	CreatedAt string `json:"created_at"`
}

func userJSON(u *store.User) userOut {
	return userOut{u.ID, u.Username, u.Admin, !u.Active, formatTime(u.CreatedAt)}
}

// meOut is the answer of GET /api/v1/auth/me.
type meOut struct {
	ID        string `json:"id"`
	Username  string `json:"username"`
	Admin     bool   `json:"admin"`
	CreatedAt string `json:"created_at"`
}

// handleMe serves GET /api/v1/auth/me: the user the token names, as
// authentication found it on this request. Like logout, it needs a token
// even when authentication is not required; API tokens are refused (403,
// usersOnly).
func handleMe() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		u := auth.UserFrom(r.Context())
		if u == nil || auth.ClaimsFrom(r.Context()) == nil {
			envelope.Error(w, r, auth.ErrNoToken)
			return
		}
		envelope.OK(w, http.StatusOK, meOut{u.ID, u.Username, u.Admin, formatTime(u.CreatedAt)}, "OK")
	}
}

// adminOnly refuses, with 403, every caller of h but a server
// administrator: API tokens, the anonymous user and users who are not
// administrators (as authentication read them on this request, so a
// demotion holds from the next request on). It runs before the body and
// the query are read, so a refused caller learns nothing else.
func adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := auth.UserFrom(r.Context()); u == nil || !u.Admin || auth.APITokenFrom(r.Context()) != nil {
			envelope.Error(w, r, store.ErrPermissionDenied)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// userAdmin serves the /api/v1/users routes.
type userAdmin struct {
	users   store.UserDirectory
	cursors cursors
	// logger receives the audit lines of user changes; nil writes none.
	logger *slog.Logger
}

// audit writes the log line of a user change (slog message "audit", as
// the project audit log's lines): the action, who made it, and the
// username changed; never a password.
func (a userAdmin) audit(ctx context.Context, r *http.Request, action, target string, extra ...slog.Attr) {
	if a.logger == nil {
		return
	}
	u := auth.UserFrom(r.Context())
	attrs := append([]slog.Attr{
		slog.String("action", action), slog.String("actor", u.ID), slog.String("actor_name", u.Username),
		slog.String("target", target), slog.String("request_id", requestID(r)),
	}, extra...)
	a.logger.LogAttrs(ctx, slog.LevelInfo, "audit", attrs...)
}

// handleList serves GET /api/v1/users, a list of
// docs/api.md#5-list-queries: limit, offset, cursor, count, search (a
// substring of the username, as the name search) and sortBy (name: the
// username, the default; id; created_at; updated_at) with sortOrder.
func (a userAdmin) handleList() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		q, err := parseListQuery(query, containerSortFields)
		var lc *listCursor
		if err == nil {
			lc, err = a.cursors.open(query, &q, []string{"users"})
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		// One more than the page, to know whether a next one exists;
		// after a cursor, every match, the page found below.
		sq := q
		if sq.After != nil {
			sq.Limit, sq.Offset, sq.After = 0, 0, nil
		} else {
			sq.Limit++
		}
		items, total, err := a.users.ListUsers(r.Context(), sq)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		items = resumeAfter(items, q, func(u *store.User) bool { return store.UserAfter(u, *q.After, q) })
		streamPage(w, r, total, q, store.Items(items), func(out *stream, u *store.User) error {
			return appendJSONValue(out, userJSON(u))
		}, func(last *store.User) string { return lc.next(store.UserPosition(last, q)) })
	}
}

// userCreateBody is the body of POST /api/v1/users.
type userCreateBody struct {
	Username *string `json:"username"`
	Password *string `json:"password"`
	Admin    *bool   `json:"admin"`
}

// handleCreate serves POST /api/v1/users.
func (a userAdmin) handleCreate() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		var body userCreateBody
		_, err := envelope.Decode(r, &body)
		if err == nil && (body.Username == nil || body.Password == nil) {
			err = envelope.BadRequest(`the fields "username" and "password" are required`)
		}
		if err == nil {
			err = invalidAccount(auth.CheckUsername(*body.Username))
		}
		if err == nil {
			err = invalidAccount(auth.CheckNewPassword(*body.Password))
		}
		var u *store.User
		if err == nil {
			var hash []byte
			if hash, err = auth.HashPassword(*body.Password); err == nil {
				u, err = a.users.CreateUser(r.Context(), &store.User{Username: *body.Username, PasswordHash: hash,
					Active: true, Admin: body.Admin != nil && *body.Admin})
			}
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		a.audit(r.Context(), r, "user.create", u.Username, slog.Bool("admin", u.Admin))
		envelope.OK(w, http.StatusCreated, userJSON(u), "User created")
	}
}

// invalidAccount turns a broken rule of auth.CheckUsername or
// auth.CheckNewPassword into a 400 VALIDATION_ERROR naming it.
func invalidAccount(err error) error {
	if err == nil {
		return nil
	}
	return &store.ValidationError{Message: err.Error()}
}

// namedUser is the user the path names: 404 when there is none.
func (a userAdmin) namedUser(r *http.Request) (*store.User, error) {
	return a.users.FindUserByName(r.Context(), r.PathValue("username"))
}

// handleGet serves GET /api/v1/users/{username}.
func (a userAdmin) handleGet() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		u, err := a.namedUser(r)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusOK, userJSON(u), "OK")
	}
}

// userUpdateBody is the body of PUT /api/v1/users/{username}: each field
// optional (null is left out), at least one.
type userUpdateBody struct {
	Admin    *bool   `json:"admin"`
	Disabled *bool   `json:"disabled"`
	Password *string `json:"password"`
}

// handleUpdate serves PUT /api/v1/users/{username}: in one store call,
// so that a change the last-administrator rule refuses changes nothing.
func (a userAdmin) handleUpdate() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		var body userUpdateBody
		_, err := envelope.Decode(r, &body)
		if err == nil && body.Admin == nil && body.Disabled == nil && body.Password == nil {
			err = envelope.BadRequest(`give at least one of the fields "admin", "disabled" and "password"`)
		}
		var change store.UserChange
		var changed []string
		if err == nil && body.Password != nil {
			if err = invalidAccount(auth.CheckNewPassword(*body.Password)); err == nil {
				change.PasswordHash, err = auth.HashPassword(*body.Password)
			}
			changed = append(changed, "password")
		}
		if body.Admin != nil {
			change.Admin = body.Admin
			changed = append(changed, "admin")
		}
		if body.Disabled != nil {
			active := !*body.Disabled
			change.Active = &active
			changed = append(changed, "disabled")
		}
		var u *store.User
		if err == nil {
			u, err = a.users.UpdateUser(r.Context(), r.PathValue("username"), change)
		}
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		a.audit(r.Context(), r, "user.update", u.Username, slog.String("changed", strings.Join(changed, ",")),
			slog.Bool("admin", u.Admin), slog.Bool("disabled", !u.Active))
		envelope.OK(w, http.StatusOK, userJSON(u), "User updated")
	}
}

// handleDelete serves DELETE /api/v1/users/{username}.
func (a userAdmin) handleDelete() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		name := r.PathValue("username")
		if err := a.users.DeleteUser(r.Context(), name); err != nil {
			envelope.Error(w, r, err)
			return
		}
		a.audit(r.Context(), r, "user.delete", name)
		envelope.NoContent(w)
	}
}

// ownerBody is the body of PUT P/owner.
type ownerBody struct {
	Username *string `json:"username"`
}

// handleTransfer serves PUT P/owner {"username"}: the owner, or a server
// administrator for any project, makes the named active user the owner.
func (m members) handleTransfer() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		p := pathOf(r)
		if u := auth.UserFrom(r.Context()); u != nil && u.Admin && auth.APITokenFrom(r.Context()) == nil {
			p.Caller.ServerAdmin = true
		}
		var body ownerBody
		_, err := envelope.Decode(r, &body)
		if err == nil && body.Username == nil {
			err = envelope.BadRequest(`the field "username" is required`)
		}
		if err != nil {
			rejectAt(w, r, m.store, p, err)
			return
		}
		pr, err := m.access.TransferProject(r.Context(), p, *body.Username)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusOK, projectJSON(pr), "Project transferred")
	}
}

// userRoutes registers user administration
// (docs/api.md#server-administrators-and-user-accounts-v12): server
// administrators only, checked before the body or the query is read.
func (d *deps) userRoutes(rt *router) {
	protectAdmin := func(h queryHandler) http.Handler {
		return d.authn(d.byUser(adminOnly(d.limitBody(withQuery(d.cfg.Store, h)))))
	}
	ua := userAdmin{users: d.cfg.Users, cursors: d.cursors, logger: d.cfg.Logger}
	rt.handle("GET /api/v1/users", noProject, protectAdmin(ua.handleList()), openapi.Operation{
		ID: "listUsers", Tag: "users", Summary: "List the users",
		Description: "Server administrators only (others and API tokens: 403). Every account, by username byte-wise unless sortBy says otherwise (name is the username; ties by username, then id): limit, offset, cursor, count, search (a case-insensitive substring of the username; %, _ and \\ are literal), sortBy and sortOrder.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Query: []string{"limit", "offset", "search", "sortBy", "sortOrder", "count", "cursor"}, Status: 200, Success: "UserList",
		Errors: []int{400, 403},
	})
	rt.handle("POST /api/v1/users", noProject, protectAdmin(ua.handleCreate()), openapi.Operation{
		ID: "createUser", Tag: "users", Summary: "Add a user",
		Description: "Server administrators only. username: 1 to 128 characters of valid UTF-8, no control characters, no leading or trailing white space, not \".\" or \"..\"; password: not empty, at most 72 bytes; admin: optional, default false. A broken rule is 400 VALIDATION_ERROR naming it; a taken username is 409.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Body: "UserCreate", Status: 201, Success: "User",
		Errors: []int{400, 403, 409},
	})
	rt.handle("GET /api/v1/users/{username}", noProject, protectAdmin(ua.handleGet()), openapi.Operation{
		ID: "getUser", Tag: "users", Summary: "Get a user",
		Description: "Server administrators only. An unknown username is 404. In a path a username is percent-encoded.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Status: 200, Success: "User",
		Errors: []int{400, 403, 404},
	})
	rt.handle("PUT /api/v1/users/{username}", noProject, protectAdmin(ua.handleUpdate()), openapi.Operation{
		ID: "updateUser", Tag: "users", Summary: "Change a user",
		Description: "Server administrators only. Any of admin, disabled and password, at least one, in one step. A password set or a disable ends every session of the user at once, on every instance; enabling the user again revives none of them. Demoting or disabling the last active administrator is 400 VALIDATION_ERROR; an unknown username is 404.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Body: "UserUpdate", Status: 200, Success: "User",
		Errors: []int{400, 403, 404},
	})
	rt.handle("DELETE /api/v1/users/{username}", noProject, protectAdmin(ua.handleDelete()), openapi.Operation{
		ID: "deleteUser", Tag: "users", Summary: "Delete a user",
		Description: "Server administrators only. Every session of the user ends at once and its memberships go; the API tokens it created stay with their projects. A user who still owns projects is 400 VALIDATION_ERROR (details say how many: transfer or delete them first, or disable the user); so is the last active administrator. An unknown username is 404.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Status: 204, Success: "NoContent",
		Errors: []int{400, 403, 404},
	})
}
