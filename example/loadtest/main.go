// Command loadtest drives an hds server over real HTTP with a fixed number
// of connections and prints requests per second and p50/p99 latency per
// operation.
//
// Without -url it starts hds itself on 127.0.0.1 (the in-memory store,
// authentication, rate limiting with limits too high to refuse anything,
// and a log line per request as the example writes it: to -log's file,
// else nowhere) and, with -baseline, a bare net/http server that only
// checks the JWT and writes the same payloads.
// The two are measured in interleaved rounds, and the median of the
// per-round ratios is printed: on a noisy machine only same-run ratios
// mean anything.
//
// With -url it fills and drives any server that speaks the hds API
// (log in with -user and -password; mind the server's rate limits).
// Against a server in another process, the bare handler runs in a third
// one: -serve-baseline ADDR fills the server at -url, takes its answers
// and serves them bare on ADDR (verifying tokens with -secret, the
// server's JWT secret) until stopped; -baseline-url then measures that
// process in rounds interleaved with the server's. So each server can be
// pinned to one core (taskset) and the load to the other, and the server
// can be the example as a user runs it, logging to a file:
//
//	go run ./example/loadtest -rounds 8 -baseline
//	go run ./example/loadtest -rounds 8 -baseline -ops get,list100 -log /tmp/hds.log
//	go run ./example/loadtest -url http://127.0.0.1:8080 -user admin -password ...
//	go run ./example/loadtest -url URL -secret S -serve-baseline 127.0.0.1:8081 &
//	go run ./example/loadtest -url URL -baseline-url http://127.0.0.1:8081 -rounds 8
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/internal/baseline"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/memory"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

