package handler

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hds-go/hds/auth"
	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/internal/reqinfo"
	"github.com/hds-go/hds/store"
)

// Access control (docs/api.md#sharing-and-api-tokens). Every route
// names, in its operation in routes.go, the right it needs on its project
// (need) and whether API tokens may use it at all (usersOnly); the level of
// the tree it works in, which a token's scope must cover, follows from its
// pattern (levelOf). rt.handle puts the route's requirement in the
// request's context, pathOf copies it into the store.Path, and the store
// checks it against the caller's role while it resolves the path: no
// handler looks at a role.

// requirement is what a route asks of its caller.
type requirement struct {
	need      store.Right
	within    store.Level
	usersOnly bool
}

type requirementKey struct{}

// withRequirement returns r with its route's requirement: recorded in
// the request's reqinfo when it has one (ok), which costs no copy of the
// request, and in a new context otherwise.
func withRequirement(r *http.Request, info *reqinfo.Info, ok bool, req *requirement) *http.Request {
	if ok {
		info.Route = req
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), requirementKey{}, req))
}

// requirementOf returns the requirement of r's route: the zero one, which
// needs no right any caller holds (store.Path.Check refuses it), when none
// was set.
func requirementOf(r *http.Request) requirement {
	if req, ok := r.Context().Value(requirementKey{}).(*requirement); ok {
		return *req
	}
	if info, ok := reqinfo.Lookup(r.Context()); ok {
		if req, ok := info.Route.(*requirement); ok {
			return *req
		}
	}
	return requirement{}
}

// levelOf is the level a route works in, from its pattern: the level of
// the deepest name in the path, except that creating, renaming and
// deleting a collection or cluster by its own path works in its parent
// (the list it belongs to). A token scoped to a collection may therefore
// read it and work within it, but not rename or delete it.
func levelOf(pattern string) store.Level {
	method, path, _ := strings.Cut(pattern, " ")
	own := method != http.MethodGet // a change of the container itself
	switch {
	case strings.Contains(path, "{cluster}/"):
		return store.LevelCluster
	case strings.HasSuffix(path, "{cluster}"):
		if own {
			return store.LevelCollection
		}
		return store.LevelCluster
	case strings.Contains(path, "{collection}/"):
		return store.LevelCollection
	case strings.HasSuffix(path, "{collection}") && !own:
		return store.LevelCollection
	}
	return store.LevelProject
}

// permitted refuses an API token on a route for users only (the project
// list, members, session routes): 403, whatever else the request holds.
func permitted(r *http.Request) error {
	if requirementOf(r).usersOnly && auth.APITokenFrom(r.Context()) != nil {
		return store.ErrPermissionDenied
	}
	return nil
}

// callerOf returns who makes the request: the authenticated user or API
// token, with the request's id.
func callerOf(r *http.Request) store.Caller {
	var c store.Caller
	if t := auth.APITokenFrom(r.Context()); t != nil {
		c = t.Caller()
	} else if u := auth.UserFrom(r.Context()); u != nil {
		c.UserID, c.Name = u.ID, u.Username
	} else if chk := auth.SessionCheckFrom(r.Context()); chk != nil {
		c.UserID, c.Session = chk.UserID, chk // the store checks the session (middleware.DeferSession)
	}
	c.RequestID = requestID(r)
	return c
}

// revealing raises p's need to store.RightReveal when the request asks
// for credential values in plain text (reveal=true): the one place where
// the parameter becomes a right. Writes need more already.
//
// Every allowed reveal writes its credential.reveal entry
// (docs/api.md#audit-log-and-change-feed). When rec's store keeps no audit log
// (store.AuditLog), no reveal could be recorded, so a reveal needs
// unauditedReveal, which no caller holds: the request is refused with 403
// AUTHORIZATION_FAILED, as for a caller without the right to reveal,
// once the project is found (a missing one is still 404), and before
// anything is read or written.
func (rec records) revealing(p store.Path, reveal bool) store.Path {
	switch {
	case !reveal:
	case rec.audit == nil:
		p.Need = unauditedReveal
	default:
		p.Need = max(p.Need, store.RightReveal)
	}
	return p
}

// unauditedReveal is the need of a reveal that could not be audited: a
// value above every right, which no role holds (store.Role.Allows).
const unauditedReveal = store.RightOwn + 1

// --- members ---

type memberOut struct {
	UserID    string `json:"user_id"`
	Username  string `json:"username"`
	Role      string `json:"role"`
	CreatedAt string `json:"created_at"`
}

func memberJSON(m *store.Member) memberOut {
	return memberOut{m.UserID, m.Username, string(m.Role), formatTime(m.CreatedAt)}
}

