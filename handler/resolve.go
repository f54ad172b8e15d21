package handler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/internal/refs"
	"github.com/hds-go/hds/store"
)

// References between records (docs/api.md#20-references-between-records):
// with resolve=true, GET R, GET K, GET K/records and GET K?format=env show
// every reference of a STRING value (or of a []STRING element) replaced by
// the referenced record's current value as text.
//
// A resolver resolves the values of one answer in one pass: it reads
// each cluster a reference reaches once (Store.FindCluster with its
// records, through a Path of the caller, so that the store's access
// checks apply: a cluster out of the caller's reach reads as not found),
// and resolves each referenced record once.

// maxReferenceDepth is the longest chain of references that resolves.
const maxReferenceDepth = 10

// The reasons of an unresolved reference, as details give them.
const (
	reasonNotFound = "not found"
	reasonCycle    = "cycle"
	reasonTooDeep  = "too deep"
)

// parseResolve reads the resolve query parameter: true or false.
func parseResolve(v url.Values) (bool, error) {
	switch r := v.Get("resolve"); {
	case !v.Has("resolve"), r == "false":
		return false, nil
	case r == "true":
		return true, nil
	}
	return false, envelope.BadRequest("resolve must be true or false")
}

// errResolveVersion refuses resolve=true with version.
var errResolveVersion = envelope.BadRequest("resolve=true applies to the current value: it cannot be combined with version")

// clusterKey names a cluster of the project: its collection and name.
type clusterKey struct{ collection, cluster string }

// resolvedText is what a record yields as the text of a reference to it.
type resolvedText struct {
	text string
	// cred reports that the text pulled in a credential's value.
	cred bool
	// height is the length of the longest chain of references below the
	// record (0 when its value holds none).
	height int
	// elems are the resolved elements of a []STRING record.
	elems []resolvedText
	// failRef and reason say why it does not resolve: the first of its
	// references, as written, that cannot be resolved, and why.
	failRef, reason string
}

// resolver resolves the references of the values of one answer.
type resolver struct {
	ctx    context.Context
	s      store.Store
	creds  credentials
	reveal bool
	// base is the path of the answer's cluster, with the caller.
	base store.Path
	// clusters holds the records of each cluster read, by name; nil for a
	// cluster that is not there or out of reach.
	clusters map[clusterKey]map[string]*store.Record
	// done holds the resolved records by id; visiting those being
	// resolved, to tell a cycle.
	done     map[string]*resolvedText
	visiting map[string]bool
	// used holds every record an answer was built from, by id.
	used map[string]*store.Record
	// err is the first failure of the store (not a missing record).
	err error
}

// newResolver returns a resolver for answers in the cluster of p (its
// Caller, Need and names). own, when not nil, is that cluster read with
// its records.
func (rec records) newResolver(ctx context.Context, p store.Path, reveal bool, own *store.Cluster) *resolver {
	base := store.Path{Caller: p.Caller, Need: p.Need, Within: store.LevelCluster,
		Project: p.Project, Collection: p.Collection, Cluster: p.Cluster}
	rv := &resolver{ctx: ctx, s: rec.store, creds: rec.creds, reveal: reveal, base: base,
		clusters: map[clusterKey]map[string]*store.Record{}, done: map[string]*resolvedText{},
		visiting: map[string]bool{}, used: map[string]*store.Record{}}
	if own != nil {
		rv.clusters[clusterKey{p.Collection, p.Cluster}] = byName(own.Records)
	}
	return rv
}

func byName(recs []*store.Record) map[string]*store.Record {
	m := make(map[string]*store.Record, len(recs))
	for _, r := range recs {
		m[r.Name] = r
	}
	return m
}

// lookup returns the record ref names, relative to the cluster k that
// holds the reference, and the cluster it is in; nil when there is none
// the caller may read.
func (rv *resolver) lookup(k clusterKey, ref *refs.Ref) (*store.Record, clusterKey) {
	if ref.Cluster != "" {
		k.cluster = ref.Cluster
	}
	if ref.Collection != "" {
		k.collection = ref.Collection
	}
	recs, ok := rv.clusters[k]
	if !ok {
		p := rv.base
		p.Collection, p.Cluster = k.collection, k.cluster
		c, err := rv.s.FindCluster(rv.ctx, p, true)
		switch {
		case err == nil:
			recs = byName(c.Records)
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrPermissionDenied):
			// Out of reach reads as not found.
		default:
			if rv.err == nil {
				rv.err = err
			}
		}
		rv.clusters[k] = recs
	}
	return recs[ref.Name], k
}

// text resolves the references of s, held by a record of cluster k.
func (rv *resolver) text(k clusterKey, s string) resolvedText {
	if !strings.Contains(s, "${") {
		return resolvedText{text: s}
	}
	var out resolvedText
	var b strings.Builder
	for _, part := range refs.Parse(s) {
		if part.Ref == nil {
			b.WriteString(part.Literal)
			continue
		}
		target, tk := rv.lookup(k, part.Ref)
		var reason string
		var got *resolvedText
		switch {
		case rv.err != nil:
			return resolvedText{failRef: part.Ref.Text, reason: reasonNotFound}
		case target == nil:
			reason = reasonNotFound
		case rv.visiting[target.ID]:
			reason = reasonCycle
		default:
			got = rv.record(tk, target)
			switch {
			case got.reason != "":
				reason = got.reason
			case got.height+1 > maxReferenceDepth:
				reason = reasonTooDeep
			}
		}
		if reason != "" {
			return resolvedText{failRef: part.Ref.Text, reason: reason}
		}
		b.WriteString(got.text)
		out.cred = out.cred || got.cred
		out.height = max(out.height, got.height+1)
	}
	out.text = b.String()
	return out
}