type options struct {
	url, user, password string
	secret              string
	serveBaseline       string
	baselineURL         string
	serverPID, basePID  int
	logFile             string
	conns, rounds, big  int
	duration            time.Duration
	baseline            bool
	ops                 string
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.url, "url", "", "base URL of a running server (default: start hds on 127.0.0.1)")
	fs.StringVar(&o.user, "user", "load", "username to log in with")
	fs.StringVar(&o.password, "password", "load-password", "password to log in with")
	fs.IntVar(&o.conns, "conns", 32, "concurrent connections")
	fs.IntVar(&o.rounds, "rounds", 1, "rounds of every operation (interleaved with the baseline)")
	fs.IntVar(&o.big, "big", 100_000, "records in the big cluster")
	fs.DurationVar(&o.duration, "duration", 3*time.Second, "length of each measurement")
	fs.BoolVar(&o.baseline, "baseline", false, "also measure a bare JWT + JSON handler (only without -url)")
	fs.StringVar(&o.logFile, "log", "", "file the built-in server logs every request to, as the example logs to stderr (default: no log)")
	fs.StringVar(&o.ops, "ops", "get,list100,filtered,cluster,create", "operations to run")
	fs.StringVar(&o.secret, "secret", defaultSecret, "JWT secret of the server (the built-in server's, or -url's for -serve-baseline)")
	fs.StringVar(&o.serveBaseline, "serve-baseline", "", "fill -url, then serve its answers bare on this address until stopped")
	fs.StringVar(&o.baselineURL, "baseline-url", "", "a bare server started with -serve-baseline, measured interleaved with -url")
	fs.IntVar(&o.serverPID, "server-pid", 0, "process id of the server at -url: report its CPU time per request (Linux)")
	fs.IntVar(&o.basePID, "baseline-pid", 0, "process id of the server at -baseline-url: report its CPU time per request (Linux)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case o.baseline && o.url != "":
		return errors.New("-baseline needs the built-in server (no -url); with -url, start one with -serve-baseline and pass -baseline-url")
	case (o.serveBaseline != "" || o.baselineURL != "") && o.url == "":
		return errors.New("-serve-baseline and -baseline-url need -url")
	case o.serveBaseline != "":
		return serveBaseline(o, out)
	}
	secret := o.secret
	base := o.url
	if base == "" {
		var err error
		logs := io.Discard
		if o.logFile != "" {
			f, err := os.OpenFile(o.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				return err
			}
			defer f.Close()
			logs = f
		}
		if base, err = startHDS(secret, o.user, o.password, logs); err != nil {
			return err
		}
	}
	c := newClient(o.conns)
	token, err := c.login(base, o.user, o.password)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "filling %s (a cluster of 100 records and one of %d)...\n", base, o.big)
	if err := fill(c, base, token, o.big); err != nil {
		return err
	}
	ops := selectOps(o.ops)
	var bases map[string]string
	if o.baselineURL != "" {
		bases = map[string]string{}
		for _, op := range ops {
			if op.method == http.MethodGet {
				bases[op.name] = o.baselineURL
			}
		}
	}
	if o.baseline {
		if bases, err = startBaselines(c, base, token, secret, ops); err != nil {
			return err
		}
	}
	results := map[string][]result{}
	for round := 1; round <= o.rounds; round++ {
		for _, op := range ops {
			r, err := measureCPU(c, base, token, op, o, o.serverPID)
			if err != nil {
				return err
			}
			results[op.name] = append(results[op.name], r)
			fmt.Fprintf(out, "round %d  hds       %-9s %9.0f req/s  p50 %8s  p99 %8s%s  errors %d\n", round, op.name, r.rps, r.p50, r.p99, r.cpuText(), r.errors)
			if b, ok := bases[op.name]; ok {
				bop := op
				if o.baselineURL == "" {
					bop = baselineOp(op)
				}
				rb, err := measureCPU(c, b, token, bop, o, o.basePID)
				if err != nil {
					return err
				}
				results["baseline "+op.name] = append(results["baseline "+op.name], rb)
				fmt.Fprintf(out, "round %d  baseline  %-9s %9.0f req/s  p50 %8s  p99 %8s%s  ratio %.2f%s\n", round, op.name, rb.rps, rb.p50, rb.p99, rb.cpuText(), r.rps/rb.rps, cpuRatioText(r, rb))
			}
		}
	}
	fmt.Fprintln(out, "\nmedians over rounds:")
	for _, op := range ops {
		rs := results[op.name]
		fmt.Fprintf(out, "  %-9s hds %9.0f req/s  p50 %8s  p99 %8s", op.name, median(rs, func(r result) float64 { return r.rps }),
			time.Duration(median(rs, func(r result) float64 { return float64(r.p50) })), time.Duration(median(rs, func(r result) float64 { return float64(r.p99) })))
		if bs, ok := results["baseline "+op.name]; ok {
			ratios := make([]result, len(rs))
			for i := range rs {
				ratios[i] = result{rps: rs[i].rps / bs[i].rps, p99: time.Duration(float64(rs[i].p99) / float64(bs[i].p99) * 1000)}
				if rs[i].cpu > 0 && bs[i].cpu > 0 {
					ratios[i].cpu = bs[i].cpu / rs[i].cpu
				}
			}
			fmt.Fprintf(out, "  | baseline %9.0f req/s  p99 %8s  | median ratio: throughput %.2f, p99 %.2f",
				median(bs, func(r result) float64 { return r.rps }), time.Duration(median(bs, func(r result) float64 { return float64(r.p99) })),
				median(ratios, func(r result) float64 { return r.rps }), median(ratios, func(r result) float64 { return float64(r.p99) })/1000)
			if c := median(ratios, func(r result) float64 { return r.cpu }); c > 0 {
				fmt.Fprintf(out, ", cpu %.2f", c)
			}
		}
		fmt.Fprintln(out)
	}
	return nil
}

// defaultSecret is the built-in server's JWT secret.
const defaultSecret = "loadtest-secret-0123456789abcdef!!"

// --- servers ---

func listen(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // runs until the process ends
	return "http://" + ln.Addr().String(), nil
}

// startHDS serves hds as the example does, with one user.
func startHDS(secret, user, password string, logs io.Writer) (string, error) {
	m := memory.New()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", err
	}
	if _, err := m.CreateUser(context.Background(), &store.User{Username: user, PasswordHash: hash, Active: true}); err != nil {
		return "", err
	}
	return listen(hds.New(hds.WithStore(m), hds.WithUsers(m),
		hds.WithSecurity(hds.Security{JWTSecret: secret}),
		hds.WithRateLimit(1<<40, 1<<40),
		hds.WithLogger(slog.New(slog.NewTextHandler(logs, nil)))))
}

