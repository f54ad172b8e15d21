package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/hds-go/hds/client"
)

// The client side of the example (docs/api.md#the-standalone-server):
// the commands run, export, import, diff and promote talk to a running
// hds server over HTTP or HTTPS, at -url or HDS_URL, with the token in
// HDS_TOKEN (a user token or an API token), trusting the CAs of
// HDS_CA_FILE besides the system's.

// defaultServerURL is the server the client commands talk to when neither
// -url nor HDS_URL names one: the example's own default address.
const defaultServerURL = "http://127.0.0.1:8080"

// apiClient sends requests to one hds server.
type apiClient struct {
	base  string // scheme, host and the mount prefix, without a trailing '/'
	token string // "" sends no Authorization header
	http  *http.Client
}

// clientFlags adds the flags every client command shares to fs.
func clientFlags(fs *flag.FlagSet) *string {
	return fs.String("url", "", "the hds server's `URL` (default $HDS_URL, else "+defaultServerURL+")")
}

// newAPIClient returns a client of the server named by urlFlag, HDS_URL
// or the default, with the token of HDS_TOKEN.
func newAPIClient(e *env, urlFlag string) (*apiClient, error) {
	base := urlFlag
	if base == "" {
		base = e.getenv("HDS_URL")
	}
	if base == "" {
		base = defaultServerURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		// The URL itself is not repeated: it may carry a password.
		return nil, errors.New("the server URL (-url or HDS_URL) must be an http:// or https:// URL such as " + defaultServerURL)
	}
	hc, err := httpClient(e.getenv("HDS_CA_FILE"))
	if err != nil {
		return nil, err
	}
	return &apiClient{base: strings.TrimRight(base, "/"), token: e.getenv("HDS_TOKEN"), http: hc}, nil
}

// httpClient is the HTTP client of the client commands: it trusts the
// system's roots and, when caFile is not empty, the PEM certificates of
// caFile too (HDS_CA_FILE, docs/api.md#serving-over-tls-v13).
func httpClient(caFile string) (*http.Client, error) {
	if caFile == "" {
		return http.DefaultClient, nil
	}
	pemCerts, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("HDS_CA_FILE: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool() // no system roots here: HDS_CA_FILE's alone
	}
	if !roots.AppendCertsFromPEM(pemCerts) {
		return nil, fmt.Errorf("HDS_CA_FILE %s holds no PEM certificate", caFile)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: transport}, nil
}

// requestFailed is the error of a request that got no answer: for a
// failure of TLS (isTLSFailure) a plain error saying so, else an
// unreachableError (run -cache falls back to the cache on the latter
// only).
func requestFailed(method, path string, err error) error {
	err = unwrapURLError(err)
	if isTLSFailure(err) {
		hint := ""
		if errors.As(err, new(x509.UnknownAuthorityError)) {
			hint = " (HDS_CA_FILE names a PEM file of the certificates to trust besides the system's)"
		}
		return fmt.Errorf("%s %s: no TLS connection to the server: %w%s", method, path, err, hint)
	}
	return &unreachableError{fmt.Errorf("%s %s: %w", method, path, err)}
}

// isTLSFailure reports whether err is a failure of TLS: a certificate that
// does not verify, a handshake refused, or a server that does not speak
// TLS on an https:// URL. That is not an outage: it never leads to the
// cache (docs/api.md#serving-over-tls-v13).
func isTLSFailure(err error) bool {
	return errors.As(err, new(*tls.CertificateVerificationError)) ||
		errors.As(err, new(x509.UnknownAuthorityError)) ||
		errors.As(err, new(x509.HostnameError)) ||
		errors.As(err, new(x509.CertificateInvalidError)) ||
		errors.As(err, new(tls.RecordHeaderError)) ||
		errors.As(err, new(tls.AlertError)) ||
		errors.Is(err, http.ErrSchemeMismatch)
}

