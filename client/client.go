// Package client is how a Go program reads its configuration from an hds
// server (docs/api.md#the-go-client): one cluster's records as typed Go
// values, decoded into a struct, and followed as they change.
//
//	c, err := client.New("https://hds.example.com", client.WithToken(os.Getenv("HDS_TOKEN")))
//	k, err := c.Cluster(ctx, "webshop", "prod", "database") // *client.Cluster
//	port := k.Records["port"].Value                         // int64(5432)
//
//	var cfg struct {
//		Host     string        `hds:"host,required"`
//		Port     int           `hds:"port"`
//		Password string        `hds:"password"`
//		Timeout  time.Duration `hds:"timeout"`
//	}
//	err = c.Decode(ctx, "webshop", "prod", "database", &cfg)
//
//	err = c.Watch(ctx, "webshop", "prod", "database", func(k *client.Cluster) {
//		var cfg Config
//		if err := k.Decode(&cfg); err == nil {
//			apply(cfg)
//		}
//	})
//
// Cluster reads the cluster with one GET, references resolved and
// credentials revealed (unless the client is made WithoutReveal, as a
// viewer's token needs). Decode fills a struct from it by the fields'
// hds:"NAME" tags. Watch calls a function with the cluster and again after
// every change to it, until its context ends or the access is taken away.
//
// An error the server answered is a *Error (use errors.As), with the HTTP
// status and the envelope's code, message and details.
//
// The package imports only the standard library (and small internal
// packages of the module that do too): a program that uses it pays for no
// server code.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client talks to one hds server. It is safe for concurrent use.
type Client struct {
	base   string // scheme, host and the mount prefix, without a trailing '/'
	http   *http.Client
	reveal bool
	plain  bool
	// resolve asks for references resolved (false: WithoutResolve).
	resolve bool
	// envFile reads the environment file (WithEnvFile).
	envFile bool

	// timing holds the waits of Watch; tests shorten them.
	timing timing
	// within bounds each read of Watch and the wait for the change
	// feed's headers (WithRequestTimeout); 0: timing.idle.
	within time.Duration
	// report is told of the errors Watch retries (WithWatchErrors).
	report func(err error, retry time.Duration)

	mu    sync.Mutex // guards token, refused and refreshing
	token string     // "" sends no Authorization header
	// refused is a token whose refresh the server refused: not tried again.
	refused string
	// refreshing is closed when a refresh in flight ends; nil when none is.
	refreshing chan struct{}
}

// timing is what Watch waits for.
type timing struct {
	// debounce: changes less than this apart are one burst.
	debounce time.Duration
	// idle: a change feed silent for this long is taken for broken and
	// reconnected (the server sends a keep-alive every 15 s).
	idle time.Duration
	// firstWait and maxWait: the first wait before a retry, and the
	// longest it doubles up to.
	firstWait, maxWait time.Duration
	// refreshBefore: a user token is refreshed this long before it
	// expires (at most half its lifetime).
	refreshBefore time.Duration
}

// defaultTiming is what Watch waits for unless told otherwise.
var defaultTiming = timing{
	debounce:      time.Second,
	idle:          45 * time.Second, // three missed keep-alives
	firstWait:     time.Second,
	maxWait:       30 * time.Second,
	refreshBefore: 5 * time.Minute,
}

// An Option configures a Client made by New.
type Option func(*Client)

// WithToken makes every request carry token: a user token (from a
// login; Watch refreshes it before it expires) or an API token
// (hds_...). Without it, requests carry no Authorization header, which
// only a server that allows anonymous access answers.
func WithToken(token string) Option {
	return func(c *Client) { c.token = token }
}

// WithHTTPClient sends requests through hc rather than
// http.DefaultClient. Its Timeout, if any, applies to every request, the
// change feed of Watch included, so leave it zero and bound requests with
// their context instead.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.http = hc
		}
	}
}

// WithoutReveal leaves out reveal=true: credentials come masked as
// "********". A token of the viewer role needs it (its reveal=true is
// 403). By default credentials are revealed.
func WithoutReveal() Option {
	return func(c *Client) { c.reveal = false }
}

// WithoutResolve leaves out resolve=true: Cluster, Decode and Watch get
// the values as stored, a reference "${db/host}" as that text
// (docs/api.md#references-between-records), and Watch follows the
// cluster's own records only. By default references are resolved.
func WithoutResolve() Option {
	return func(c *Client) { c.resolve = false }
}

// WithEnvFile makes Cluster and Watch read the cluster's environment
// file (GET K?format=env, docs/api.md#environment-files) rather than its
// JSON: the Cluster they return has Env and Skipped, and no Records (so
// Decode finds none of its fields). It is for a program that passes the
// configuration on as environment variables, as the example's run does.
func WithEnvFile() Option {
	return func(c *Client) { c.envFile = true }
}

// WithPlainHTTP allows an http:// base URL to a host other than loopback.
// By default New refuses it, so that a token never travels in clear by
// accident.
func WithPlainHTTP() Option {
	return func(c *Client) { c.plain = true }
}

// WithDebounce sets how long Watch waits after a change before it reads
// the cluster: changes less than d apart are one burst, and one call
// follows its last change. The default is 1 second; 0 reads at once
// after every change (a negative d is ignored).
func WithDebounce(d time.Duration) Option {
	return func(c *Client) {
		if d >= 0 {
			c.timing.debounce = d
		}
	}
}

// WithRequestTimeout bounds how long Watch waits for the answer to each
// read of the cluster and for the headers of the change feed (its stream
// may then stay open for as long as its keep-alives come); what got no
// answer within d is retried. The default is 45 seconds; d must be
// positive (else it is ignored). Cluster and Decode are bounded by their
// context only.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.within = d
		}
	}
}