// members serves the members and API token routes.
type members struct {
	store   store.Store
	access  store.Access
	users   store.UserDirectory
	cursors cursors
	now     func() time.Time
}

// handleList serves GET P/members: the owner and the members, by
// username; limit and offset apply.
func (m members) handleList() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		q, lc, err := m.openPage(query, "members", pathOf(r).Project, store.SortName)
		if err != nil {
			reject(w, r, m.store, err)
			return
		}
		items, total, err := m.access.FindMembers(r.Context(), pathOf(r), pageQuery(q))
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		// By username: the cursor holds the last one listed.
		items = resumeAfter(items, q, func(it *store.Member) bool { return it.Username > q.After.Name })
		streamPage(w, r, total, q, store.Items(items), func(out *stream, it *store.Member) error {
			return appendJSONValue(out, memberJSON(it))
		}, func(last *store.Member) string { return lc.next(store.Position{Name: last.Username}) })
	}
}

// appendJSONValue appends v as JSON to out.
func appendJSONValue(out *stream, v any) error {
	b, err := json.Marshal(v)
	out.b = append(out.b, b...)
	return err
}

// roleBody is the body of PUT P/members/{username}.
type roleBody struct {
	Role *string `json:"role"`
}

// errRoleRequired is the answer to a body without a role (or a null one):
// a missing required field, as for every body (docs/api.md#routes).
var errRoleRequired = envelope.BadRequest(`the field "role" is required`)

// errMemberRole is the answer to a role no member may have.
var errMemberRole = &store.ValidationError{Message: "role must be one of viewer, reader, editor, admin"}

// handlePut serves PUT P/members/{username} {"role"}: adds the user as a
// member or changes its role.
func (m members) handlePut() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		var body roleBody
		_, err := envelope.Decode(r, &body)
		switch {
		case err != nil:
		case body.Role == nil:
			err = errRoleRequired
		case !store.MemberRole(store.Role(*body.Role)):
			err = errMemberRole
		}
		var u *store.User
		if err == nil {
			u, err = m.user(r)
		}
		if err != nil {
			reject(w, r, m.store, err)
			return
		}
		got, err := m.access.PutMember(r.Context(), pathOf(r), store.Member{UserID: u.ID, Username: u.Username, Role: store.Role(*body.Role)})
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusOK, memberJSON(got), "Member saved")
	}
}

// user looks up the user the path names; an unknown user is 404.
func (m members) user(r *http.Request) (*store.User, error) {
	name := r.PathValue("username")
	u, err := m.users.FindUserByName(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		err = &store.NotFoundError{Kind: "user", Name: name}
	}
	return u, err
}

// handleDelete serves DELETE P/members/{username}: an admin removes a
// member, or a member removes itself, which needs no more than being one.
func (m members) handleDelete() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		u, err := m.user(r)
		p := pathOf(r)
		if err == nil && u.ID == p.Caller.UserID {
			p.Need = store.RightRead // leaving needs no more than being a member
		}
		if err != nil {
			reject(w, r, m.store, err)
			return
		}
		if err := m.access.DeleteMember(r.Context(), p, u.ID, u.Username); err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.NoContent(w)
	}
}

// --- API tokens ---

type apiTokenOut struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Role       string  `json:"role"`
	Collection *string `json:"collection"`
	Cluster    *string `json:"cluster"`
	CreatedAt  string  `json:"created_at"`
	ExpiresAt  *string `json:"expires_at"`
	LastUsedAt *string `json:"last_used_at"`
}

// apiTokenCreatedOut is the answer to POST P/tokens, the only one with the
// token string.
type apiTokenCreatedOut struct {
	apiTokenOut
	Token string `json:"token"`
}

func tokenJSON(t *store.APIToken) apiTokenOut {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	optTime := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := formatTime(*t)
		return &s
	}
	return apiTokenOut{t.ID, t.Name, string(t.Role), opt(t.Collection), opt(t.Cluster), formatTime(t.CreatedAt),
		optTime(t.ExpiresAt), optTime(t.LastUsedAt)}
}

// tokenBody is the body of POST P/tokens.
type tokenBody struct {
	Name       *string         `json:"name"`
	Role       *string         `json:"role"`
	Collection *string         `json:"collection"`
	Cluster    *string         `json:"cluster"`
	ExpiresIn  json.RawMessage `json:"expires_in"`
}

// maxTokenName is the longest token name, in bytes.
const maxTokenName = 128

// maxExpiresIn is the longest expires_in accepted: 100 years.
const maxExpiresIn = 100 * 365 * 24 * 3600

