package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/pgtest"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/postgres"
	"github.com/hds-go/hds/store/sqlite"
)

// Issue 24 item 6: a big import (or batch) must not cost the server many
// times its body. The test sends one and samples the heap; the
// benchmarks (import_bench_test.go) report the figures.

// bigImportDoc is an import document of clusters clusters of n small
// records each (about 90 bytes a record) in collection c, and of big
// records of size bytes each in cluster "big".
func bigImportDoc(clusters, n, big, size int) string {
	var sb strings.Builder
	sb.WriteString(`{"format":"hds/1","collections":{"c":{"clusters":{`)
	for k := range clusters {
		if k > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"k%d":{"records":{`, k)
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `"record-%06d":{"type":"STRING","value":"%s-%06d"}`, i, strings.Repeat("v", 40), i)
		}
		sb.WriteString(`}}`)
	}
	if big > 0 {
		sb.WriteString(`,"big":{"records":{`)
		for i := range big {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `"big-%d":{"type":"STRING","value":"%d%s"}`, i, i, strings.Repeat("b", size-1))
		}
		sb.WriteString(`}}`)
	}
	sb.WriteString(`}}}}`)
	return sb.String()
}

// heapGrowth runs f while it samples the heap in use, and returns by how
// much it grew over what it held before f (after a collection) at most.
// A memory limit of limit bytes over what the process uses before f
// makes the collector run before the heap passes it, as long as what is
// live fits: the samples then show what f holds, not when the collector
// happened to run.
// A negative limit sets none.
func heapGrowth(limit int64, f func()) uint64 {
	// Collected, and the free memory given back, so that the limit
	// leaves the heap no more room than limit.
	debug.FreeOSMemory()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	if limit >= 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(before.Sys-before.HeapReleased) + limit))
	}
	var peak atomic.Uint64
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak.Store(max(peak.Load(), m.HeapInuse))
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-sampled
	if p := peak.Load(); p > before.HeapInuse {
		return p - before.HeapInuse
	}
	return 0
}

// postImport sends body to url (POST P/import) on a real server and
// returns the head of the answer, whose rest it reads and drops (a
// client keeping the answer would grow this process's heap).
func postImport(t *testing.T, url, tok, body string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	head := make([]byte, 200)
	n, _ := io.ReadFull(resp.Body, head)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", head[:n])
	return string(head[:n])
}

// importHeapFactor bounds the heap growth of TestImportHeap, in times
// the body. Before issue 24 an import held 25 to 55 times its body; the
// memory store keeps what it imports (records, indexes and audit
// entries: about 4 times such a body) in the heap.
const importHeapFactor = 14

// TestImportHeap imports a document of 30,000 small records and two of
// 512 KiB (about 3.7 MB) into a new project of each store, and fails when
// the heap grows by importHeapFactor times the body or more.
func TestImportHeap(t *testing.T) {
	if !alone(t) {
		return // measures the process: run in one of its own
	}
	body := bigImportDoc(2, 15_000, 2, 512<<10)
	bound := importHeapFactor * int64(len(body))
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, patientKind(kind), hds.WithQuotas(store.NoQuotas))
		srv := httptest.NewServer(c.h)
		t.Cleanup(srv.Close)
		tok := c.token("alice")
		c.mustDo("POST", pathP("p"), "", tok, http.StatusCreated)
		var head string
		growth := heapGrowth(bound*3/4, func() {
			head = postImport(t, srv.URL+pathP("p")+"/import", tok, body)
		})
		t.Logf("%s: an import of %d bytes grew the heap by %.1f MiB (%.1fx)", kind.name, len(body),
			float64(growth)/(1<<20), float64(growth)/float64(len(body)))
		assert.Less(t, int64(growth), bound, "heap growth of the import")
		assert.True(t, strings.HasPrefix(head, `{"success":true,"data":{"created":30002,"updated":0,"deleted":0,"unchanged":0,"changes":[`), head)
		env := c.mustDo("GET", pathR("p", "c", "big", "big-1"), "", tok, http.StatusOK)
		assert.True(t, bytes.Contains(env.raw, []byte(`"value":"1bbbb`)), "the big record")
		c.mustDo("GET", pathR("p", "c", "k1", "record-014999"), "", tok, http.StatusOK)
	})
}

// patientKind is kind with a store whose calls may take 10 minutes: the
// heap test is about memory, and a loaded machine running the race
// detector may take longer than a deadline allows (the time a big import
// takes is the benchmarks' to measure).
func patientKind(kind storeKind) storeKind {
	const patience = 10 * time.Minute
	switch kind.name {
	case "postgres":
		kind.new = func(t testing.TB) (store.Projects, store.Accounts) {
			pg := postgres.New(pgtest.New(t), postgres.WithTimeout(patience))
			return pg, pg
		}
	case "sqlite":
		kind.new = func(t testing.TB) (store.Projects, store.Accounts) {
			lite, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hds.db"), sqlite.WithTimeout(patience))
			require.NoError(t, err)
			t.Cleanup(func() { lite.Close() })
			return lite, lite
		}
	}
	return kind
}
