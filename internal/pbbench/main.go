// Command pbbench runs PocketBase and hds on SQLite side by side, in one
// process, each on its own temporary database and port, and drives both
// over real HTTP with the same load: creates at 8 and 32 connections, a
// GET of one record and a list of 100 at 32 (issue 38). It is its own
// module (PocketBase needs a newer Go than hds and many dependencies), so
// that neither the library's `go test ./...` nor the e2e module builds it.
// See README.md.
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
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pocketbase/pocketbase"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/types"
	"golang.org/x/crypto/bcrypt"

	"github.com/hds-go/hds"
	"github.com/hds-go/hds/store"
	"github.com/hds-go/hds/store/sqlite"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pbbench:", err)
		os.Exit(1)
	}
}

// target is a server under load: how to create, read and list its
// records.
type target struct {
	name   string
	base   string
	token  string
	create func(i int64) (path string, body []byte)
	get    string // path of one record
	list   string // path of a list of 100
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("pbbench", flag.ContinueOnError)
	duration := fs.Duration("duration", 3*time.Second, "length of each measurement")
	rounds := fs.Int("rounds", 3, "rounds of every measurement, the servers interleaved")
	dir := fs.String("dir", "", "directory of the two databases (default: a temporary one, removed at the end)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "pbbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	pb, err := startPocketBase(filepath.Join(*dir, "pb_data"))
	if err != nil {
		return fmt.Errorf("pocketbase: %w", err)
	}
	h, err := startHDS(filepath.Join(*dir, "hds.db"))
	if err != nil {
		return fmt.Errorf("hds: %w", err)
	}
	c := newClient(64)
	for _, t := range []*target{pb, h} {
		if err := fill(c, t); err != nil {
			return fmt.Errorf("%s: fill: %w", t.name, err)
		}
	}
	fmt.Fprintf(out, "GOMAXPROCS %d, %d rounds of %s; p50/p99 are per request\n", runtime.GOMAXPROCS(0), *rounds, *duration)
	type op struct {
		name  string
		conns int
		do    func(t *target, i int64) (string, string, []byte, int)
	}
	ops := []op{
		{"create", 8, func(t *target, i int64) (string, string, []byte, int) {
			p, b := t.create(i)
			return http.MethodPost, p, b, 0
		}},
		{"create", 32, func(t *target, i int64) (string, string, []byte, int) {
			p, b := t.create(i)
			return http.MethodPost, p, b, 0
		}},
		{"get", 32, func(t *target, _ int64) (string, string, []byte, int) { return http.MethodGet, t.get, nil, 200 }},
		{"list100", 32, func(t *target, _ int64) (string, string, []byte, int) { return http.MethodGet, t.list, nil, 200 }},
	}
	var seq atomic.Int64
	results := map[string][]result{}
	for round := 1; round <= *rounds; round++ {
		for _, o := range ops {
			for _, t := range []*target{pb, h} {
				r := measure(c, t, o.conns, *duration, func(i int64) (string, string, []byte, int) { return o.do(t, seq.Add(1)) })
				key := fmt.Sprintf("%-8s %2d conns  %-10s", o.name, o.conns, t.name)
				results[key] = append(results[key], r)
				fmt.Fprintf(out, "round %d  %s %8.0f req/s  p50 %9s  p99 %9s  errors %d\n", round, key, r.rps, r.p50, r.p99, r.errors)
			}
		}
	}
	fmt.Fprintln(out, "\nmedians over rounds:")
	for _, o := range ops {
		for _, t := range []*target{pb, h} {
			key := fmt.Sprintf("%-8s %2d conns  %-10s", o.name, o.conns, t.name)
			rs := results[key]
			fmt.Fprintf(out, "  %s %8.0f req/s  p50 %9s  p99 %9s\n", key, median(rs, func(r result) float64 { return r.rps }),
				time.Duration(median(rs, func(r result) float64 { return float64(r.p50) })),
				time.Duration(median(rs, func(r result) float64 { return float64(r.p99) })))
		}
	}
	return nil
}

// --- PocketBase ---

// startPocketBase serves PocketBase on dataDir, with a collection
// "records" (name unique, type, value as JSON) that authenticated users
// may list, view and create in, and a user whose token the load uses.
// Request logs are not kept (hds's go to io.Discard here).
func startPocketBase(dataDir string) (*target, error) {
	app := pocketbase.NewWithConfig(pocketbase.Config{DefaultDataDir: dataDir, HideStartBanner: true})
	if err := app.Bootstrap(); err != nil {
		return nil, err
	}
	if err := app.RunAllMigrations(); err != nil {
		return nil, err
	}
	settings := app.Settings()
	settings.Logs.MaxDays = 0
	if err := app.Save(settings); err != nil {
		return nil, err
	}
	// "records" holds the records read, "writes" those created (as
	// hds's clusters k and writes).
	for _, name := range []string{"records", "writes"} {
		col := core.NewBaseCollection(name)
		col.Fields.Add(&core.TextField{Name: "name", Required: true}, &core.TextField{Name: "type"}, &core.JSONField{Name: "value"})
		col.AddIndex("idx_"+name+"_name", true, "name", "")
		rule := types.Pointer("@request.auth.id != ''")
		col.ListRule, col.ViewRule, col.CreateRule = rule, rule, rule
		if err := app.Save(col); err != nil {
			return nil, err
		}
	}
	users, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		return nil, err
	}
	u := core.NewRecord(users)
	u.SetEmail("load@example.com")
	u.SetPassword("load-password-123")
	if err := app.Save(u); err != nil {
		return nil, err
	}
	token, err := u.NewAuthToken()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	go func() {
		if err := apis.Serve(app, apis.ServeConfig{HttpAddr: addr}); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "pocketbase:", err)
			os.Exit(1)
		}
	}()
	base := "http://" + addr
	if err := waitUp(base + "/api/health"); err != nil {
		return nil, err
	}
	// The record of the GET is the 43rd of fill's (fill finds its id).
	return &target{name: "pocketbase", base: base, token: token,
		create: func(i int64) (string, []byte) {
			return "/api/collections/writes/records", fmt.Appendf(nil, `{"name":"w-%d","type":"INTEGER","value":%d}`, i, i)
		},
		list: "/api/collections/records/records?perPage=100",
	}, nil
}