// check validates the body and returns the token it asks for.
func (b tokenBody) check(now time.Time) (*store.APIToken, error) {
	if b.Name == nil {
		return nil, envelope.BadRequest(`the field "name" is required`)
	}
	invalid := func(msg string) error { return &store.ValidationError{Message: msg} }
	name := *b.Name
	if name == "" || len(name) > maxTokenName || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return nil, invalid("name must be 1 to 128 bytes of text without control characters")
	}
	if b.Role == nil {
		return nil, errRoleRequired
	}
	if !store.TokenRole(store.Role(*b.Role)) {
		return nil, invalid("role must be one of viewer, reader, editor")
	}
	t := &store.APIToken{Name: name, Role: store.Role(*b.Role)}
	if b.Cluster != nil && b.Collection == nil {
		return nil, invalid("a cluster scope needs a collection")
	}
	for _, s := range []struct {
		v   *string
		dst *string
	}{{b.Collection, &t.Collection}, {b.Cluster, &t.Cluster}} {
		if s.v != nil {
			if err := store.ValidateName(*s.v); err != nil {
				return nil, err
			}
			*s.dst = *s.v
		}
	}
	if b.ExpiresIn != nil && string(b.ExpiresIn) != "null" {
		secs, ok := positiveInteger(string(b.ExpiresIn))
		if !ok {
			return nil, invalid("expires_in must be a positive integer of seconds (at most 3153600000)")
		}
		exp := now.Add(time.Duration(secs) * time.Second).UTC().Truncate(time.Microsecond)
		t.ExpiresAt = &exp
	}
	return t, nil
}

// positiveInteger reads a JSON number written as a positive decimal
// integer of at most maxExpiresIn.
func positiveInteger(s string) (int64, bool) {
	if s == "" || len(s) > 10 || s[0] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, n <= maxExpiresIn
}

// handleCreateToken serves POST P/tokens: a new API token, whose string
// appears in this answer only; the store keeps its hash.
func (m members) handleCreateToken() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		var body tokenBody
		_, err := envelope.Decode(r, &body)
		var t *store.APIToken
		if err == nil {
			t, err = body.check(m.now())
		}
		var secret string
		if err == nil {
			secret, t.Hash, err = auth.NewAPIToken()
		}
		if err != nil {
			reject(w, r, m.store, err)
			return
		}
		p := pathOf(r)
		t.CreatedBy = p.Caller.UserID
		got, err := m.access.CreateToken(r.Context(), p, t)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.OK(w, http.StatusCreated, apiTokenCreatedOut{tokenJSON(got), secret}, "Token created")
	}
}

// handleListTokens serves GET P/tokens, oldest first, without the token
// strings.
func (m members) handleListTokens() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		q, lc, err := m.openPage(query, "tokens", pathOf(r).Project, store.SortCreatedAt)
		if err != nil {
			reject(w, r, m.store, err)
			return
		}
		items, total, err := m.access.FindTokens(r.Context(), pathOf(r), pageQuery(q))
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		// Oldest first, ties by id: the cursor holds the last one listed.
		items = resumeAfter(items, q, func(it *store.APIToken) bool {
			return it.CreatedAt.After(q.After.Time) || it.CreatedAt.Equal(q.After.Time) && it.ID > q.After.ID
		})
		streamPage(w, r, total, q, store.Items(items), func(out *stream, it *store.APIToken) error {
			return appendJSONValue(out, tokenJSON(it))
		}, func(last *store.APIToken) string {
			return lc.next(store.Position{ID: last.ID, Time: last.CreatedAt})
		})
	}
}

// handleDeleteToken serves DELETE P/tokens/{id}: the token is refused
// from the next request on, on every instance (nothing caches it).
func (m members) handleDeleteToken() queryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ url.Values) {
		if err := m.access.DeleteToken(r.Context(), pathOf(r), r.PathValue("id")); err != nil {
			envelope.Error(w, r, err)
			return
		}
		envelope.NoContent(w)
	}
}

// openPage reads the page of a members or tokens list (limit, offset,
// cursor), bound to the list's kind and project; sortBy is the list's
// fixed order (for tokens, by creation: the cursor keeps the time).
func (m members) openPage(query url.Values, kind, project string, sortBy store.SortField) (store.ListQuery, *listCursor, error) {
	q, err := parsePage(query)
	if err != nil {
		return q, nil, err
	}
	q.SortBy = sortBy
	lc, err := m.cursors.open(query, &q, []string{kind, project})
	return q, lc, err
}

