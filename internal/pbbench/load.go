package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// target is a server under load: how to create, read and list its
// records.
type target struct {
	targetInfo
	create func(i int64) (path string, body []byte)
	get    string // path of one record
	list   string // path of a list of 100
}

// hdsCluster is the path of hds's clusters.
const hdsCluster = "/api/v1/projects/bench/collections/c/clusters/"

// newTarget is the load's view of the server the child announced. hds's
// clusters are k (the records read) and writes (those created);
// PocketBase's collections records and writes. PocketBase's record of
// the GET is found by fill.
func newTarget(ti targetInfo) *target {
	t := &target{targetInfo: ti}
	switch ti.Name {
	case "hds":
		t.create = func(i int64) (string, []byte) {
			return hdsCluster + "writes/records", fmt.Appendf(nil, `{"name":"w-%d","type":"INTEGER","value":%d}`, i, i)
		}
		t.get = hdsCluster + "k/records/rec-000042"
		t.list = hdsCluster + "k/records?limit=100"
	default:
		t.create = func(i int64) (string, []byte) {
			return "/api/collections/writes/records", fmt.Appendf(nil, `{"name":"w-%d","type":"INTEGER","value":%d}`, i, i)
		}
		t.list = "/api/collections/records/records?perPage=100"
	}
	return t
}

// fill creates 100 records (INTEGER values) to read, and finds the path
// of one of them for the GET.
func fill(c *client, t *target) error {
	for i := range 100 {
		name := fmt.Sprintf("rec-%06d", i)
		path := "/api/collections/records/records"
		if t.Name == "hds" {
			path = hdsCluster + "k/records"
		}
		body := fmt.Appendf(nil, `{"name":%q,"type":"INTEGER","value":%d}`, name, i)
		status, b, err := c.do(http.MethodPost, t.Base+path, t.Token, body)
		if err != nil || status/100 != 2 {
			return fmt.Errorf("POST %s: %d %v %s", path, status, err, b)
		}
		if t.Name != "hds" && i == 42 {
			var rec struct{ ID string }
			if err := json.Unmarshal(b, &rec); err != nil {
				return err
			}
			t.get = "/api/collections/records/records/" + rec.ID
		}
	}
	for _, p := range []string{t.get, t.list} {
		status, b, err := c.do(http.MethodGet, t.Base+p, t.Token, nil)
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

// load is one kind of request sent from conns connections at once.
type load struct {
	name  string
	conns int
	req   func(t *target, i int64) (method, path string, body []byte)
	want  int // the status wanted; 0: any 2xx
}

// result is what one load of a measurement gave.
type result struct {
	n        int
	rps      float64
	p50, p99 time.Duration
	s503     int64 // answers 503
	other    int64 // other answers than the one wanted
	errors   int64 // requests without an answer
}

// ratio is p99 over p50.
func (r result) ratio() float64 {
	if r.p50 == 0 {
		return 0
	}
	return float64(r.p99) / float64(r.p50)
}

// measure runs every load of loads on t at once, each from its conns
// goroutines, for d, and returns their results in order. Latencies
// count every request, answered as wanted or not.
func measure(c *client, t *target, loads []load, d time.Duration, seq *atomic.Int64) []result {
	type counts struct{ s503, other, errors atomic.Int64 }
	lat := make([][][]time.Duration, len(loads))
	cnt := make([]counts, len(loads))
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for li, l := range loads {
		lat[li] = make([][]time.Duration, l.conns)
		for w := range l.conns {
			wg.Go(func() {
				for time.Now().Before(deadline) {
					method, path, body := l.req(t, seq.Add(1))
					t0 := time.Now()
					status, _, err := c.do(method, t.Base+path, t.Token, body)
					lat[li][w] = append(lat[li][w], time.Since(t0))
					switch {
					case err != nil:
						cnt[li].errors.Add(1)
					case status == http.StatusServiceUnavailable:
						cnt[li].s503.Add(1)
					case (l.want != 0 && status != l.want) || (l.want == 0 && status/100 != 2):
						cnt[li].other.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	rs := make([]result, len(loads))
	for li := range loads {
		all := slices.Concat(lat[li]...)
		slices.Sort(all)
		if len(all) == 0 {
			continue
		}
		rs[li] = result{n: len(all), rps: float64(len(all)) / elapsed.Seconds(), p50: all[len(all)/2], p99: all[len(all)*99/100],
			s503: cnt[li].s503.Load(), other: cnt[li].other.Load(), errors: cnt[li].errors.Load()}
	}
	return rs
}

func median[T any](rs []T, f func(T) float64) float64 {
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

// fmtDur prints d with three significant digits or so.
func fmtDur(d time.Duration) string {
	switch {
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}
