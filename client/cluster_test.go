package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/hds-go/hds"
)

// allTypes fills cluster web/prod/k with one record of every type, a
// credential and a reference to it among them.
func allTypes(s *testServer) {
	s.t.Helper()
	s.tree("web", "prod", "k")
	for _, r := range [][3]string{
		{"s", "STRING", `"text"`}, {"i", "INTEGER", "-9223372036854775808"}, {"f", "FLOAT", "3.25"},
		{"b", "BOOLEAN", "true"}, {"d", "DATE", `"2026-11-22"`}, {"t", "TIME", `"08:18:19.5"`},
		{"dt", "DATETIME", `"2026-11-22T09:18:19.500+01:00"`}, {"u", "UUID", `"0190F1E4-0000-7000-8000-000000000001"`},
		{"n", "NULL", "null"}, {"pw", "CREDENTIAL", `"s3cret"`},
		{"ss", "[]STRING", `["a","b"]`}, {"is", "[]INTEGER", "[1,-2]"}, {"fs", "[]FLOAT", "[0.5,1e21]"},
		{"bs", "[]BOOLEAN", "[true,false]"}, {"ds", "[]DATE", `["2026-01-02"]`}, {"ts", "[]TIME", `["23:59:59"]`},
		{"dts", "[]DATETIME", `["2026-11-22T08:18:19Z"]`}, {"us", "[]UUID", `["0190f1e4-0000-7000-8000-000000000002"]`},
		{"ns", "[]NULL", "[null,null]"}, {"pws", "[]CREDENTIAL", `["x","y"]`},
		{"url", "STRING", `"db://${pw}@${s}"`}, {"empty", "[]INTEGER", "[]"},
	} {
		s.put("web", "prod", "k", r[0], r[1], r[2])
	}
}

