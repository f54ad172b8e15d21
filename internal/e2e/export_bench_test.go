package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hds-go/hds/store"
)

// BenchmarkExportHeap exports a project of 100,000 records (GET P/export,
// docs/api.md#batch-export-and-import) on each store and reports how far
// the server's heap grew over what it held before (heap-MiB, sampled as the
// streaming heap tests sample it: concurrentReads) and the size of the
// document (body-MiB): an export streams, so the first stays a few MiB
// whatever the second.
func BenchmarkExportHeap(b *testing.B) {
	const clusters, perCluster = 10, 10_000
	for _, kind := range storeKinds {
		b.Run(kind.name, func(b *testing.B) {
			c := newServer(b, kind)
			srv := httptest.NewServer(c.h)
			b.Cleanup(srv.Close)
			tok := c.token("alice")
			p := store.Path{Need: store.RightRead, Caller: store.Caller{UserID: c.ids["alice"]}, Project: "p"}
			if _, err := c.store.CreateProject(b.Context(), p); err != nil {
				b.Fatal(err)
			}
			for k := range clusters {
				for from := 0; from < perCluster; from += 1000 {
					batch := store.Batch{CreateParents: true}
					for i := from; i < from+1000; i++ {
						batch.Ops = append(batch.Ops, store.Op{Kind: store.OpCreate, Collection: "c", Cluster: fmt.Sprintf("k%02d", k),
							Record: fmt.Sprintf("record-%06d", i), New: &store.Record{Type: store.String,
								Value: json.RawMessage(fmt.Sprintf(`"value %06d of a configuration record, about a hundred bytes long........"`, i))}})
					}
					if _, err := c.store.Apply(b.Context(), p, batch); err != nil {
						b.Fatal(err)
					}
				}
			}
			url := srv.URL + pathP("p") + "/export"
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
			}
			var peak uint64
			for b.Loop() {
				growth, _ := concurrentReads(b, url, tok, 1)
				peak = max(peak, growth)
			}
			b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
			b.ReportMetric(float64(body)/(1<<20), "body-MiB")
		})
	}
}
