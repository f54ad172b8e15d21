package handler

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/openapi"
	"github.com/hds-go/hds/store"
)

// handleAudit serves GET P/audit
// (docs/api.md#18-audit-log-and-change-feed): the project's audit log,
// newest first, for its admins.
func handleAudit(s store.Store, log store.AuditLog, cur cursors) queryHandler {
	return func(w http.ResponseWriter, r *http.Request, query url.Values) {
		lq, aq, err := parseAuditQuery(query)
		p := pathOf(r)
		var lc *listCursor
		if err == nil {
			lc, err = cur.open(query, &lq, []string{"audit", p.Project}, string(aq.Action), aq.Actor,
				aq.Since.String(), aq.Until.String(), strconv.FormatInt(aq.After, 10))
		}
		if err == nil && lq.After != nil {
			// The cursor holds the revision of the last entry listed.
			if aq.Before, err = strconv.ParseInt(lq.After.ID, 10, 64); err != nil || aq.Before < 1 {
				err = envelope.BadRequest(msgCursorMalformed)
			}
		}
		if err != nil {
			reject(w, r, s, err)
			return
		}
		aq.Limit++ // one more, to tell whether there is a next page
		items, total, err := log.FindAuditEntries(r.Context(), p, aq)
		if err != nil {
			envelope.Error(w, r, err)
			return
		}
		streamPage(w, r, total, lq, store.Items(items), func(out *stream, e *store.AuditEntry) error {
			out.b = appendAudit(out.b, e)
			return nil
		}, func(last *store.AuditEntry) string {
			return lc.next(store.Position{ID: strconv.FormatInt(last.Revision, 10)})
		})
	}
}

// parseAuditQuery reads limit, offset and count (as lists do) and the filters of
// GET P/audit: action, actor, since, until and after.
func parseAuditQuery(v url.Values) (store.ListQuery, store.AuditQuery, error) {
	lq, err := parsePage(v)
	if err == nil {
		err = parseCount(v, &lq)
	}
	aq := store.AuditQuery{Limit: lq.Limit, Offset: lq.Offset, NoCount: lq.NoCount}
	if err != nil {
		return lq, aq, err
	}
	if v.Has("action") {
		aq.Action = store.Action(v.Get("action"))
		if !aq.Action.Valid() {
			names := make([]string, len(store.Actions))
			for i, a := range store.Actions {
				names[i] = string(a)
			}
			return lq, aq, envelope.BadRequest("action must be one of " + strings.Join(names, ", "))
		}
	}
	if v.Has("actor") {
		if aq.Actor, err = filterText(v.Get("actor"), "actor", true); err == nil {
			aq.Actor, err = parseActor(aq.Actor)
		}
		if err != nil {
			return lq, aq, err
		}
	}
	for _, b := range []struct {
		name string
		t    *time.Time
	}{{"since", &aq.Since}, {"until", &aq.Until}} {
		if v.Has(b.name) {
			if *b.t, err = parseInstant(v.Get(b.name), b.name); err != nil {
				return lq, aq, err
			}
		}
	}
	if v.Has("after") {
		if aq.After, err = parseRevision(v.Get("after"), "after"); err != nil {
			return lq, aq, err
		}
	}
	return lq, aq, nil
}

// parseActor reads the actor filter: a user id, or token:<id> where the
// id is a UUID (API token ids are), in any case.
func parseActor(s string) (string, error) {
	if s == "" {
		return "", errBadActor
	}
	if id, ok := strings.CutPrefix(s, tokenActorPrefix); ok {
		canon, ok := store.CanonicalUUID(id)
		if !ok {
			return "", errBadActor
		}
		return tokenActorPrefix + canon, nil
	}
	return s, nil
}

// errBadActor is the answer to an actor filter that names no actor.
var errBadActor = envelope.BadRequest("actor must be a user id or token:<id>")

// tokenActorPrefix starts the actor of a change made with an API token.
const tokenActorPrefix = "token:"

// parseInstant reads an RFC 3339 time with an offset (any fraction).
func parseInstant(s, param string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, envelope.BadRequest(param + " must be an RFC 3339 time, e.g. 2026-11-22T08:18:19Z")
	}
	return t, nil
}

// parseRevision reads a revision: a non-negative decimal integer.
func parseRevision(s, param string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "" || s[0] < '0' || s[0] > '9' {
		return 0, envelope.BadRequest(param + " must be a revision: a decimal integer of 0 or more (digits only, at most 9223372036854775807)")
	}
	return n, nil
}

// appendAudit appends the JSON of an audit entry
// (docs/api.md#18-audit-log-and-change-feed): fields that do not apply are
// null.
func appendAudit(b []byte, e *store.AuditEntry) []byte {
	b = append(b, `{"revision":`...)
	b = strconv.AppendInt(b, e.Revision, 10)
	b = append(b, `,"time":`...)
	b = appendTime(b, e.Time)
	b = append(b, `,"action":`...)
	b = jsonstr.Append(b, string(e.Action))
	for _, f := range []struct{ name, value string }{
		{`,"actor":`, e.Actor}, {`,"actor_name":`, e.ActorName}, {`,"collection":`, e.Collection},
		{`,"cluster":`, e.Cluster}, {`,"record":`, e.Record}, {`,"record_id":`, e.RecordID},
	} {
		b = appendNullable(append(b, f.name...), f.value)
	}
	b = append(b, `,"version":`...)
	if e.Version == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, e.Version, 10)
	}
	b = appendNullable(append(b, `,"target":`...), e.Target)
	b = appendNullable(append(b, `,"request_id":`...), e.RequestID)
	return append(b, '}')
}

// appendNullable appends s as a JSON string, or null when empty.
func appendNullable(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return jsonstr.Append(b, s)
}

// auditRoutes registers the audit log's route when the store keeps one
// (store.AuditLog).
func (d *deps) auditRoutes(rt *router) {
	if d.audit == nil {
		return
	}
	s, audit, cur, protect := d.cfg.Store, d.audit, d.cursors, d.protect
	rt.handle("GET "+pathP+"/audit", store.RightAdmin, protect(handleAudit(s, audit, cur)), openapi.Operation{
		ID: "listAudit", Tag: "audit", Summary: "Read the project's audit log",
		Description: "Who changed what, and who read credentials in plain text: one entry per change (and per request that revealed credentials), newest first. revision counts the project's entries from 1, without gaps, in commit order. Filters: action, actor (a user id or token:<id>), since and until (RFC 3339, inclusive), after (a revision, exclusive); limit, offset, cursor and count as for lists. Admins and the owner only; API tokens may not (403).",
		UsersOnly:   true, Access: openapi.Bearer, Counted: true, Query: []string{"limit", "offset", "cursor", "count", "auditAction", "auditActor", "since", "until", "after"},
		Status: 200, Success: "AuditList",
		Errors: underProject,
	})
}
