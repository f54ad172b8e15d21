package handler

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hds-go/hds/internal/envelope"
	"github.com/hds-go/hds/store"
)

// The document of POST P/import, read into a docTree: every level's
// members in name order, each record its name, type and value, so that a
// document of many small records costs a small multiple of its size
// (issue 24: the maps of the generic decoding cost 25 to 55 times it).
//
// parseDoc reads a well-formed document of the expected shape in one
// pass over the body, its values slices of it. Whatever it does not
// expect (malformed JSON, an unknown or repeated key, a JSON type other
// than the expected one, a missing level) makes it give up, and the
// document is decoded again the generic way (envelope.Decode into
// importDoc), whose errors are the contract's.

// docTree is an import document: its format and collections.
type docTree struct {
	format *string
	// colls are the collections in name order; hasColls is false when
	// the document has no "collections".
	colls    []docColl
	hasColls bool
}

// docColl is a collection of the document.
type docColl struct {
	name        string
	clusters    []docCluster
	hasClusters bool
	// exists: the project has it (planning).
	exists bool
}

// docCluster is a cluster of the document.
type docCluster struct {
	name       string
	records    []docRec
	hasRecords bool
	exists     bool
}

// docRec is a record of the document. Before checkDoc, typ is as
// written (hasType false when there is none) and value as written
// (nil when there is none); after it, typ is the type and value its
// canonical plain value, unless masked.
type docRec struct {
	name    string
	typ     store.DataType
	value   json.RawMessage
	hasType bool
	masked  bool
	// state is what planning found: the record is not in the project
	// (recNew), holds the value already (recSame), needs an update
	// (recUpdate) or cannot be imported (recBad).
	state uint8
	// id is the id of the record in the project (an update) or the id a
	// new credential is sealed to; version the version the update
	// expects.
	id      string
	version int64
}

// The states of a docRec.
const (
	recNew uint8 = iota
	recSame
	recUpdate
	recBad
)

