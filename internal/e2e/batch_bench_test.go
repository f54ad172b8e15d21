package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkBatchUpserts sends POST P/batch of 1000 upserts
// (docs/api.md#batch-export-and-import) through the full handler: each
// batch updates the 500 records the one before it created and creates 500
// new ones (at most 100 batches: the cluster's quota).
func BenchmarkBatchUpserts(b *testing.B) {
	for _, kind := range storeKinds {
		b.Run(kind.name, func(b *testing.B) {
			f := newBenchFixture(b, kind, 0)
			body := func(i int) string {
				var sb strings.Builder
				sb.WriteString(`{"operations":[`)
				for j := range 1000 {
					if j > 0 {
						sb.WriteByte(',')
					}
					fmt.Fprintf(&sb, `{"op":"upsert","collection":"c","cluster":"w","record":"r%06d","type":"INTEGER","value":%d}`, i*500+j, i)
				}
				sb.WriteString(`]}`)
				return sb.String()
			}
			f.mustDo(b, http.MethodPost, "/api/v1/projects/p/batch", body(0), http.StatusOK)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if i > 190 {
					b.Fatal("the cluster is full: use -benchtime Nx with N < 190")
				}
				f.mustDo(b, http.MethodPost, "/api/v1/projects/p/batch", body(i), http.StatusOK)
			}
		})
	}
}
