package e2e_test

// What resolving references may cost (docs/api.md#references-between-records,
// v1.3): bounded by what is stored, not by what references multiply.
// Reads are counted through a wrapping store (countingStore) and memory
// through the bytes the process allocated, never through time.

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// chainDoc is an import document of collection c with clusters k0 ..
// k(spread-1) holding the chain r0 -> r1 -> ... -> r(n-1) ("end"), the
// record ri in cluster k(i%spread).
func chainDoc(n, spread int) string {
	clusters := make([]strings.Builder, spread)
	for i := range n {
		v := fmt.Sprintf("${k%d/r%d}", (i+1)%spread, i+1)
		if i == n-1 {
			v = "end"
		}
		b := &clusters[i%spread]
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, `"r%d":{"type":"STRING","value":%q}`, i, v)
	}
	var sb strings.Builder
	sb.WriteString(`{"format":"hds/1","collections":{"c":{"clusters":{`)
	for k := range spread {
		if k > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"k%d":{"records":{%s}}`, k, clusters[k].String())
	}
	sb.WriteString(`}}}}`)
	return sb.String()
}

// countingServer is newServer whose store counts the reads resolving may
// make, with quotas q when not nil (set on the store it wraps: the wrapper
// hides store.QuotaSetter).
func countingServer(t *testing.T, kind storeKind, q *store.Quotas, opts ...hds.Option) (*client, *countingStore) {
	t.Helper()
	var counter *countingStore
	c := newServerWrapped(t, kind, func(s store.Store) store.Store {
		if q != nil {
			s.(store.QuotaSetter).SetQuotas(*q)
		}
		counter = newCountingStore(s)
		return counter
	}, opts...)
	return c, counter
}

// TestReferencesLongChain: a chain of 2,000 references spread over 20
// clusters answers too deep after at most 11 store reads, on every route
// that resolves (the depth is counted before each step; the walk is not a
// recursion as deep as the chain: internal/resolve's unit test walks one
// of 50,000). Resolving the whole chain first would read all 20 clusters.
func TestReferencesLongChain(t *testing.T) {
	const n = 2_000
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, counter := countingServer(t, kind, nil)
		tok := c.token("alice")
		c.mustDo("POST", pathP("web"), "", tok, http.StatusCreated)
		c.importDoc(t, "web", "", chainDoc(n, 20), tok)
		k0 := pathK("web", "c", "k0")
		for _, tc := range []struct{ what, target, details string }{
			{"GET R", k0 + "/records/r0?resolve=true", "record r0: ${k1/r1}: too deep"},
			{"GET K", k0 + "?resolve=true", "record r0: ${k1/r1}: too deep"},
			{"env", k0 + "?format=env&resolve=true", "record r0: ${k1/r1}: too deep"},
			{"list", k0 + "/records?resolve=true&sortBy=name&limit=1", "record r0: ${k1/r1}: too deep"},
		} {
			before := counter.calls.Load()
			wantUnresolved(t, c, tc.what, tc.target, tok, tc.details)
			reads := counter.calls.Load() - before
			assert.LessOrEqual(t, reads, int64(11), "%s: store reads before too deep", tc.what)
		}
		// Ten references resolve: r(n-11) -> ... -> r(n-1) ("end").
		k := pathK("web", "c", fmt.Sprintf("k%d", (n-11)%20))
		assert.Equal(t, `"end"`, c.valueOf(tok, k+fmt.Sprintf("/records/r%d", n-11), "?resolve=true"))
	})
}

// allocated runs f and returns the bytes the process allocated meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReferencesMultiplied: records of 200 references each, two levels
// deep, in a project of 20 KB: resolving never builds more than its
// bounds allow. Within the bounds the answer is whole; a value that would
// pass 1 MiB, or an answer that would pass limits.max_resolved_bytes,
// is 422 before anything is sent, after a bounded amount of work.
func TestReferencesMultiplied(t *testing.T) {
	if !alone(t) {
		return // measures the process: run in one of its own
	}
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, counter := countingServer(t, kind, &store.Quotas{MaxBytesPerProject: 20_000})
		tok := c.token("alice")
		c.tree(tok, "web", "prod", "app")
		app := pathK("web", "prod", "app")
		c.addRecord(tok, app, "l", "STRING", `"x"`)
		c.addRecord(tok, app, "m", "STRING", fmt.Sprintf("%q", strings.Repeat("${l}", 200)))
		for i := range 20 {
			c.addRecord(tok, app, fmt.Sprintf("t%02d", i), "STRING", fmt.Sprintf("%q", strings.Repeat("${m}", 200)))
		}
		// Within bounds: 20 values of 40,000 bytes each, one cluster read.
		before := counter.calls.Load()
		env := c.mustDo("GET", app+"?resolve=true", "", tok, http.StatusOK)
		var k clusterJSON
		env.decode(t, &k)
		assert.Equal(t, `"`+strings.Repeat("x", 40_000)+`"`, string(k.Data["t07"]))
		assert.Equal(t, int64(1), counter.calls.Load()-before, "GET K reads its cluster once")

		// A leaf of 25 bytes: each top value is 1,000,000 bytes (under
		// 1 MiB), the answer (m's 5,000 bytes first) over 16 MiB at the
		// 17th.
		c.mustDo("PUT", app+"/records/l", fmt.Sprintf(`{"value":%q}`, strings.Repeat("y", 25)), tok, http.StatusOK)
		var spent uint64
		for _, target := range []string{app + "?resolve=true", app + "?format=env&resolve=true", app + "/records?resolve=true&sortBy=name"} {
			spent = max(spent, allocated(func() {
				wantUnresolved(t, c, target, target, tok, "record t16: too large")
			}))
		}
		c.mustDo("GET", app+"/records/t16?resolve=true", "", tok, http.StatusOK)
		// A leaf of 100 bytes: each top value would be 4,000,000 bytes,
		// stopped at 1 MiB.
		c.mustDo("PUT", app+"/records/l", fmt.Sprintf(`{"value":%q}`, strings.Repeat("z", 100)), tok, http.StatusOK)
		for _, target := range []string{app + "?resolve=true", app + "/records/t00?resolve=true", app + "/records?resolve=true"} {
			spent = max(spent, allocated(func() {
				wantUnresolved(t, c, target, target, tok, "record t00: ${m}: too large")
			}))
		}
		// 20 x 4 MB resolved as a whole would allocate far more than this.
		assert.Less(t, spent, uint64(200<<20), "bytes allocated by one refused request")
	})
}

// TestReferencesMemo: a record referenced 1,000 times is read once (with
// its cluster) and its text reused.
func TestReferencesMemo(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c, counter := countingServer(t, kind, nil, hds.WithCredentialKey(testKey))
		tok := c.token("alice")
		c.tree(tok, "web", "prod", "app")
		c.mustDo("POST", pathK("web", "prod", "db"), "", tok, http.StatusCreated)
		c.addRecord(tok, pathK("web", "prod", "db"), "password", "CREDENTIAL", `"s3cret"`)
		app := pathK("web", "prod", "app")
		c.addRecord(tok, app, "many", "STRING", fmt.Sprintf("%q", strings.Repeat("${db/password},", 1000)))
		c.addRecord(tok, app, "more", "[]STRING", fmt.Sprintf("[%s]", strings.TrimSuffix(strings.Repeat(`"${db/password}",`, 1000), ",")))

		before := counter.calls.Load()
		got := c.valueOf(tok, app+"/records/many", "?resolve=true&reveal=true")
		assert.Equal(t, fmt.Sprintf("%q", strings.Repeat("s3cret,", 1000)), got)
		assert.Equal(t, int64(2), counter.calls.Load()-before, "the record, and db read once")
		before = counter.calls.Load()
		env := c.mustDo("GET", app+"?resolve=true", "", tok, http.StatusOK)
		assert.Equal(t, int64(2), counter.calls.Load()-before, "the answer's cluster and db, each read once")
		var k clusterJSON
		env.decode(t, &k)
		assert.Equal(t, `"********"`, string(k.Data["many"]))
		before = counter.calls.Load()
		c.mustDo("GET", app+"/records?resolve=true", "", tok, http.StatusOK)
		assert.Equal(t, int64(2), counter.calls.Load()-before, "the page, and db read once")
	})
}

// wantRevealEntry checks a credential.reveal entry's names (an empty
// string: null) and version (0: null).
func wantRevealEntry(t *testing.T, e auditJSON, coll, cluster, record, recordID string, version int64) {
	t.Helper()
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	var v int64
	if e.Version != nil {
		v = *e.Version
	}
	assert.Equal(t, "credential.reveal", e.Action)
	assert.Equal(t, []string{coll, cluster, record, recordID}, []string{str(e.Collection), str(e.Cluster), str(e.Record), str(e.RecordID)},
		"entry %d: collection, cluster, record, record_id", e.Revision)
	assert.Equal(t, version, v, "entry %d: version", e.Revision)
	assert.Equal(t, "alice", str(e.ActorName), "entry %d: actor", e.Revision)
}

// TestReferencesValueTooLarge: one value's resolved text (a record's, or
// one element's of a []STRING) stops at 1 MiB.
func TestReferencesValueTooLarge(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithMaxBodyBytes(4<<20))
		tok := c.token("alice")
		c.tree(tok, "web", "prod", "app")
		app := pathK("web", "prod", "app")
		big := strings.Repeat("b", 1<<20)
		c.addRecord(tok, app, "big", "STRING", `"`+big+`"`)
		c.addRecord(tok, app, "exact", "STRING", `"${big}"`)
		c.addRecord(tok, app, "two", "[]STRING", `["${big}","${exact}"]`)
		assert.Len(t, c.valueOf(tok, app+"/records/exact", "?resolve=true"), 2+1<<20, "exactly 1 MiB resolves")
		assert.Len(t, c.valueOf(tok, app+"/records/two", "?resolve=true"), 7+2<<20, "two elements of 1 MiB each")

		c.addRecord(tok, app, "list", "[]STRING", `["ok","${big}x"]`)
		wantUnresolved(t, c, "element", app+"/records/list?resolve=true", tok, "record list: ${big}: too large")
		c.addRecord(tok, app, "via", "STRING", `"<${two}>"`)
		wantUnresolved(t, c, "a []STRING's text", app+"/records/via?resolve=true", tok, "record via: ${two}: too large")
		c.addRecord(tok, app, "deep", "STRING", `"${list}"`)
		wantUnresolved(t, c, "down the chain", app+"/records/deep?resolve=true", tok, "record deep: ${list}: too large")
		c.mustDo("DELETE", app+"/records/via", "", tok, http.StatusNoContent)
		wantUnresolved(t, c, "cluster data", app+"?resolve=true", tok, "record deep: ${list}: too large")
		// A value holding no reference is never refused for its size.
		c.mustDo("PUT", app+"/records/big", `{"value":"`+big+big+`"}`, tok, http.StatusOK)
		assert.Len(t, c.valueOf(tok, app+"/records/big", "?resolve=true"), 2+2<<20)
	})
}

// TestReferencesMaxResolvedBytes: limits.max_resolved_bytes
// (hds.WithMaxResolvedBytes) bounds the resolved text of the whole
// answer, counted before masking, decided before anything is sent.
func TestReferencesMaxResolvedBytes(t *testing.T) {
	_, err := hds.NewHandler(hds.WithMaxResolvedBytes(0))
	require.ErrorContains(t, err, "WithMaxResolvedBytes: the limit must be positive, got 0")
	_, err = hds.NewHandler(hds.WithMaxResolvedBytes(-1))
	require.ErrorContains(t, err, "WithMaxResolvedBytes: the limit must be positive, got -1")
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithCredentialKey(testKey), hds.WithMaxResolvedBytes(1000))
		tok := c.token("alice")
		c.tree(tok, "web", "prod", "app")
		app := pathK("web", "prod", "app")
		c.addRecord(tok, app, "plain", "STRING", fmt.Sprintf("%q", strings.Repeat("p", 5000))) // never counted
		c.addRecord(tok, app, "secret", "CREDENTIAL", fmt.Sprintf("%q", strings.Repeat("s", 400)))
		c.addRecord(tok, app, "a_first", "STRING", `"${secret}"`)                  // 400
		c.addRecord(tok, app, "b_second", "[]STRING", `["${secret}","${secret}"]`) // 800: 1,200 in all
		c.addRecord(tok, app, "c_third", "STRING", `"${plain}"`)

		for _, target := range []string{app + "?resolve=true", app + "?format=env&resolve=true",
			app + "/records?resolve=true&sortBy=name", app + "?resolve=true&reveal=true"} {
			res := c.raw(request("GET", target, "", tok))
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "%s: %.200s", target, body)
			assert.True(t, strings.HasPrefix(string(body), `{"success":false`), "%s: the error envelope alone, no byte of an answer: %.200s", target, body)
			assert.NotContains(t, string(body), "ssss", target)
			wantUnresolved(t, c, target, target, tok, "record b_second: too large")
		}
		assert.Empty(t, c.auditLog("web", "?action=credential.reveal").Items, "a failed request writes no audit entry")
		// One record alone is within the bound; c_third (5,000 bytes) is
		// not, though the value it takes in would be.
		assert.Equal(t, `["********","********"]`, c.valueOf(tok, app+"/records/b_second", "?resolve=true"))
		wantUnresolved(t, c, "one record", app+"/records/c_third?resolve=true", tok, "record c_third: too large")
		c.mustDo("DELETE", app+"/records/c_third", "", tok, http.StatusNoContent)
		c.mustDo("PUT", app+"/records/b_second", `{"value":["${secret}"]}`, tok, http.StatusOK)
		env := c.mustDo("GET", app+"?resolve=true", "", tok, http.StatusOK) // 800 in all
		var k clusterJSON
		env.decode(t, &k)
		assert.Equal(t, `"********"`, string(k.Data["a_first"]))
		assert.Equal(t, fmt.Sprintf("%q", strings.Repeat("p", 5000)), string(k.Data["plain"]))
	})
}
