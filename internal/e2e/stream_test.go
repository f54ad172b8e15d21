package e2e_test

import (
	"encoding/json"
	"fmt"
	"hash/crc64"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// streamHeapBound is the bound of README.md and docs/api.md: while
// concurrent GET K (and record lists) of a cluster of 1 MB values are
// answered, the server's heap grows by less than this over what it held
// before, whatever the size of the cluster. Before streaming, eight
// concurrent GET K of 300 records of 1 MB added gigabytes.
const streamHeapBound = 64 << 20

// TestStreamingHeapMemory reads a cluster of big values with 8 concurrent
// GET K, 8 concurrent record lists and 8 concurrent history lists on the
// memory store, sampling the heap, and fails when it grows by
// streamHeapBound or more.
func TestStreamingHeapMemory(t *testing.T) {
	if !alone(t) {
		return // measures the process: run in one of its own
	}
	records, size := 100, 1_000_000
	if raceEnabled {
		records = 40 // the race detector multiplies memory and time; the bound stays
	}
	c := newServer(t, storeKinds[0], hds.WithMaxVersions(100))
	srv := httptest.NewServer(c.h)
	t.Cleanup(srv.Close)
	tok := c.token("alice")
	c.tree(tok, "p", "c", "k")
	kpath := pathK("p", "c", "k")
	// Straight into the store: the API's own writes are not under test.
	k := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: c.ids["alice"]}, Project: "p", Collection: "c", Cluster: "k"}
	for i := range records {
		k.Record = fmt.Sprintf("rec-%04d", i)
		value := json.RawMessage(fmt.Sprintf(`"%04d%s"`, i, strings.Repeat("v", size-4)))
		_, err := c.store.CreateRecord(t.Context(), k, &store.Record{Type: store.String, Value: value}, store.Write{})
		require.NoError(t, err)
	}
	// One record with a long history, for GET R/versions.
	k.Record = "rec-0000"
	for i := range 60 {
		value := json.RawMessage(fmt.Sprintf(`"%02d%s"`, i, strings.Repeat("h", size-2)))
		_, err := c.store.UpdateRecord(t.Context(), k, store.Write{MaxVersions: 100}, func(r *store.Record) error {
			r.Value = value
			return nil
		})
		require.NoError(t, err)
	}

	for _, target := range []string{
		kpath,
		kpath + "/records?limit=1000&sortBy=value&sortOrder=desc",
		pathR("p", "c", "k", "rec-0000") + "/versions?limit=1000",
	} {
		t.Run(target, func(t *testing.T) {
			start := time.Now()
			growth, sum := concurrentReads(t, srv.URL+target, tok, 8)
			t.Logf("8 x GET %s: heap grew by %.1f MiB at most (%v)", target, float64(growth)/(1<<20), time.Since(start))
			assert.Less(t, growth, uint64(streamHeapBound), "heap growth while streaming %s", target)
			checkBody(t, srv.URL+target, tok, sum)
		})
	}
}

// TestStreamingHeapPostgres reads a cluster of big credentials with 4
// concurrent GET K?reveal=true on PostgreSQL, sampling the heap, and fails
// when it grows by streamHeapBound or more.
func TestStreamingHeapPostgres(t *testing.T) {
	if !alone(t) {
		return // measures the process: run in one of its own
	}
	records, size := 30, 700_000
	c := newServer(t, storeKinds[1], hds.WithCredentialKey(testKey))
	srv := httptest.NewServer(c.h)
	t.Cleanup(srv.Close)
	tok := c.token("alice")
	c.tree(tok, "p", "c", "k")
	kpath := pathK("p", "c", "k")
	fillBigCluster(t, srv.URL+kpath, tok, records, size, "CREDENTIAL")
	for _, target := range []string{kpath + "?reveal=true", kpath + "/records?limit=1000&reveal=true"} {
		t.Run(target, func(t *testing.T) {
			growth, sum := concurrentReads(t, srv.URL+target, tok, 4)
			t.Logf("4 x GET %s: heap grew by %.1f MiB at most", target, float64(growth)/(1<<20))
			assert.Less(t, growth, uint64(streamHeapBound), "heap growth while streaming %s", target)
			checkBody(t, srv.URL+target, tok, sum)
		})
	}
}

// fillBigCluster creates records rec-0000... of typ, each value a JSON
// string of size bytes, through the API.
func fillBigCluster(t *testing.T, kurl, tok string, records, size int, typ string) {
	t.Helper()
	for i := range records {
		value := fmt.Sprintf("%04d", i) + strings.Repeat("v", size-4)
		body := fmt.Sprintf(`{"name":"rec-%04d","type":%q,"value":%q}`, i, typ, value)
		sendTo(t, http.MethodPost, kurl+"/records", body, tok, http.StatusCreated)
	}
}

// sendTo makes one request to a real server and discards the body.
func sendTo(t *testing.T, method, url, body, tok string, want int) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != want {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		t.Fatalf("%s %s: status %d, want %d: %s", method, url, resp.StatusCode, want, b)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
}