// record resolves the record r of cluster k, once per resolver.
func (rv *resolver) record(k clusterKey, r *store.Record) *resolvedText {
	if got, ok := rv.done[r.ID]; ok {
		return got
	}
	rv.used[r.ID] = r
	rv.visiting[r.ID] = true
	got := rv.compute(k, r)
	delete(rv.visiting, r.ID)
	rv.done[r.ID] = &got
	return &got
}

// compute is record's work: the text a reference to r yields.
func (rv *resolver) compute(k clusterKey, r *store.Record) resolvedText {
	switch {
	case r.Type == store.String:
		var s string
		if err := json.Unmarshal(r.Value, &s); err != nil {
			rv.err = err
			return resolvedText{reason: reasonNotFound}
		}
		return rv.text(k, s)
	case r.Type == store.ArrayOf(store.String):
		var elems []string
		if err := json.Unmarshal(r.Value, &elems); err != nil {
			rv.err = err
			return resolvedText{reason: reasonNotFound}
		}
		out := resolvedText{elems: make([]resolvedText, len(elems))}
		b := []byte{'['}
		for i, e := range elems {
			got := rv.text(k, e)
			if got.reason != "" {
				return resolvedText{failRef: got.failRef, reason: got.reason}
			}
			out.elems[i] = got
			out.cred = out.cred || got.cred
			out.height = max(out.height, got.height)
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, got.text)
		}
		out.text = string(append(b, ']'))
		return out
	case r.Type.IsCredential():
		if !rv.reveal {
			// The text is masked wherever it lands: never opened.
			return resolvedText{cred: true}
		}
		v, err := rv.creds.visible(r, true)
		if err != nil {
			rv.err = err
			return resolvedText{cred: true, reason: reasonNotFound}
		}
		t, err := envText(r.Type, v)
		if err != nil {
			rv.err = err
		}
		return resolvedText{text: t, cred: true}
	}
	t, err := envText(r.Type, r.Value)
	if err != nil {
		rv.err = err
	}
	return resolvedText{text: t}
}

// holdsReference reports whether r's value may change when resolved: a
// STRING or []STRING holding ${.
func holdsReference(r *store.Record) bool {
	return (r.Type == store.String || r.Type == store.ArrayOf(store.String)) && strings.Contains(string(r.Value), "${")
}

// answer resolves r, a record of the answer in the answer's cluster: it
// returns r itself when its value holds no reference, else a copy
// whose value is resolved (and masked where it pulled in a credential,
// unless reveal), or an *envelope.UnresolvedError.
func (rv *resolver) answer(r *store.Record) (*store.Record, error) {
	if !holdsReference(r) {
		return r, nil
	}
	got := rv.record(clusterKey{rv.base.Collection, rv.base.Cluster}, r)
	if rv.err != nil {
		return nil, rv.err
	}
	if got.reason != "" {
		return nil, &envelope.UnresolvedError{Record: r.Name, Reference: got.failRef, Reason: got.reason}
	}
	out := *r
	if r.Type == store.String {
		out.Value = rv.visibleText(nil, *got)
		return &out, nil
	}
	b := []byte{'['}
	for i, e := range got.elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = rv.visibleText(b, e)
	}
	out.Value = append(b, ']')
	return &out, nil
}

// visibleText appends the JSON string of a resolved text as the answer
// shows it: masked when it pulled in a credential, unless reveal.
func (rv *resolver) visibleText(b []byte, t resolvedText) []byte {
	if t.cred && !rv.reveal {
		return append(b, `"********"`...)
	}
	return jsonstr.Append(b, t.text)
}

// answerAll resolves every record of recs, as answer does, in order.
func (rv *resolver) answerAll(recs []*store.Record) ([]*store.Record, error) {
	out := make([]*store.Record, len(recs))
	for i, r := range recs {
		got, err := rv.answer(r)
		if err != nil {
			return nil, err
		}
		out[i] = got
	}
	return out, nil
}

// etag returns the entity tag of the answer r (answered with resolve=true)
// after answer: r's own tag when its value holds no reference, else a
// strong tag of every record the answer was built from.
func (rv *resolver) etag(r *store.Record) string {
	if !holdsReference(r) {
		return r.ETag()
	}
	ids := make([]string, 0, len(rv.used))
	for id := range rv.used {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	h := sha256.New()
	h.Write([]byte(r.ETag()))
	for _, id := range ids {
		h.Write([]byte{0})
		h.Write([]byte(id))
		h.Write([]byte{'.'})
		h.Write([]byte(strconv.FormatInt(rv.used[id].Version, 10)))
	}
	return `"` + r.ID + ".r" + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// clusterTag returns the tag of the answer of GET K with resolve=true for
// the cluster k, after its records were answered
// (docs/api.md#cluster-tags): the cluster's own tag when no record held a
// reference, else a strong tag of its state and of every record the
// answer was built from (id, version and time of its last change, so
// that a record deleted and made again with its id and version still
// counts as changed).
func (rv *resolver) clusterTag(k *store.Cluster) string {
	if len(rv.used) == 0 {
		return k.ETag()
	}
	ids := make([]string, 0, len(rv.used))
	for id := range rv.used {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	h := sha256.New()
	h.Write([]byte(k.ETag()))
	var b []byte
	for _, id := range ids {
		r := rv.used[id]
		b = append(b[:0], 0)
		b = append(b, id...)
		b = append(b, '.')
		b = strconv.AppendInt(b, r.Version, 10)
		b = append(b, '.')
		b = strconv.AppendInt(b, r.UpdatedAt.UnixMicro(), 10)
		h.Write(b)
	}
	return `"` + k.ID + ".k" + strconv.FormatInt(k.State, 10) + ".r" + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}