// WithWatchErrors makes Watch tell report of every error it does not
// return but retries or waits out: a read of the cluster that failed
// (retry is the wait before it is tried again, 0 when it waits for the
// next change: a 422, or an answer that is not what the API describes),
// and a connection of the change feed that failed or a stream given up
// for its silence (an error wrapping ErrSilent), reconnected after retry.
// Calls of report come one at a time, from Watch's goroutines, and Watch
// waits for each to return: report may cancel Watch's context to end it.
// Without it, these errors are not shown anywhere.
func WithWatchErrors(report func(err error, retry time.Duration)) Option {
	return func(c *Client) { c.report = report }
}

// answerWithin is how long Watch waits for an answer.
func (c *Client) answerWithin() time.Duration {
	if c.within > 0 {
		return c.within
	}
	return c.timing.idle
}

// New returns a client of the hds server at baseURL: an http:// or
// https:// URL of where the handler is mounted ("https://hds.example.com",
// or "https://example.com/hds" for a handler mounted under /hds/). An
// http:// URL to a host other than loopback is an error unless
// WithPlainHTTP is given. Errors never repeat the URL (it may carry a
// password).
func New(baseURL string, opts ...Option) (*Client, error) {
	c := &Client{http: http.DefaultClient, reveal: true, resolve: true, timing: defaultTiming}
	for _, opt := range opts {
		opt(c)
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, errors.New("client: the base URL must be an http:// or https:// URL such as https://hds.example.com")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, errors.New("client: the base URL must have no query and no fragment")
	}
	if u.Scheme == "http" && !c.plain && !loopback(u.Hostname()) {
		return nil, errors.New("client: an http:// base URL to a host other than loopback sends the token in clear: use https://, or WithPlainHTTP() to allow it")
	}
	if strings.ContainsRune(c.token, '\n') || strings.ContainsRune(c.token, '\r') {
		return nil, errors.New("client: the token must be one line")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	c.base = u.String()
	return c, nil
}

// loopback reports whether host (without its port) is a loopback
// address or the name localhost.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clusterPath is the path of cluster k of collection col of project p,
// each name percent-encoded.
func clusterPath(p, col, k string) string {
	return projectPath(p) + "/collections/" + url.PathEscape(col) + "/clusters/" + url.PathEscape(k)
}

// projectPath is the path of project p.
func projectPath(p string) string { return "/api/v1/projects/" + url.PathEscape(p) }

// Error is an error answered by the server: its HTTP status and the
// envelope's code, message and details (docs/api.md#errors).
type Error struct {
	// Status is the HTTP status, e.g. 404.
	Status int
	// Code is the envelope's code, e.g. "RESOURCE_NOT_FOUND"; for an
	// answer without an envelope, "".
	Code string
	// Message is the envelope's message, e.g. "Resource not found".
	Message string
	// Details adds what went wrong, "" when there is nothing to add.
	Details string
	// Method and Path are the request that got this answer, e.g. "GET"
	// and "/api/v1/projects/webshop/collections/prod/clusters/database"
	// (below the base URL, without the query).
	Method, Path string

	// retryAfter is the wait a Retry-After header asked for.
	retryAfter time.Duration
}

// Error returns the status, code, message and details in one line.
func (e *Error) Error() string {
	msg := fmt.Sprintf("hds: %d", e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Details != "" {
		msg += ": " + e.Details
	}
	return strings.ReplaceAll(msg, "\n", " ")
}

// errorOf reads the error envelope of resp, the answer to method path
// that is not a success (at most 64 KiB of it).
func errorOf(resp *http.Response, method, path string) *Error {
	e := &Error{Status: resp.StatusCode, Message: http.StatusText(resp.StatusCode), Method: method, Path: path}
	var env struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Details string `json:"details"`
		} `json:"error"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&env) == nil && env.Error != nil {
		e.Code, e.Message, e.Details = env.Error.Code, env.Error.Message, env.Error.Details
	}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		e.retryAfter = time.Duration(min(secs, 3600)) * time.Second
	}
	return e
}

// A RequestError is a request that got no usable answer: no connection,
// no answer in time, an answer cut short (Answered false: the server may
// be unreachable for a while), or a success answer that is not what the
// API describes (Answered true). Its message never repeats the URL (it
// may carry a password). Err is what went wrong, e.g. a
// *tls.CertificateVerificationError for a certificate that does not
// verify.
type RequestError struct {
	// Method and Path are the request, Path below the base URL without
	// the query.
	Method, Path string
	// Err is what went wrong.
	Err error
	// Answered reports that the server answered, with a success that is
	// not what the API describes.
	Answered bool
}

// Error returns the request and what went wrong in one line.
func (e *RequestError) Error() string {
	return fmt.Sprintf("client: %s %s: %v", e.Method, e.Path, e.Err)
}

// Unwrap returns Err.
func (e *RequestError) Unwrap() error { return e.Err }

// send sends a request to path (below the base URL) with query and
// headers and returns the answer, whatever its status, for the caller to
// read and close. A user token about to expire is refreshed first.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, header http.Header) (*http.Response, error) {
	token, err := c.currentToken(ctx)
	if err != nil {
		return nil, err
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return nil, &RequestError{Method: method, Path: path, Err: err}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, &RequestError{Method: method, Path: path, Err: unwrapURLError(err)}
	}
	return resp, nil
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

// noAnswer is the error of a request that got no answer within d.
type noAnswer struct{ d time.Duration }

func (n noAnswer) Error() string { return fmt.Sprintf("no answer within %s", n.d) }

// Timeout reports true, as a net.Error that timed out does.
func (n noAnswer) Timeout() bool { return true }

// errMalformed is a success answer that is not what the contract says.
var errMalformed = errors.New("the answer is not the JSON the API describes")