// startBaselines starts one bare server per read operation that answers
// with the payload hds answered.
func startBaselines(c *client, base, token, secret string, ops []operation) (map[string]string, error) {
	out := map[string]string{}
	for _, op := range ops {
		if op.method != http.MethodGet {
			continue
		}
		payload, err := payloadOf(c, base, token, op)
		if err != nil {
			return nil, err
		}
		url, err := listen(baseline.Handler([]byte(secret), payload))
		if err != nil {
			return nil, err
		}
		out[op.name] = url
	}
	return out, nil
}

// payloadOf returns what the server at base answers to the read op, in
// the typed structs of the bare handler.
func payloadOf(c *client, base, token string, op operation) (any, error) {
	status, body, err := c.do(op.method, base+op.path(0), token, nil)
	if err != nil || status != http.StatusOK {
		return nil, fmt.Errorf("baseline payload for %s: %d %v", op.name, status, err)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, err
	}
	return baseline.Typed(env.Data)
}

// serveBaseline fills the server at o.url, then serves on
// o.serveBaseline, bare, what it answered to each read operation, at
// the operation's own path, until the process is stopped.
func serveBaseline(o options, out io.Writer) error {
	c := newClient(o.conns)
	token, err := c.login(o.url, o.user, o.password)
	if err != nil {
		return err
	}
	if err := fill(c, o.url, token, o.big); err != nil {
		return err
	}
	byPath := map[string]http.Handler{}
	for _, op := range selectOps(o.ops) {
		if op.method != http.MethodGet {
			continue
		}
		payload, err := payloadOf(c, o.url, token, op)
		if err != nil {
			return err
		}
		byPath[op.path(0)] = baseline.Handler([]byte(o.secret), payload)
	}
	ln, err := net.Listen("tcp", o.serveBaseline)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "baseline listening on http://%s\n", ln.Addr())
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := byPath[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
	// The example server's timeouts (example/config.go's defaults): the
	// two handlers are compared in servers that set the same deadlines on
	// every request, as listen's in-process servers do (both with the
	// read-header timeout only).
	srv := &http.Server{Handler: bare, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second}
	return srv.Serve(ln)
}

// --- the client ---

type client struct{ http *http.Client }

