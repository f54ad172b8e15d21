package handler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/internal/resolve"
	"github.com/hds-go/hds/store"
)

// References between records (docs/api.md#references-between-records):
// with resolve=true, GET R, GET K, GET K/records and GET K?format=env show
// every reference of a STRING value (or of a []STRING element) replaced by
// the referenced record's current value as text. Resolving is the work of
// internal/refs; the handler gives it a reader of the store through a
// Path of the caller (so that the store's access checks apply: a cluster
// out of the caller's reach reads as not found), maps its errors to the
// answer and makes the entity tags of what it used.

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

// storeReader is the resolve.Reader of one caller: it reads clusters through
// base (the caller, the right needed, the project) and opens credentials.
type storeReader struct {
	s     store.Store
	creds credentials
	base  store.Path
}

// Cluster implements resolve.Reader: a cluster that is not there or out of
// the caller's reach is not found.
func (sr storeReader) Cluster(ctx context.Context, collection, cluster string) ([]*store.Record, bool, error) {
	p := sr.base
	p.Collection, p.Cluster = collection, cluster
	c, err := sr.s.FindCluster(ctx, p, true)
	switch {
	case err == nil:
		return c.Records, true, nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrPermissionDenied):
		return nil, false, nil
	}
	return nil, false, err
}

// Open implements resolve.Reader.
func (sr storeReader) Open(r *store.Record) (json.RawMessage, error) {
	return sr.creds.visible(r, true)
}

// newResolver returns a resolver for answers in the cluster of p (its
// Caller, Need and names), with the answer's bound of resolved text.
func (rec records) newResolver(ctx context.Context, p store.Path, reveal bool) *resolve.Resolver {
	base := store.Path{Caller: p.Caller, Need: p.Need, Within: store.LevelCluster, Project: p.Project}
	return resolve.New(ctx, storeReader{s: rec.store, creds: rec.creds, base: base}, p.Collection, p.Cluster,
		resolve.Options{Reveal: reveal, MaxBytes: rec.maxResolved})
}

// resolveFailure maps a failure of resolving to the answer: an
// *envelope.UnresolvedError (422) for a value that does not resolve, the
// store's error otherwise.
func resolveFailure(err error) error {
	var re *resolve.Error
	if errors.As(err, &re) {
		return &envelope.UnresolvedError{Record: re.Record, Reference: re.Ref, Reason: re.Reason}
	}
	return err
}

// recordTag returns the entity tag of the answer r (answered with
// resolve=true) after rv resolved it: r's own tag when its value holds no
// reference, else a strong tag of every record the answer was built from.
func recordTag(rv *resolve.Resolver, r *store.Record) string {
	if !resolve.HoldsReference(r) {
		return r.ETag()
	}
	h := sha256.New()
	h.Write([]byte(r.ETag()))
	for _, u := range rv.Used() {
		h.Write([]byte{0})
		h.Write([]byte(u.ID))
		h.Write([]byte{'.'})
		h.Write([]byte(strconv.FormatInt(u.Version, 10)))
	}
	return `"` + r.ID + ".r" + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// clusterTag returns the tag of the answer of GET K with resolve=true for
// the cluster k, after rv resolved its records
// (docs/api.md#cluster-tags): the cluster's own tag when no record held a
// reference, else a strong tag of its state and of every record the
// answer was built from (id, version and time of its last change, so
// that a record deleted and made again with its id and version still
// counts as changed).
func clusterTag(rv *resolve.Resolver, k *store.Cluster) string {
	used := rv.Used()
	if len(used) == 0 {
		return k.ETag()
	}
	h := sha256.New()
	h.Write([]byte(k.ETag()))
	var b []byte
	for _, r := range used {
		b = append(b[:0], 0)
		b = append(b, r.ID...)
		b = append(b, '.')
		b = strconv.AppendInt(b, r.Version, 10)
		b = append(b, '.')
		b = strconv.AppendInt(b, r.UpdatedAt.UnixMicro(), 10)
		h.Write(b)
	}
	return `"` + k.ID + ".k" + strconv.FormatInt(k.State, 10) + ".r" + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}
