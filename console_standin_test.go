package hds_test

// A stand-in for the routes of API.md sections 15-17 (audit log, change
// feed, members, API tokens) that this branch does not serve yet, written
// from API.md's shapes, so that the console's views of them are tested in
// the browser (and photographed) now. Requests to any other route, and to
// each of these once hds serves it (probed at start), go to hds itself.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// standIn serves members, tokens, the audit log and the change feed of
// every project from memory, in API.md's shapes, and hands everything
// else to next.
type standIn struct {
	next    http.Handler
	mu      sync.Mutex
	members []map[string]any
	tokens  []map[string]any
	audit   []map[string]any // oldest first
	subs    map[chan map[string]any]bool
	n       int             // the last revision
	fake    map[string]bool // the routes stood in for: members, tokens, audit, events
}

// newStandIn wraps next; ownerID is alice's id, the owner of every project.
func newStandIn(next http.Handler, ownerID string) *standIn {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	return &standIn{next: next, subs: map[chan map[string]any]bool{}, members: []map[string]any{
		{"user_id": ownerID, "username": "alice", "role": "owner", "created_at": now},
	}}
}

// served reports whether hds itself has the route GET P/<what>: an
// unknown route says "no route matches this path".
func served(h http.Handler, what string) bool {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/projects/none/"+what, nil))
	return !strings.Contains(rec.Body.String(), "no route matches this path")
}

// newStandInFor returns a stand-in for the routes of members, tokens,
// audit and events that h does not serve, or nil when it serves them all.
func newStandInFor(h http.Handler, ownerID string) *standIn {
	fake := map[string]bool{}
	for _, what := range []string{"members", "tokens", "audit", "events"} {
		if !served(h, what) {
			fake[what] = true
		}
	}
	if len(fake) == 0 {
		return nil
	}
	s := newStandIn(h, ownerID)
	s.fake = fake
	return s
}

// fakes reports whether s stands in for GET P/<what>.
func (s *standIn) fakes(what string) bool { return s != nil && s.fake[what] }

func writeEnvelope(w http.ResponseWriter, status int, data any, message string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "data": data, "message": message})
}

func writeFail(w http.ResponseWriter, status int, code, message, details string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"success": false,
		"error": map[string]string{"code": code, "message": message, "details": details}})
}

func page(items []map[string]any) map[string]any {
	if items == nil {
		items = []map[string]any{}
	}
	return map[string]any{"items": items, "total": len(items), "limit": 100, "offset": 0}
}

// record adds an audit entry (an event of the feed) made by someone else.
func (s *standIn) record(entry map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	entry["revision"] = s.n
	entry["time"] = time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	for _, k := range []string{"collection", "cluster", "record", "record_id", "version", "target", "request_id"} {
		if _, ok := entry[k]; !ok {
			entry[k] = nil
		}
	}
	s.audit = append(s.audit, entry)
	for c := range s.subs {
		c <- entry
	}
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/v1/projects/")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) < 2 || !s.fake[parts[1]] {
		s.next.ServeHTTP(w, r)
		return
	}
	if r.Header.Get("Authorization") == "" {
		writeFail(w, 401, "AUTHENTICATION_FAILED", "No authorization token provided", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	switch key := r.Method + " " + parts[1]; {
	case key == "GET members":
		writeEnvelope(w, 200, page(s.members), "OK")
	case key == "PUT members" && len(parts) == 3:
		var body struct{ Role string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		if parts[2] != "bob" && parts[2] != "alice" {
			writeFail(w, 404, "RESOURCE_NOT_FOUND", "Resource not found", fmt.Sprintf("user %q not found", parts[2]))
			return
		}
		if !strings.Contains(" viewer reader editor admin ", " "+body.Role+" ") {
			writeFail(w, 400, "VALIDATION_ERROR", "Validation failed", "role must be one of viewer, reader, editor, admin")
			return
		}
		m := map[string]any{"user_id": "01a2-bob", "username": parts[2], "role": body.Role, "created_at": now}
		for _, x := range s.members {
			if x["username"] == parts[2] {
				x["role"] = body.Role
				writeEnvelope(w, 200, x, "OK")
				return
			}
		}
		s.members = append(s.members, m)
		writeEnvelope(w, 200, m, "Member added")
	case key == "DELETE members" && len(parts) == 3:
		for i, x := range s.members {
			if x["username"] == parts[2] {
				s.members = append(s.members[:i], s.members[i+1:]...)
			}
		}
		w.WriteHeader(204)
	case key == "GET tokens":
		writeEnvelope(w, 200, page(s.tokens), "OK")
	case key == "POST tokens":
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		t := map[string]any{"id": fmt.Sprintf("0190e7a4-1d2b-7c3d-8e4f-%012d", len(s.tokens)+1), "name": body["name"], "role": body["role"],
			"collection": body["collection"], "cluster": body["cluster"], "created_at": now, "expires_at": nil, "last_used_at": nil}
		if body["expires_in"] != nil {
			t["expires_at"] = time.Now().UTC().Add(time.Duration(body["expires_in"].(float64)) * time.Second).Format("2006-01-02T15:04:05.000000Z")
		}
		s.tokens = append(s.tokens, t)
		out := map[string]any{"token": "hds_4q9ZkP2vXw7LmN3bR8tY6uH1jC5dF0gA2sE9kQwz"}
		for k, v := range t {
			out[k] = v
		}
		writeEnvelope(w, 201, out, "Token created")
	case key == "DELETE tokens" && len(parts) == 3:
		for i, x := range s.tokens {
			if x["id"] == parts[2] {
				s.tokens = append(s.tokens[:i], s.tokens[i+1:]...)
			}
		}
		w.WriteHeader(204)
	case key == "GET audit":
		items := make([]map[string]any, 0, len(s.audit))
		for i := len(s.audit) - 1; i >= 0; i-- {
			items = append(items, s.audit[i])
		}
		writeEnvelope(w, 200, page(items), "OK")
	case key == "GET events":
		c := make(chan map[string]any, 16)
		s.subs[c] = true
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		func() {
			for {
				select {
				case <-r.Context().Done():
					return
				case e := <-c:
					b, _ := json.Marshal(e)
					fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e["revision"], e["action"], b)
					w.(http.Flusher).Flush()
				}
			}
		}()
		s.mu.Lock()
		delete(s.subs, c)
	default:
		writeFail(w, 405, "INVALID_REQUEST", "Method not allowed", "")
	}
}