func newClient(conns int) *client {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	return &client{http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (c *client) do(method, url, token string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (c *client) login(base, user, password string) (string, error) {
	body, _ := json.Marshal(map[string]string{"username": user, "password": password})
	status, b, err := c.do(http.MethodPost, base+"/api/v1/auth/login", "", body)
	if err != nil || status != http.StatusOK {
		return "", fmt.Errorf("login: status %d, %v: %s", status, err, b)
	}
	var out struct {
		Data struct{ Token string } `json:"data"`
	}
	return out.Data.Token, json.Unmarshal(b, &out)
}

const clusterPath = "/api/v1/projects/loadtest/collections/c/clusters/"

// fill creates the project, the collection, a cluster of 100 records and
// one of big records, of mixed types, over HTTP.
func fill(c *client, base, token string, big int) error {
	for _, p := range []string{"/api/v1/projects/loadtest", "/api/v1/projects/loadtest/collections/c",
		clusterPath + "small", clusterPath + "big", clusterPath + "writes"} {
		status, b, err := c.do(http.MethodPost, base+p, token, nil)
		if err != nil || (status != http.StatusCreated && status != http.StatusConflict) {
			return fmt.Errorf("POST %s: %d %v %s", p, status, err, b)
		}
	}
	if err := fillCluster(c, base+clusterPath+"small/records", token, 100); err != nil {
		return err
	}
	return fillCluster(c, base+clusterPath+"big/records", token, big)
}

func fillCluster(c *client, url, token string, n int) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				status, b, err := c.do(http.MethodPost, url, token, []byte(recordBody(i)))
				if err != nil || (status != http.StatusCreated && status != http.StatusConflict) {
					once.Do(func() { firstErr = fmt.Errorf("fill: %d %v %s", status, err, b) })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

func recordBody(i int) string {
	name := fmt.Sprintf("rec-%06d", i)
	switch i % 5 {
	case 0:
		return fmt.Sprintf(`{"name":%q,"type":"INTEGER","value":%d}`, name, i*7919%100003)
	case 1:
		return fmt.Sprintf(`{"name":%q,"type":"FLOAT","value":%d.5}`, name, i%1000)
	case 2:
		return fmt.Sprintf(`{"name":%q,"type":"STRING","value":"value-%d-alpha"}`, name, i)
	case 3:
		return fmt.Sprintf(`{"name":%q,"type":"BOOLEAN","value":%t}`, name, i%2 == 0)
	}
	return fmt.Sprintf(`{"name":%q,"type":"[]STRING","value":["a-%d","b"]}`, name, i)
}

// --- operations ---

type operation struct {
	name, method string
	path         func(i int64) string
	body         func(i int64) []byte
	want         int
}

var allOps = []operation{
	{name: "get", method: http.MethodGet, path: func(int64) string { return clusterPath + "small/records/rec-000042" }, want: 200},
	{name: "list100", method: http.MethodGet, path: func(int64) string { return clusterPath + "small/records" }, want: 200},
	{name: "filtered", method: http.MethodGet, path: func(int64) string {
		return clusterPath + "big/records?search=rec-0&valueContains=5&type=INTEGER&sortBy=value&limit=100"
	}, want: 200},
	{name: "cluster", method: http.MethodGet, path: func(int64) string { return clusterPath + "small" }, want: 200},
	{name: "create", method: http.MethodPost, path: func(int64) string { return clusterPath + "writes/records" },
		body: func(i int64) []byte {
			return fmt.Appendf(nil, `{"name":"w-%d-%d","type":"INTEGER","value":%d}`, time.Now().UnixNano(), i, i)
		}, want: 201},
}

func selectOps(names string) []operation {
	var ops []operation
	for _, op := range allOps {
		if slices.Contains(strings.Split(names, ","), op.name) {
			ops = append(ops, op)
		}
	}
	return ops
}

// baselineOp is op against a bare server, which answers any path.
func baselineOp(op operation) operation {
	op.path = func(int64) string { return "" }
	return op
}

type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int64
	requests int
	// cpu is the server's CPU time per request in microseconds, 0 when
	// not measured.
	cpu float64
}

// cpuText is the server's CPU time per request, as the round lines show
// it; empty when not measured.
func (r result) cpuText() string {
	if r.cpu == 0 {
		return ""
	}
	return fmt.Sprintf("  cpu %6.1f us/req", r.cpu)
}

// cpuRatioText is the bare handler's CPU time per request over hds's,
// the throughput ratio of a server whose core is the bottleneck; empty
// unless both were measured.
func cpuRatioText(r, base result) string {
	if r.cpu == 0 || base.cpu == 0 {
		return ""
	}
	return fmt.Sprintf("  cpu ratio %.2f", base.cpu/r.cpu)
}

// measureCPU is measure, with the CPU time per request of the server
// process pid (none when pid is 0) over the measurement window only.
func measureCPU(c *client, base, token string, op operation, o options, pid int) (result, error) {
	m := cpuMeter{pid: pid}
	if err := m.begin(); err != nil {
		return result{}, err
	}
	r := measure(c, base, token, op, o)
	var err error
	r.cpu, err = m.perRequest(r.requests)
	return r, err
}

// measure runs op from o.conns goroutines for o.duration.
func measure(c *client, base, token string, op operation, o options) result {
	var seq, errs atomic.Int64
	lat := make([][]time.Duration, o.conns)
	deadline := time.Now().Add(o.duration)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range o.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				i := seq.Add(1)
				var body []byte
				if op.body != nil {
					body = op.body(i)
				}
				t0 := time.Now()
				status, _, err := c.do(op.method, base+op.path(i), token, body)
				lat[w] = append(lat[w], time.Since(t0))
				if err != nil || status != op.want {
					errs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return result{}
	}
	return result{
		rps:      float64(len(all)) / elapsed.Seconds(),
		p50:      all[len(all)/2],
		p99:      all[len(all)*99/100],
		errors:   errs.Load(),
		requests: len(all),
	}
}

func median(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}