func TestClusterTypedValues(t *testing.T) {
	s := newTestServer(t)
	allTypes(s)
	k, err := s.client().Cluster(t.Context(), "web", "prod", "k")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Record{
		"s": {"STRING", "text"}, "i": {"INTEGER", int64(-9223372036854775808)}, "f": {"FLOAT", 3.25},
		"b": {"BOOLEAN", true}, "d": {"DATE", "2026-11-22"}, "t": {"TIME", "08:18:19.5"},
		"dt": {"DATETIME", "2026-11-22T09:18:19.500+01:00"}, "u": {"UUID", "0190f1e4-0000-7000-8000-000000000001"},
		"n": {"NULL", nil}, "pw": {"CREDENTIAL", "s3cret"},
		"ss": {"[]STRING", []string{"a", "b"}}, "is": {"[]INTEGER", []int64{1, -2}}, "fs": {"[]FLOAT", []float64{0.5, 1e21}},
		"bs": {"[]BOOLEAN", []bool{true, false}}, "ds": {"[]DATE", []string{"2026-01-02"}}, "ts": {"[]TIME", []string{"23:59:59"}},
		"dts": {"[]DATETIME", []string{"2026-11-22T08:18:19Z"}}, "us": {"[]UUID", []string{"0190f1e4-0000-7000-8000-000000000002"}},
		"ns": {"[]NULL", []any{nil, nil}}, "pws": {"[]CREDENTIAL", []string{"x", "y"}},
		"url": {"STRING", "db://s3cret@text"}, "empty": {"[]INTEGER", []int64{}},
	}
	for name, w := range want {
		if got := k.Records[name]; !reflect.DeepEqual(got, w) {
			t.Errorf("record %s: got %#v, want %#v", name, got, w)
		}
	}
	if len(k.Records) != len(want) {
		t.Errorf("%d records, want %d", len(k.Records), len(want))
	}
	if k.Project != "web" || k.Collection != "prod" || k.Name != "k" {
		t.Errorf("names: %q %q %q", k.Project, k.Collection, k.Name)
	}
	// The tag is the cluster tag with references resolved, as GET K
	// answers it.
	status, _ := s.do("GET", clusterPath("web", "prod", "k"), "")
	if status != http.StatusOK {
		t.Fatal(status)
	}
	req, _ := http.NewRequest("GET", s.srv.URL+clusterPath("web", "prod", "k")+"?resolve=true", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if tag := resp.Header.Get("ETag"); k.Tag == "" || k.Tag != tag {
		t.Errorf("Tag %q, want the ETag of GET K?resolve=true %q", k.Tag, tag)
	}
}

func TestClusterWithoutReveal(t *testing.T) {
	s := newTestServer(t)
	allTypes(s)
	viewer := s.apiToken("web", "viewer")
	// A viewer's reveal=true is 403: the default client is refused...
	_, err := s.client(WithToken(viewer)).Cluster(t.Context(), "web", "prod", "k")
	var e *Error
	if !errors.As(err, &e) || e.Status != 403 || e.Code != "AUTHORIZATION_FAILED" || e.Message != "Insufficient permissions" {
		t.Fatalf("viewer with reveal: got %v, want a 403 *Error", err)
	}
	// ...one made WithoutReveal gets credentials masked.
	k, err := s.client(WithToken(viewer), WithoutReveal()).Cluster(t.Context(), "web", "prod", "k")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Record{
		"pw": {"CREDENTIAL", "********"}, "pws": {"[]CREDENTIAL", []string{"********", "********"}},
		"url": {"STRING", "********"}, "s": {"STRING", "text"},
	} {
		if got := k.Records[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("record %s: got %#v, want %#v", name, got, want)
		}
	}
}

func TestClusterErrors(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	s.put("web", "prod", "k", "bad", "STRING", `"${nowhere}"`)
	c := s.client()
	for _, tc := range []struct {
		what                   string
		c                      *Client
		p, col, k              string
		status                 int
		code, message, details string
	}{
		{"missing cluster", c, "web", "prod", "nope", 404, "RESOURCE_NOT_FOUND", "", "nope"},
		{"missing project", c, "nope", "prod", "k", 404, "RESOURCE_NOT_FOUND", "", ""},
		{"no token", s.client(WithToken("")), "web", "prod", "k", 401, "AUTHENTICATION_FAILED", "No authorization token provided", ""},
		{"bad token", s.client(WithToken("nonsense")), "web", "prod", "k", 401, "AUTHENTICATION_FAILED", "Invalid or expired token", ""},
	} {
		_, err := tc.c.Cluster(t.Context(), tc.p, tc.col, tc.k)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: got %v, want a *Error", tc.what, err)
			continue
		}
		if e.Status != tc.status || e.Code != tc.code || (tc.message != "" && e.Message != tc.message) || !strings.Contains(e.Details, tc.details) {
			t.Errorf("%s: got %+v, want %d %s %q %q", tc.what, e, tc.status, tc.code, tc.message, tc.details)
		}
		if !strings.Contains(e.Error(), tc.code) {
			t.Errorf("%s: Error() %q does not name the code", tc.what, e.Error())
		}
	}
	// A reference that does not resolve: 422 with the envelope's details.
	s.tree("api", "prod", "k")
	s.put("api", "prod", "k", "bad", "STRING", `"${nowhere}"`)
	_, err := c.Cluster(t.Context(), "api", "prod", "k")
	var e *Error
	if !errors.As(err, &e) || e.Status != 422 || e.Code != "UNRESOLVED_REFERENCE" || e.Message != "Unresolved reference" ||
		e.Details != "record bad: ${nowhere}: not found" {
		t.Errorf("unresolved: got %#v", err)
	}
	// A cancelled context is the context's error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Cluster(ctx, "web", "prod", "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

// A path in the base URL is kept: a handler mounted under /hds/.
func TestClusterMountedUnderPath(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	s.put("web", "prod", "k", "port", "INTEGER", "5432")
	mux := http.NewServeMux()
	mux.Handle("/hds/", http.StripPrefix("/hds", s.srv.Config.Handler))
	mounted := httptest.NewServer(mux)
	defer mounted.Close()
	for _, base := range []string{mounted.URL + "/hds", mounted.URL + "/hds/"} {
		c, err := New(base, WithToken(s.token))
		if err != nil {
			t.Fatal(err)
		}
		k, err := c.Cluster(t.Context(), "web", "prod", "k")
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if got := k.Records["port"].Value; got != int64(5432) {
			t.Errorf("%s: port %v", base, got)
		}
	}
}

// Names are percent-encoded in the path.
func TestClusterNamesEncoded(t *testing.T) {
	s := newTestServer(t, hds.WithCredentialKey(make([]byte, 32)))
	s.must("POST", "/api/v1/projects", `{"name":"my project?"}`, http.StatusCreated)
	s.must("POST", projectPath("my project?")+"/collections", `{"name":"a%b"}`, http.StatusCreated)
	s.must("POST", projectPath("my project?")+"/collections/a%25b/clusters", `{"name":"#k"}`, http.StatusCreated)
	s.put("my project?", "a%b", "#k", "x", "BOOLEAN", "false")
	k, err := s.client().Cluster(t.Context(), "my project?", "a%b", "#k")
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Records["x"]; got.Type != "BOOLEAN" || got.Value != false {
		t.Errorf("x: %#v", got)
	}
}