// concurrentReads makes n concurrent GETs of url, each read to the end
// into a checksum, while the heap in use is sampled. It returns the largest
// growth of the heap over what it held before (after a collection), and
// the checksum of the body, which every reader must have seen the same.
func concurrentReads(t testing.TB, url, tok string, n int) (uint64, uint64) {
	t.Helper()
	// A low GC target, so that garbage (opened credentials, each read
	// once) does not pile up for as long as the live heap allows: the
	// samples then show what a request holds, not when the GC ran.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	// A soft memory limit below the bound, so that the GC collects
	// before garbage reaches it even when a loaded machine starves its
	// background marking: a heap that still grows past the bound holds
	// that much live, which is what the bound is about.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(before.Sys-before.HeapReleased) + streamHeapBound*3/4))

	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			sample := m.HeapInuse
			if sample > before.HeapInuse+streamHeapBound/2 {
				// Near the bound: collect, and count what is still
				// there, so that garbage a starved GC has not yet
				// marked is not taken for what the requests hold.
				runtime.GC()
				runtime.ReadMemStats(&m)
				sample = min(sample, m.HeapInuse)
			}
			if sample > peak.Load() {
				peak.Store(sample)
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	sums := make([]uint64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodGet, url, nil)
			if err != nil {
				errs[i] = err
				return
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			h := crc64.New(crcTable)
			buf := make([]byte, 32<<10)
			if _, err := io.CopyBuffer(h, resp.Body, buf); err != nil {
				errs[i] = err
				return
			}
			if resp.StatusCode != http.StatusOK {
				errs[i] = fmt.Errorf("status %d", resp.StatusCode)
			}
			sums[i] = h.Sum64()
		})
	}
	wg.Wait()
	close(done)
	<-sampled
	for i, err := range errs {
		require.NoError(t, err, "reader %d", i)
		require.Equal(t, sums[0], sums[i], "reader %d read another body", i)
	}
	growth := uint64(0)
	if p := peak.Load(); p > before.HeapInuse {
		growth = p - before.HeapInuse
	}
	return growth, sums[0]
}

// checkBody reads url once more, whole, and checks that it is the body
// the concurrent readers hashed, a valid success envelope.
func checkBody(t *testing.T, url, tok string, sum uint64) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, sum, crc64.Checksum(body, crcTable), "the same body as the concurrent readers")
	assert.Equal(t, jsonType, resp.Header.Get("Content-Type"))
	assert.True(t, json.Valid(body), "valid JSON")
	assert.True(t, strings.HasPrefix(string(body[:20]), `{"success":true,`), "a success envelope")
}

// crcTable checks that concurrent readers read the same body.
var crcTable = crc64.MakeTable(crc64.ECMA)

// TestStreamingFailure: a failure before anything was written is answered
// with its error envelope; one after the first chunk went out cuts the
// response off, so that the client never takes a short list for a whole
// one. A slow reader holds no lock: writes go on while it reads nothing.
func TestStreamingFailure(t *testing.T) {
	c := newServer(t, storeKinds[0], hds.WithCredentialKey(testKey))
	srv := httptest.NewServer(c.h)
	t.Cleanup(srv.Close)
	tok := c.token("alice")
	c.tree(tok, "p", "c", "k")
	k := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: c.ids["alice"]}, Project: "p", Collection: "c", Cluster: "k", Record: "zz-broken"}
	// A credential that does not open (sealed by no key of ours).
	_, err := c.store.CreateRecord(t.Context(), k, &store.Record{Type: store.Credential, Value: json.RawMessage(`"not sealed"`)}, store.Write{})
	require.NoError(t, err)

	status, _, env := c.do("GET", pathK("p", "c", "k")+"?reveal=true", "", tok)
	wantError(t, "a small cluster with a broken credential", status, env, http.StatusInternalServerError, "SERVER_ERROR", "Internal server error")

	for i := range 4 {
		k.Record = fmt.Sprintf("big-%d", i)
		_, err := c.store.CreateRecord(t.Context(), k, &store.Record{Type: store.String,
			Value: json.RawMessage(`"` + strings.Repeat("b", 100_000) + `"`)}, store.Write{})
		require.NoError(t, err)
	}
	req, err := http.NewRequest(http.MethodGet, srv.URL+pathK("p", "c", "k")+"?reveal=true", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the status went out with the first chunk")
	body, err := io.ReadAll(resp.Body)
	assert.Error(t, err, "the body is cut off, not ended")
	assert.False(t, json.Valid(body), "what arrived is not a whole JSON document")

	// A reader that reads nothing: the server blocks writing to it, and a
	// write to the same cluster still goes through.
	req, err = http.NewRequest(http.MethodGet, srv.URL+pathK("p", "c", "k"), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	for i := range 200 { // ~20 MB, more than the socket buffers hold
		k.Record = fmt.Sprintf("fill-%03d", i)
		_, err := c.store.CreateRecord(t.Context(), k, &store.Record{Type: store.String,
			Value: json.RawMessage(`"` + strings.Repeat("f", 100_000) + `"`)}, store.Write{})
		require.NoError(t, err)
	}
	require.NoError(t, c.store.DeleteRecord(t.Context(), store.Path{Need: store.RightRead, Caller: store.Caller{UserID: c.ids["alice"]}, Project: "p", Collection: "c", Cluster: "k", Record: "zz-broken"}, store.Write{}))
	slow, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer slow.Body.Close()
	sendTo(t, http.MethodPut, srv.URL+pathR("p", "c", "k", "fill-000"), `{"value":"changed"}`, tok, http.StatusOK)
	sendTo(t, http.MethodPost, srv.URL+pathK("p", "c", "k")+"/records", `{"name":"new","type":"INTEGER","value":1}`, tok, http.StatusCreated)
}
