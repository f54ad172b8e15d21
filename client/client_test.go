package client

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestNewBaseURL(t *testing.T) {
	for _, tc := range []struct {
		url   string
		opts  []Option
		ok    bool
		base  string
		error string
	}{
		{url: "https://hds.example.com", ok: true, base: "https://hds.example.com"},
		{url: "https://hds.example.com/", ok: true, base: "https://hds.example.com"},
		{url: "https://example.com/hds/", ok: true, base: "https://example.com/hds"},
		{url: "https://example.com:8443/a/b", ok: true, base: "https://example.com:8443/a/b"},
		{url: "http://127.0.0.1:8080", ok: true, base: "http://127.0.0.1:8080"},
		{url: "http://127.5.0.1", ok: true, base: "http://127.5.0.1"},
		{url: "http://[::1]:8080/hds", ok: true, base: "http://[::1]:8080/hds"},
		{url: "http://localhost:8080", ok: true, base: "http://localhost:8080"},
		{url: "http://hds.example.com", opts: []Option{WithPlainHTTP()}, ok: true, base: "http://hds.example.com"},
		{url: "http://10.0.0.5:8080", opts: []Option{WithPlainHTTP()}, ok: true, base: "http://10.0.0.5:8080"},
		{url: "http://hds.example.com", error: "in clear"},
		{url: "http://10.0.0.5:8080", error: "in clear"},
		{url: "http://localhost.example.com", error: "in clear"},
		{url: "http://0.0.0.0:8080", error: "in clear"},
		{url: "ftp://hds.example.com", error: "http:// or https://"},
		{url: "hds.example.com", error: "http:// or https://"},
		{url: "", error: "http:// or https://"},
		{url: "https://", error: "http:// or https://"},
		{url: "https:hds.example.com", error: "http:// or https://"},
		{url: "https://hds.example.com/?x=1", error: "no query"},
		{url: "https://hds.example.com/#top", error: "no fragment"},
		{url: "https://user:hunter2@hds.example.com%zz", error: "http:// or https://"},
		{url: "https://hds.example.com", opts: []Option{WithToken("a\nb")}, error: "one line"},
	} {
		c, err := New(tc.url, tc.opts...)
		if !tc.ok {
			if err == nil || !strings.Contains(err.Error(), tc.error) {
				t.Errorf("New(%q): error %v, want one saying %q", tc.url, err, tc.error)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("New(%q): the error shows the password: %v", tc.url, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("New(%q): %v", tc.url, err)
			continue
		}
		if c.base != tc.base {
			t.Errorf("New(%q): base %q, want %q", tc.url, c.base, tc.base)
		}
	}
}

// WithHTTPClient's client sends the requests; by default credentials are
// revealed, WithoutReveal leaves reveal=true out, and the token goes in
// the Authorization header only.
func TestOptions(t *testing.T) {
	var queries, auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		auths = append(auths, r.Header.Get("Authorization"))
		w.Header().Set("ETag", `"t1"`)
		w.Write([]byte(`{"success":true,"data":{"name":"k","project":"p","collection":"c","data":{},"types":{}},"message":"OK"}`))
	}))
	defer srv.Close()
	used := 0
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		used++
		return http.DefaultTransport.RoundTrip(r)
	})}
	for _, opts := range [][]Option{
		{WithToken("tok"), WithHTTPClient(hc)},
		{WithToken("tok"), WithHTTPClient(hc), WithoutReveal()},
		{WithHTTPClient(hc)},
	} {
		c, err := New(srv.URL, opts...)
		if err != nil {
			t.Fatal(err)
		}
		k, err := c.Cluster(t.Context(), "p", "c", "k")
		if err != nil {
			t.Fatal(err)
		}
		if k.Tag != `"t1"` {
			t.Errorf("tag %q", k.Tag)
		}
	}
	want := []string{"resolve=true&reveal=true&types=true", "resolve=true&types=true", "resolve=true&reveal=true&types=true"}
	if strings.Join(queries, " ") != strings.Join(want, " ") {
		t.Errorf("queries %q, want %q", queries, want)
	}
	if strings.Join(auths, ",") != "Bearer tok,Bearer tok," {
		t.Errorf("Authorization headers %q", auths)
	}
	if used != 3 {
		t.Errorf("WithHTTPClient's client sent %d requests, want 3", used)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A program that imports the client pays for no server code: the package
// imports only the standard library and internal packages of this module
// that do too (never the root package, handler or store).
func TestImportsOnlyStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/hds-go/hds"
	seen := 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		path, standard, _ := strings.Cut(strings.TrimSpace(line), " ")
		seen++
		switch {
		case standard == "true":
		case path == module+"/client":
		case strings.HasPrefix(path, module+"/internal/"):
		default:
			t.Errorf("the client imports %s, neither standard nor an internal package of the module", path)
		}
		if path == module {
			t.Errorf("the client imports the root package %s", path)
		}
		for _, server := range []string{"/handler", "/store", "/auth", "/middleware"} {
			if path == module+server || strings.HasPrefix(path, module+server+"/") {
				t.Errorf("the client imports server code: %s", path)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list listed %d packages: %s", seen, out)
	}
}

// An answer that does not hold what the contract says is an error naming
// the record, never showing a value; a type this package does not know
// keeps its value as encoding/json reads it.
func TestClusterAnswerChecked(t *testing.T) {
	for _, tc := range []struct {
		data, types string
		says        string
		want        any
	}{
		{data: `{"v":"secret-text"}`, types: `{}`, says: `no type for record "v"`},
		{data: `{"v":"secret-text"}`, types: `{"v":"INTEGER"}`, says: `record "v": an INTEGER value must be`},
		{data: `{"v":1.5}`, types: `{"v":"INTEGER"}`, says: `record "v": an INTEGER value must be`},
		{data: `{"v":["a",1]}`, types: `{"v":"[]STRING"}`, says: `record "v": element 1: a STRING value must be`},
		{data: `{"v":{"a":1}}`, types: `{"v":"MAP"}`, want: map[string]any{"a": 1.0}},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"success":true,"data":{"name":"k","data":` + tc.data + `,"types":` + tc.types + `},"message":"OK"}`))
		}))
		c, err := New(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		k, err := c.Cluster(t.Context(), "p", "c", "k")
		srv.Close()
		if tc.says == "" {
			if err != nil || !reflect.DeepEqual(k.Records["v"].Value, tc.want) {
				t.Errorf("%s %s: %v %#v", tc.data, tc.types, err, k)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "secret-text") {
			t.Errorf("%s %s: error %v, want one saying %q (and no value)", tc.data, tc.types, err, tc.says)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Status: 404, Code: "RESOURCE_NOT_FOUND", Message: "Resource not found", Details: `cluster "x" not found`},
			`hds: 404 RESOURCE_NOT_FOUND: Resource not found: cluster "x" not found`},
		{Error{Status: 502, Message: "Bad Gateway"}, "hds: 502: Bad Gateway"},
		{Error{Status: 400, Code: "INVALID_REQUEST", Message: "Invalid request", Details: "a\nb"}, "hds: 400 INVALID_REQUEST: Invalid request: a b"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
