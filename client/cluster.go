package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Cluster is a cluster's records as typed Go values
// (docs/api.md#the-go-client), as GET K answers them with references
// resolved and, unless the client is made WithoutReveal, credentials
// revealed.
type Cluster struct {
	// Project, Collection and Name name the cluster.
	Project, Collection, Name string
	// Records maps every record name to its record.
	Records map[string]Record
	// Tag is the cluster tag (the ETag of GET K, with references
	// resolved): it changes with every change of the records the answer
	// was built from. "" when the server keeps no cluster tags.
	Tag string
	// Revision is, in a call of Watch's function, the revision of the
	// last change of the project that Watch saw before it read the
	// cluster (docs/api.md#audit-log-and-change-feed); 0 when it saw none
	// (the first call) and from Cluster.
	Revision int64
	// Env is, from a client made WithEnvFile, the cluster's environment
	// file as NAME=value entries (values as they are, unquoted), in the
	// file's order; nil otherwise.
	Env []string
	// Skipped is, from a client made WithEnvFile, how many records the
	// environment file left out because their names are not environment
	// variable names (X-Hds-Skipped-Records).
	Skipped int
}

// Record is one record: its type name and its value.
type Record struct {
	// Type is the type name, upper case: "STRING", "INTEGER", "[]UUID", ...
	Type string
	// Value is the value as a Go value: int64 for INTEGER, float64 for
	// FLOAT, bool for BOOLEAN, nil for NULL, string for STRING,
	// CREDENTIAL, DATE, TIME, DATETIME and UUID (canonical text; a masked
	// credential is "********"), and a slice of those for arrays
	// ([]int64, []float64, []bool, []string; []any of nils for []NULL).
	// A type this package does not know keeps the value as
	// encoding/json decodes it into an any.
	Value any
}

// Cluster reads cluster k of collection col of project p: one GET K with
// reveal=true (unless WithoutReveal), resolve=true (unless
// WithoutResolve) and types=true; with WithEnvFile, format=env instead of
// types=true.
func (c *Client) Cluster(ctx context.Context, p, col, k string) (*Cluster, error) {
	got, _, err := c.fetch(ctx, p, col, k, "")
	return got, err
}

// fetch reads the cluster as Cluster does, with If-None-Match: tag when
// tag is not "": it reports false (and no cluster) when the server
// answered 304 Not Modified.
func (c *Client) fetch(ctx context.Context, p, col, k, tag string) (*Cluster, bool, error) {
	q := url.Values{}
	if c.envFile {
		q.Set("format", "env")
	} else {
		q.Set("types", "true")
	}
	if c.resolve {
		q.Set("resolve", "true")
	}
	if c.reveal {
		q.Set("reveal", "true")
	}
	var h http.Header
	if tag != "" {
		h = http.Header{"If-None-Match": {tag}}
	}
	path := clusterPath(p, col, k)
	resp, err := c.send(ctx, "GET", path, q, h)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && tag != "":
		return nil, false, nil
	case resp.StatusCode != http.StatusOK:
		return nil, false, errorOf(resp, "GET", path)
	}
	if c.envFile {
		got, err := readEnvFile(resp, path)
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, ctx.Err()
			}
			return nil, false, err
		}
		got.Project, got.Collection, got.Name = p, col, k
		return got, true, nil
	}
	var env struct {
		Data struct {
			Name       string                     `json:"name"`
			Project    string                     `json:"project"`
			Collection string                     `json:"collection"`
			Data       map[string]json.RawMessage `json:"data"`
			Types      map[string]string          `json:"types"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, &RequestError{Method: "GET", Path: path, Err: fmt.Errorf("reading the answer: %w", unwrapURLError(err))}
	}
	out := &Cluster{
		Project: env.Data.Project, Collection: env.Data.Collection, Name: env.Data.Name,
		Records: make(map[string]Record, len(env.Data.Data)),
		Tag:     resp.Header.Get("ETag"),
	}
	for name, raw := range env.Data.Data {
		typ, ok := env.Data.Types[name]
		if !ok {
			return nil, false, fmt.Errorf("client: GET %s: the answer has no type for record %q (a server older than v1.3?)", path, name)
		}
		v, err := valueOf(typ, raw)
		if err != nil {
			return nil, false, fmt.Errorf("client: GET %s: record %q: %w", path, name, err)
		}
		out.Records[name] = Record{Type: typ, Value: v}
	}
	return out, true, nil
}

// valueOf turns the JSON value raw of a record of type typ into its Go
// value (Record.Value).
func valueOf(typ string, raw json.RawMessage) (any, error) {
	if elem, ok := strings.CutPrefix(typ, "[]"); ok && scalar(elem) {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("a %s value must be a JSON array", typ)
		}
		switch elem {
		case "INTEGER":
			return elements[int64](elem, items)
		case "FLOAT":
			return elements[float64](elem, items)
		case "BOOLEAN":
			return elements[bool](elem, items)
		case "NULL":
			return elements[any](elem, items)
		default:
			return elements[string](elem, items)
		}
	}
	if !scalar(typ) {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return scalarOf(typ, raw)
}

// elements turns the JSON elements of an array of type []elem into a
// []T.
func elements[T any](elem string, items []json.RawMessage) ([]T, error) {
	out := make([]T, len(items))
	for i, raw := range items {
		v, err := scalarOf(elem, raw)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		if v != nil {
			out[i] = v.(T)
		}
	}
	return out, nil
}

// scalar reports whether typ is a type name of docs/api.md#record-types-and-values
// other than an array.
func scalar(typ string) bool {
	switch typ {
	case "STRING", "INTEGER", "FLOAT", "BOOLEAN", "DATE", "TIME", "DATETIME", "UUID", "NULL", "CREDENTIAL":
		return true
	}
	return false
}

// scalarOf turns the JSON value raw of scalar type typ into its Go value.
func scalarOf(typ string, raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	switch typ {
	case "INTEGER":
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("an INTEGER value must be a whole number in int64 range")
		}
		return n, nil
	case "FLOAT":
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("a FLOAT value must be a JSON number")
		}
		return f, nil
	case "BOOLEAN":
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("a BOOLEAN value must be true or false")
		}
		return b, nil
	case "NULL":
		if string(raw) != "null" {
			return nil, fmt.Errorf("a NULL value must be null")
		}
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("a %s value must be a JSON string", typ)
	}
	return s, nil
}
