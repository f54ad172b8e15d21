package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
)

// TestQuotaBatch checks the quotas inside POST P/batch and POST P/import
// on every store (docs/api.md#limits-rate-limits-and-quotas and
// docs/api.md#batch-export-and-import): the batch is 403 QUOTA_EXCEEDED,
// message "Quota exceeded", details "operation N: " followed by the quota,
// and changes nothing; the import is refused as a whole the same way.
func TestQuotaBatch(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind storeKind) {
		c := newServer(t, kind, hds.WithQuotas(store.Quotas{MaxRecordsPerCluster: 2, MaxBytesPerProject: 200}))
		tok := c.token("alice")
		c.tree(tok, "p", "c", "k")
		kpath := pathK("p", "c", "k")
		c.addRecord(tok, kpath, "a", "INTEGER", "1")
		before := c.clusterData(t, kpath, tok)

		op := func(name string) string {
			return `{"op":"create","collection":"c","cluster":"k","record":"` + name + `","type":"INTEGER","value":1}`
		}
		status, _, env := c.do("POST", pathP("p")+"/batch", batchBody(op("b"), op("x"), op("y")), tok)
		wantError(t, "a batch whose 2nd create passes max_records_per_cluster", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		assert.Equal(t, "operation 1: max_records_per_cluster: at most 2 records per cluster", env.details(), "details")
		assert.Equal(t, before, c.clusterData(t, kpath, tok), "the refused batch changed nothing")

		big := `"` + strings.Repeat("z", 200) + `"`
		status, _, env = c.do("POST", pathP("p")+"/batch", batchBody(
			`{"op":"update","collection":"c","cluster":"k","record":"a","value":2}`,
			`{"op":"update","collection":"c","cluster":"k","record":"a","type":"STRING","value":`+big+`}`,
		), tok)
		wantError(t, "a batch whose 2nd op passes max_bytes_per_project", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		assert.Equal(t, "operation 1: max_bytes_per_project: at most 200 bytes of names and values per project", env.details(), "details")
		assert.Equal(t, before, c.clusterData(t, kpath, tok), "the refused batch changed nothing")

		doc := `{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{
			"b":{"type":"INTEGER","value":2},"x":{"type":"INTEGER","value":3}}}}}}}`
		status, _, env = c.do("POST", pathP("p")+"/import", doc, tok)
		wantError(t, "an import past max_records_per_cluster", status, env, http.StatusForbidden, "QUOTA_EXCEEDED", "Quota exceeded")
		wantDetails(t, "an import past max_records_per_cluster", env, "max_records_per_cluster", "2")
		assert.Equal(t, before, c.clusterData(t, kpath, tok), "the refused import changed nothing")
	})
}