// projectPath is the path of project p and, below it, of the given
// collection and cluster names, each percent-encoded.
func projectPath(p string, below ...string) string {
	path := "/api/v1/projects/" + url.PathEscape(p)
	for i, name := range below {
		path += "/" + [...]string{"collections", "clusters"}[i] + "/" + url.PathEscape(name)
	}
	return path
}

// do sends a request to path with query and returns the response of a
// success (2xx) for the caller to read and close. Any other answer is an
// error of one line: the route, the status and the envelope's code,
// message and details (which never carry a value).
func (c *apiClient) do(ctx context.Context, method, path string, query url.Values, body io.Reader) (*http.Response, error) {
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, requestFailed(method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, classify(c.failure(method, path, resp), resp.StatusCode)
}

// unwrapURLError returns the error inside a *url.Error, which repeats the
// URL (it may carry a password).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// apiError is an answer of the server that is not a success.
type apiError struct {
	status int
	err    error // one line: the route, the status and the envelope's code, message and details
}

func (e *apiError) Error() string { return e.err.Error() }

// unreachableError is a server that cannot be reached: no connection, no
// answer in time, a response cut short, or a 5xx answer.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }

func (e *unreachableError) Unwrap() error { return e.err }

// classify wraps the failure err of an answer with status: an
// apiError, inside an unreachableError for a 5xx.
func classify(err error, status int) error {
	var wrapped error = &apiError{status: status, err: err}
	if status >= 500 {
		wrapped = &unreachableError{wrapped}
	}
	return wrapped
}

// unreachable reports whether err says that the server cannot be
// reached (run -cache falls back to the cache then).
func unreachable(err error) bool {
	var ue *unreachableError
	return errors.As(err, &ue)
}

// runError turns an error of the package client (from a client with no
// token when noToken) into the errors of do, with the same messages: a
// *client.Error into an apiError (in an unreachableError for a 5xx), a
// request that got no answer into requestFailed's (a TLS failure apart),
// a bad answer into a plain error, and a context that ended into an
// unreachableError (run says why: no answer within -timeout).
func runError(err error, noToken bool) error {
	var ae *client.Error
	var re *client.RequestError
	switch {
	case errors.As(err, &ae):
		msg := fmt.Sprintf("%s %s: %d %s", ae.Method, ae.Path, ae.Status, ae.Message)
		if ae.Code != "" {
			msg = fmt.Sprintf("%s %s: %d %s: %s", ae.Method, ae.Path, ae.Status, ae.Code, ae.Message)
			if ae.Details != "" {
				msg += ": " + ae.Details
			}
		}
		if ae.Status == http.StatusUnauthorized && noToken {
			msg += " (set HDS_TOKEN to a user token or an API token)"
		}
		return classify(errors.New(strings.ReplaceAll(msg, "\n", " ")), ae.Status)
	case errors.As(err, &re) && re.Answered:
		return fmt.Errorf("%s %s: %w", re.Method, re.Path, re.Err)
	case errors.As(err, &re):
		return requestFailed(re.Method, re.Path, re.Err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &unreachableError{err}
	}
	return err
}

// failure describes an error response in one line.
func (c *apiClient) failure(method, path string, resp *http.Response) error {
	var env struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Details string `json:"details"`
		} `json:"error"`
	}
	msg := fmt.Sprintf("%s %s: %s", method, path, resp.Status)
	// Only the error envelope is shown, never another body.
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&env); err == nil && env.Error != nil {
		msg = fmt.Sprintf("%s %s: %d %s: %s", method, path, resp.StatusCode, env.Error.Code, env.Error.Message)
		if env.Error.Details != "" {
			msg += ": " + env.Error.Details
		}
	}
	if resp.StatusCode == http.StatusUnauthorized && c.token == "" {
		msg += " (set HDS_TOKEN to a user token or an API token)"
	}
	return errors.New(strings.ReplaceAll(msg, "\n", " "))
}

// parseFlags parses a client command's flags, turning a bad flag into a
// usageError and -h into a helpError (the flag package prints nothing
// itself).
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &helpError{flags: fs}
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}
