package handler

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds/internal/envelope"
)

// The fast reading of an import document (parseDoc) takes a document
// only when it reads it as envelope.Decode into importDoc does; whatever
// else makes it give up, so that the generic decoding answers.

// genericTree reads doc the generic way.
func genericTree(t *testing.T, doc string) (*docTree, error) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(doc))
	r.Header.Set("Content-Type", "application/json")
	var in importDoc
	present, err := envelope.Decode(r, &in)
	if err != nil || !present {
		return nil, err
	}
	return in.tree(), nil
}

// sameTree fails unless a and b hold the same document.
func sameTree(t *testing.T, doc string, a, b *docTree) {
	t.Helper()
	require.Equal(t, a.format == nil, b.format == nil, "%s: format", doc)
	if a.format != nil {
		assert.Equal(t, *a.format, *b.format, "%s: format", doc)
	}
	assert.Equal(t, a.hasColls, b.hasColls, "%s: collections", doc)
	require.Len(t, a.colls, len(b.colls), doc)
	for i, c := range a.colls {
		d := b.colls[i]
		assert.Equal(t, c.name, d.name, doc)
		assert.Equal(t, c.hasClusters, d.hasClusters, doc)
		require.Len(t, c.clusters, len(d.clusters), doc)
		for j, k := range c.clusters {
			l := d.clusters[j]
			assert.Equal(t, k.name, l.name, doc)
			assert.Equal(t, k.hasRecords, l.hasRecords, doc)
			require.Len(t, k.records, len(l.records), doc)
			for n, r := range k.records {
				s := l.records[n]
				assert.Equal(t, r.name, s.name, doc)
				assert.Equal(t, r.typ, s.typ, doc)
				assert.Equal(t, r.hasType, s.hasType, doc)
				assert.Equal(t, string(r.value), string(s.value), doc)
				assert.Equal(t, r.value == nil, s.value == nil, "%s: value present", doc)
			}
		}
	}
}

func TestParseDocAgreesWithDecode(t *testing.T) {
	taken := []string{
		`{"format":"hds/1","collections":{}}`,
		` {"format" : "hds/1" , "collections" : { } } `,
		`{"collections":{},"format":"hds/2"}`,
		`{"format":"hds/1","project":"p","revision":12,"exported_at":"2026-01-01T00:00:00Z","collections":{}}`,
		`{"format":"hds/1","project":{"a":[1,{"b":"}"}]},"revision":null,"exported_at":[],"collections":{}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{}}}}}}`,
		`{"format":"hds/1","collections":{"z":{"clusters":{"k":{"records":{"b":{"type":"STRING","value":"x"},"a":{"value":1,"type":"INTEGER"}}}}},` +
			`"a":{"clusters":{"y":{"records":{}},"x":{"records":{"n":{"type":"NULL"}}}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":{"type":"JSON","value":{"a":[1,2,{"b":"x\"}"}],"c":null}}}}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":{"type":"BOOLEAN","value":true},"s":{"type":"FLOAT","value":-1.5e3},"t":{"type":"NULL","value":null}}}}}}}`,
		`{"format":"hds\/1","collections":{"c\u00e9":{"clusters":{"k\n":{"records":{"r\"":{"type":"STR\u0049NG","value":"a\\b\u00e9"}}}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":{"type":"[]STRING","value":[ "a" , "b" ]}}}}}}}`,
		`{"format":"hds/1","collections":{"é":{"clusters":{"k":{"records":{"日本":{"type":"STRING","value":"😀"}}}}}}}`,
	}
	for _, doc := range taken {
		fast, ok := parseDoc([]byte(strings.TrimSpace(doc)))
		require.True(t, ok, "parseDoc gave up on %s", doc)
		slow, err := genericTree(t, doc)
		require.NoError(t, err, doc)
		sameTree(t, doc, fast, slow)
	}
	refused := []string{
		`{"format":"hds/1"}`,
		`{"format":null,"collections":{}}`,
		`{"format":1,"collections":{}}`,
		`{"format":"hds/1","collections":null}`,
		`{"format":"hds/1","collections":{},"extra":1}`,
		`{"format":"hds/1","Collections":{}}`,
		`{"format":"hds/1","format":"hds/1","collections":{}}`,
		`{"format":"hds/1","collections":{"c":{}}}`,
		`{"format":"hds/1","collections":{"c":null}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{},"x":1}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{}},"c":{"clusters":{}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":null}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":[]}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":{"value":1}}}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":{"type":null}}}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":{"type":"NULL","type":"NULL"}}}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":{"type":"NULL","extra":1}}}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":{"type":"NULL"},"r":{"type":"NULL"}}}}}}}`,
		`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":null}}}}}}`,
		`{"format":"hds/1","collections":{}} {}`,
		`[1]`,
	}
	for _, doc := range refused {
		_, ok := parseDoc([]byte(doc))
		assert.False(t, ok, "parseDoc took %s", doc)
	}
}

// TestReadImportFallsBack: readImport answers what envelope.Decode does
// for the bodies the fast reading does not take.
func TestReadImportFallsBack(t *testing.T) {
	for _, tc := range []struct{ body, contentType, want string }{
		{`{"format":"hds/1","collections":{},"extra":1}`, "application/json", `unknown field "extra"`},
		{`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{"r":{"type":"NULL","extra":1}}}}}}}`, "application/json",
			`unknown field "collections.c.clusters.k.records.r.extra"`},
		{`{"format":"hds/1","collections":{}`, "application/json", "malformed JSON"},
		{`{"format":"hds/1","collections":{}}`, "text/plain", "request bodies must be sent as Content-Type: application/json"},
		{`{"format":"hds/1","collections":{}}`, "application/json; x", "request bodies must be sent as Content-Type: application/json"},
		{"{\"format\":\"\xff\",\"collections\":{}}", "application/json", "not valid UTF-8"},
		{`{"format":"\ud800","collections":{}}`, "application/json", "unpaired UTF-16 surrogate"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
		r.Header.Set("Content-Type", tc.contentType)
		_, _, err := readImport(r)
		require.Error(t, err, tc.body)
		var re *envelope.RequestError
		require.ErrorAs(t, err, &re, tc.body)
		assert.Contains(t, re.Details, tc.want, tc.body)
	}
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("  "))
	r.Header.Set("Content-Type", "application/json")
	_, present, err := readImport(r)
	assert.NoError(t, err)
	assert.False(t, present, "white space only is no body")
}

// bigDoc is an import document of n records of about 90 bytes each.
func bigDoc(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"format":"hds/1","collections":{"c":{"clusters":{"k":{"records":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"record-%06d":{"type":"STRING","value":"%s-%06d"}`, i, strings.Repeat("v", 40), i)
	}
	b.WriteString(`}}}}}}`)
	return b.Bytes()
}

// TestReadImportHeap: the document read and checked holds less than
// three times the body (the generic decoding held about ten times it).
func TestReadImportHeap(t *testing.T) {
	body := bigDoc(50_000)
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	doc, present, err := readImport(r)
	require.NoError(t, err)
	require.True(t, present)
	require.NoError(t, checkDoc(doc))
	r = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d records, body %d bytes: the checked document holds %d bytes (%.2fx)", len(doc.colls[0].clusters[0].records),
		len(body), live, float64(live)/float64(len(body)))
	assert.Less(t, live, int64(3*len(body)))
	runtime.KeepAlive(doc)
	runtime.KeepAlive(body)
}