// pageQuery is what to ask the store for a page of members or tokens:
// one item more than the page, to tell whether there is a next one; or,
// after a cursor, the whole list, which resumeAfter cuts. A project has
// few members and tokens, so the whole list is cheap, and cutting it by
// position (not by offset) never repeats or skips one when others come
// and go between pages.
func pageQuery(q store.ListQuery) store.ListQuery {
	if q.After != nil {
		return store.ListQuery{Limit: math.MaxInt32}
	}
	q.Limit++
	return q
}

// resumeAfter drops, after a cursor, the items up to its position (the
// first for which after is true starts the page), and keeps one more than
// the page.
func resumeAfter[T any](items []T, q store.ListQuery, after func(T) bool) []T {
	if q.After == nil {
		return items
	}
	for i, it := range items {
		if after(it) {
			return items[i:min(len(items), i+q.Limit+1)]
		}
	}
	return nil
}

// memberRoutes registers the routes of members, of the project's owner and
// of API tokens (docs/api.md#sharing-and-api-tokens).
func (d *deps) memberRoutes(rt *router) {
	protect := d.protect
	acc := members{store: d.cfg.Store, access: d.cfg.Access, users: d.cfg.Users, cursors: d.cursors, now: time.Now}
	rt.handle("GET "+pathP+"/members", store.RightRead, protect(acc.handleList()), openapi.Operation{
		ID: "listMembers", Tag: "members", Summary: "List the members of a project",
		Description: "Every member with its role, the owner included (role owner), by username; limit and offset apply. Any role may list them; API tokens may not (403).",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Query: []string{"limit", "offset", "cursor"}, Status: 200, Success: "MemberList",
		Errors: underProject,
	})
	rt.handle("PUT "+pathP+"/members/{username}", store.RightAdmin, protect(acc.handlePut()), openapi.Operation{
		ID: "putMember", Tag: "members", Summary: "Add a member or change its role",
		Description: "Admins and the owner only. The role is viewer, reader, editor or admin (400 VALIDATION_ERROR otherwise); an unknown user is 404; the owner's own entry cannot be changed (400 VALIDATION_ERROR). Effective on the member's next request, on every instance.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Body: "MemberPut", Status: 200, Success: "Member",
		Errors: underProject,
	})
	rt.handle("DELETE "+pathP+"/members/{username}", store.RightAdmin, protect(acc.handleDelete()), openapi.Operation{
		ID: "deleteMember", Tag: "members", Summary: "Remove a member",
		Description: "Admins and the owner, or the member itself. The owner's entry cannot be deleted (400 VALIDATION_ERROR); a user who is not a member is 404. Effective on the member's next request, on every instance.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Status: 204, Success: "NoContent",
		Errors: underProject,
	})
	rt.handle("PUT "+pathP+"/owner", store.RightOwn, protect(acc.handleTransfer()), openapi.Operation{
		ID: "transferProject", Tag: "projects", Summary: "Give the project to another user",
		Description: "The owner, or a server administrator (for any project). The named active user becomes the owner; the previous owner stays as an admin member. Audited as project.transfer. An unknown or disabled user is 404; a new owner who owns limits.max_projects_per_user projects already is 403 QUOTA_EXCEEDED, and nothing changes.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Body: "OwnerPut", Status: 200, Success: "Project",
		Errors: underProject,
	})
	rt.handle("POST "+pathP+"/tokens", store.RightAdmin, protect(acc.handleCreateToken()), openapi.Operation{
		ID: "createAPIToken", Tag: "members", Summary: "Create an API token for a program",
		Description: "Admins and the owner only. role is viewer, reader or editor; collection (and cluster, which needs collection) narrow the token's scope to that subtree (404 when it does not exist); expires_in is a positive number of seconds, no expiry when left out. The answer holds the token string (hds_ and 43 base62 characters); it is shown this once, the server keeps only its hash.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Body: "APITokenCreate", Status: 201, Success: "APITokenCreated",
		Errors: underProject,
	})
	rt.handle("GET "+pathP+"/tokens", store.RightAdmin, protect(acc.handleListTokens()), openapi.Operation{
		ID: "listAPITokens", Tag: "members", Summary: "List the API tokens of a project",
		Description: "Admins and the owner only; oldest first, without the token strings; limit and offset apply. Revoked tokens are not listed.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Query: []string{"limit", "offset", "cursor"}, Status: 200, Success: "APITokenList",
		Errors: underProject,
	})
	rt.handle("DELETE "+pathP+"/tokens/{id}", store.RightAdmin, protect(acc.handleDeleteToken()), openapi.Operation{
		ID: "deleteAPIToken", Tag: "members", Summary: "Revoke an API token",
		Description: "Admins and the owner only. The token is refused from the next request on, on every instance. An unknown or revoked id, or one of another project, is 404.",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Status: 204, Success: "NoContent",
		Errors: underProject,
	})
}
