package client

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The environment file (WithEnvFile), WithoutResolve and what the errors
// say of their request.

func TestParseEnvFile(t *testing.T) {
	vars, err := parseEnvFile([]byte("A='x'\\''y'\nB=''\n_c='a\nb'\\'''\\'''\n"))
	if err != nil || !reflect.DeepEqual(vars, []string{"A=x'y", "B=", "_c=a\nb''"}) {
		t.Errorf("parseEnvFile: %q, %v", vars, err)
	}
	if vars, err := parseEnvFile(nil); err != nil || len(vars) != 0 {
		t.Errorf("parseEnvFile(nil): %q, %v", vars, err)
	}
	for _, bad := range []string{"A=x\n", "1A='x'\n", "A='x\n", "A='x'y'\n", "='x'\n", "A-B='x'\n", "A='x'\\'\n"} {
		if _, err := parseEnvFile([]byte(bad)); !errors.Is(err, errMalformedEnv) {
			t.Errorf("parseEnvFile(%q): %v, want errMalformedEnv", bad, err)
		}
	}
}

// WithEnvFile reads GET K?format=env: its variables (credentials
// revealed, references resolved), the records it left out and the
// cluster tag; WithoutResolve leaves references as stored.
func TestClusterEnvFile(t *testing.T) {
	s := newTestServer(t)
	s.tree("web", "prod", "k")
	s.put("web", "prod", "k", "HOST", "STRING", `"h1"`)
	s.put("web", "prod", "k", "PW", "CREDENTIAL", `"it's"`)
	s.put("web", "prod", "k", "DSN", "STRING", `"db://${PW}@${HOST}"`)
	s.put("web", "prod", "k", "not-a-name", "STRING", `"x"`)
	k, err := s.client(WithEnvFile()).Cluster(t.Context(), "web", "prod", "k")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"DSN=db://it's@h1", "HOST=h1", "PW=it's"}; !reflect.DeepEqual(k.Env, want) {
		t.Errorf("Env %q, want %q", k.Env, want)
	}
	if k.Skipped != 1 || k.Tag == "" || k.Records != nil || k.Name != "k" || k.Collection != "prod" || k.Project != "web" {
		t.Errorf("Skipped %d, Tag %q, Records %v, names %s/%s/%s", k.Skipped, k.Tag, k.Records, k.Project, k.Collection, k.Name)
	}
	if got := s.served(func(r seen) bool { return r.method == "GET" && r.path == clusterPath("web", "prod", "k") }); len(got) != 1 ||
		got[0].query != "format=env&resolve=true&reveal=true" {
		t.Errorf("requests %+v, want one with format=env&resolve=true&reveal=true", got)
	}

	k, err = s.client(WithEnvFile(), WithoutResolve()).Cluster(t.Context(), "web", "prod", "k")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"DSN=db://${PW}@${HOST}", "HOST=h1", "PW=it's"}; !reflect.DeepEqual(k.Env, want) {
		t.Errorf("WithoutResolve: Env %q, want %q", k.Env, want)
	}
	got, err := s.client(WithoutResolve()).Cluster(t.Context(), "web", "prod", "k")
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Records["DSN"].Value; v != "db://${PW}@${HOST}" {
		t.Errorf("WithoutResolve: DSN %v, want the reference as stored", v)
	}
}

// An answer that is not an environment file is a *RequestError that is
// Answered (not an outage), never quoting what the server sent; one cut
// short is not Answered.
func TestClusterEnvFileMalformed(t *testing.T) {
	for _, tc := range []struct{ what, contentType, body, want string }{
		{"bad quoting", "text/plain; charset=utf-8", "A='pa'ss-secret\n", "the environment file is malformed"},
		{"no newline", "text/plain; charset=utf-8", "A='k1-secret'", "the environment file is malformed"},
		{"cluster data", "application/json; charset=utf-8", `{"success":true,"data":{"data":{"A":"k1-secret"}}}`,
			`the server did not answer with an environment file (Content-Type "application/json; charset=utf-8"): it may be older than API v1.1`},
	} {
		t.Run(tc.what, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, err := New(srv.URL, WithEnvFile())
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Cluster(t.Context(), "p", "c", "k")
			var re *RequestError
			if !errors.As(err, &re) || !re.Answered || re.Method != "GET" || re.Path != "/api/v1/projects/p/collections/c/clusters/k" ||
				re.Err.Error() != tc.want {
				t.Fatalf("error %#v (%v), want an Answered RequestError of GET K saying %q", re, err, tc.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error quotes the answer: %v", err)
			}
			if retryable(err) {
				t.Error("a malformed answer is retried by Watch")
			}
		})
	}
}

// *Error names the request it answers; a request that got no answer is
// a *RequestError that is not Answered, whose Err tells a failure of TLS
// apart.
func TestErrorNamesTheRequest(t *testing.T) {
	s := newTestServer(t)
	_, err := s.client().Cluster(t.Context(), "nope", "c", "k")
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Method != "GET" ||
		e.Path != "/api/v1/projects/nope/collections/c/clusters/k" {
		t.Fatalf("error %#v, want a 404 of GET /api/v1/projects/nope/collections/c/clusters/k", err)
	}

	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	c, err := New(tlsSrv.URL, WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Cluster(t.Context(), "p", "c", "k")
	var re *RequestError
	if !errors.As(err, &re) || re.Answered || re.Path != "/api/v1/projects/p/collections/c/clusters/k" ||
		!errors.As(err, new(*tls.CertificateVerificationError)) {
		t.Fatalf("error %#v (%v), want a RequestError of a certificate that does not verify", re, err)
	}
	if !retryable(err) {
		t.Error("a request that got no answer is not retried by Watch")
	}
}