// --- hds ---

// startHDS serves hds on an SQLite database at path, with one user.
func startHDS(path string) (*target, error) {
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	s.SetQuotas(store.NoQuotas)
	hash, err := bcrypt.GenerateFromPassword([]byte("load-password"), bcrypt.DefaultCost)
	if err != nil {
		return nil, err
	}
	if _, err := s.CreateUser(context.Background(), &store.User{Username: "load", PasswordHash: hash, Active: true}); err != nil {
		return nil, err
	}
	h := hds.New(hds.WithStore(s), hds.WithUsers(s), hds.WithSecurity(hds.Security{JWTSecret: "pbbench-secret-0123456789abcdef!!"}),
		hds.WithRateLimit(1<<40, 1<<40), hds.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // runs until the process ends
	base := "http://" + ln.Addr().String()
	c := newClient(1)
	body, _ := json.Marshal(map[string]string{"username": "load", "password": "load-password"})
	status, b, err := c.do(http.MethodPost, base+"/api/v1/auth/login", "", body)
	if err != nil || status != http.StatusOK {
		return nil, fmt.Errorf("login: %d %v %s", status, err, b)
	}
	var out struct {
		Data struct{ Token string } `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	for _, p := range []string{"/api/v1/projects/bench", "/api/v1/projects/bench/collections/c", hdsCluster + "k", hdsCluster + "writes"} {
		status, b, err := c.do(http.MethodPost, base+p, out.Data.Token, nil)
		if err != nil || status != http.StatusCreated {
			return nil, fmt.Errorf("POST %s: %d %v %s", p, status, err, b)
		}
	}
	return &target{name: "hds", base: base, token: out.Data.Token,
		create: func(i int64) (string, []byte) {
			return hdsCluster + "writes/records", fmt.Appendf(nil, `{"name":"w-%d","type":"INTEGER","value":%d}`, i, i)
		},
		get:  hdsCluster + "k/records/rec-000042",
		list: hdsCluster + "k/records?limit=100",
	}, nil
}

// hdsCluster is the path of hds's clusters.
const hdsCluster = "/api/v1/projects/bench/collections/c/clusters/"

// --- load ---

// fill creates 100 records (INTEGER values) to read, and finds the path
// of one of them for the GET.
func fill(c *client, t *target) error {
	for i := range 100 {
		name := fmt.Sprintf("rec-%06d", i)
		var path string
		var body []byte
		if t.name == "hds" {
			path, body = hdsCluster+"k/records", fmt.Appendf(nil, `{"name":%q,"type":"INTEGER","value":%d}`, name, i)
		} else {
			path, body = "/api/collections/records/records", fmt.Appendf(nil, `{"name":%q,"type":"INTEGER","value":%d}`, name, i)
		}
		status, b, err := c.do(http.MethodPost, t.base+path, t.token, body)
		if err != nil || status/100 != 2 {
			return fmt.Errorf("POST %s: %d %v %s", path, status, err, b)
		}
		if t.name != "hds" && i == 42 {
			var rec struct{ ID string }
			if err := json.Unmarshal(b, &rec); err != nil {
				return err
			}
			t.get = "/api/collections/records/records/" + rec.ID
		}
	}
	for _, p := range []string{t.get, t.list} {
		status, b, err := c.do(http.MethodGet, t.base+p, t.token, nil)
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("GET %s: %d %v %s", p, status, err, b)
		}
		if p == t.list && bytes.Count(b, []byte(`"rec-`)) != 100 {
			return fmt.Errorf("GET %s: not 100 records: %.300s", p, b)
		}
	}
	return nil
}

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

type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int64
}

// measure runs req from conns goroutines for d: req returns the method,
// path, body and status wanted (0: any 2xx) of the request of number i.
func measure(c *client, t *target, conns int, d time.Duration, req func(i int64) (string, string, []byte, int)) result {
	var errs atomic.Int64
	lat := make([][]time.Duration, conns)
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conns {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				method, path, body, want := req(0)
				t0 := time.Now()
				status, _, err := c.do(method, t.base+path, t.token, body)
				lat[w] = append(lat[w], time.Since(t0))
				if err != nil || (want != 0 && status != want) || (want == 0 && status/100 != 2) {
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return result{}
	}
	return result{rps: float64(len(all)) / elapsed.Seconds(), p50: all[len(all)/2], p99: all[len(all)*99/100], errors: errs.Load()}
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

// waitUp polls url until it answers 200, for up to 30 s.
func waitUp(url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within 30 s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
