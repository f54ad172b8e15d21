package client

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
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