// readImport reads the body of POST P/import into a docTree: fast when
// it can (parseDoc), otherwise with envelope.Decode, which gives the
// contract's errors. present is false for an empty body.
func readImport(r *http.Request) (doc *docTree, present bool, err error) {
	body, err := readBody(r)
	if err != nil {
		return nil, false, err
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && isJSONRequest(r) && utf8.Valid(trimmed) && !envelope.HasLoneSurrogate(trimmed) && json.Valid(trimmed) {
		if doc, ok := parseDoc(trimmed); ok {
			return doc, true, nil
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var in importDoc
	present, err = envelope.Decode(r, &in)
	if err != nil || !present {
		return nil, present, err
	}
	return in.tree(), true, nil
}

// readBody reads the whole body, in one buffer of its declared length
// when it has one. Its errors are envelope.Decode's.
func readBody(r *http.Request) ([]byte, error) {
	var body []byte
	var err error
	// The body limit (middleware.BodyLimit) has refused a longer declared
	// length already.
	if n := r.ContentLength; n > 0 && n <= 1<<30 {
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(r.Body)
	}
	if err != nil {
		r.Body = io.NopCloser(errReader{err})
		_, err = envelope.Decode(r, &struct{}{})
		return nil, err
	}
	return body, nil
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// isJSONRequest reports whether the request says its body is JSON, as
// envelope.Decode requires.
func isJSONRequest(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// tree is the document as a docTree.
func (in *importDoc) tree() *docTree {
	doc := &docTree{format: in.Format, hasColls: in.Collections != nil}
	for c, coll := range in.Collections {
		dc := docColl{name: c, hasClusters: coll.Clusters != nil}
		for k, clus := range coll.Clusters {
			dk := docCluster{name: k, hasRecords: clus.Records != nil}
			for name, rec := range clus.Records {
				dr := docRec{name: name, value: rec.Value}
				if rec.Type != nil {
					dr.typ, dr.hasType = store.DataType(*rec.Type), true
				}
				dk.records = append(dk.records, dr)
			}
			sortByName(dk.records, func(r *docRec) string { return r.name })
			dc.clusters = append(dc.clusters, dk)
		}
		sortByName(dc.clusters, func(k *docCluster) string { return k.name })
		doc.colls = append(doc.colls, dc)
	}
	sortByName(doc.colls, func(c *docColl) string { return c.name })
	return doc
}

// sortByName sorts s by the names name gives.
func sortByName[T any](s []T, name func(*T) string) {
	// Sorted by index, so that no element is copied to be compared.
	idx := make([]int32, len(s))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return strings.Compare(name(&s[a]), name(&s[b])) })
	sorted := make([]T, len(s))
	for i, j := range idx {
		sorted[i] = s[j]
	}
	copy(s, sorted)
}

// findByName returns the index of the element of s, sorted by name,
// named key, or -1.
func findByName[T any](s []T, key string, name func(*T) string) int {
	i, ok := slices.BinarySearchFunc(s, key, func(e T, key string) int { return strings.Compare(name(&e), key) })
	if !ok {
		return -1
	}
	return i
}

// docParser reads a document that is valid JSON, valid UTF-8 and free of
// lone surrogate escapes (readImport checks these first), so it only
// follows the structure. Its methods report false when the document is
// not of the expected shape.
type docParser struct {
	b []byte
	i int
}

// parseDoc reads the document b, or reports false.
func parseDoc(b []byte) (*docTree, bool) {
	p := &docParser{b: b}
	doc := &docTree{}
	seen := map[string]bool{}
	ok := p.object(func(key string) bool {
		if seen[key] {
			return false
		}
		seen[key] = true
		switch key {
		case "format":
			s, ok := p.str()
			doc.format = &s
			return ok
		case "project", "revision", "exported_at":
			p.skip()
			return true
		case "collections":
			doc.hasColls = true
			return p.object(func(c string) bool {
				dc := docColl{name: c}
				if !p.object(func(key string) bool {
					if key != "clusters" || dc.hasClusters {
						return false
					}
					dc.hasClusters = true
					return p.object(func(k string) bool {
						dk, ok := p.cluster(k)
						dc.clusters = append(dc.clusters, dk)
						return ok
					})
				}) || !dc.hasClusters {
					return false
				}
				doc.colls = append(doc.colls, dc)
				return true
			})
		}
		return false
	})
	p.ws()
	if !ok || p.i != len(p.b) || !doc.hasColls {
		return nil, false
	}
	if !sortedUnique(doc.colls, func(c *docColl) string { return c.name }) {
		return nil, false
	}
	for i := range doc.colls {
		c := &doc.colls[i]
		if !sortedUnique(c.clusters, func(k *docCluster) string { return k.name }) {
			return nil, false
		}
		for j := range c.clusters {
			if !sortedUnique(c.clusters[j].records, func(r *docRec) string { return r.name }) {
				return nil, false
			}
		}
	}
	return doc, true
}

// cluster reads the cluster named k: {"records": {NAME: {"type", "value"}}}.
func (p *docParser) cluster(k string) (docCluster, bool) {
	dk := docCluster{name: k}
	ok := p.object(func(key string) bool {
		if key != "records" || dk.hasRecords {
			return false
		}
		dk.hasRecords = true
		return p.object(func(name string) bool {
			dr := docRec{name: name}
			hasValue := false
			if !p.object(func(key string) bool {
				switch {
				case key == "type" && !dr.hasType:
					s, ok := p.str()
					dr.typ, dr.hasType = store.DataType(s), true
					return ok
				case key == "value" && !hasValue:
					hasValue = true
					dr.value = p.skip()
					return true
				}
				return false
			}) || !dr.hasType {
				return false
			}
			dk.records = append(dk.records, dr)
			return true
		})
	})
	return dk, ok && dk.hasRecords
}

// sortedUnique sorts s by name and reports whether no two share one.
func sortedUnique[T any](s []T, name func(*T) string) bool {
	sortByName(s, name)
	for i := 1; i < len(s); i++ {
		if name(&s[i-1]) == name(&s[i]) {
			return false
		}
	}
	return true
}

// ws skips white space.
func (p *docParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// object reads an object, calling member for each key with the parser
// at the key's value, which member reads.
func (p *docParser) object(member func(key string) bool) bool {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		key, ok := p.str()
		if !ok {
			return false
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		if !member(key) {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string.
func (p *docParser) str() (string, bool) {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	start := p.i
	escaped := false
	for p.i++; p.i < len(p.b); p.i++ {
		switch p.b[p.i] {
		case '\\':
			escaped = true
			p.i++
		case '"':
			p.i++
			raw := p.b[start:p.i]
			if !escaped {
				return string(raw[1 : len(raw)-1]), true
			}
			var s string
			return s, json.Unmarshal(raw, &s) == nil
		}
	}
	return "", false
}

// skip reads any value and returns its text.
func (p *docParser) skip() []byte {
	p.ws()
	start, depth := p.i, 0
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; c {
		case '"':
			for p.i++; p.i < len(p.b) && p.b[p.i] != '"'; p.i++ {
				if p.b[p.i] == '\\' {
					p.i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return p.b[start:p.i]
			}
			depth--
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return p.b[start:p.i]
			}
		}
		if depth == 0 && (p.b[p.i] == '"' || p.b[p.i] == '}' || p.b[p.i] == ']') {
			p.i++
			return p.b[start:p.i]
		}
	}
	return p.b[start:p.i]
}
