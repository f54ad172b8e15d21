package main

import (
	"io"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hds-go/hds"
)

var metricsLine = regexp.MustCompile(`Metrics \(Prometheus, no authentication\): (http://\S+/metrics)\n`)

// startWithMetrics starts the server in memory with metrics.addr on a
// free port and the user alice, and returns it with its metrics URL.
func startWithMetrics(t *testing.T) (*server, string) {
	t.Helper()
	cfg := writeConfig(t, `{"metrics": {"addr": "127.0.0.1:0"},
		"users": [{"username": "alice", "password": "alice-password"}]}`)
	s := start(t, []string{"-config", cfg, "serve"}, map[string]string{"HDS_ADDR": "127.0.0.1:0", "HDS_DATABASE_URL": "memory:"})
	m := metricsLine.FindStringSubmatch(s.stdout.String())
	require.NotNil(t, m, "stdout names the metrics URL:\n%s", s.stdout.String())
	return s, m[1]
}

// scrape GETs url and parses the Prometheus text format.
func scrape(t *testing.T, url string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err, "scrape")
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "scrape")
	assert.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain"), "the text format: %s", res.Header.Get("Content-Type"))
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err, "the text format parses:\n%s", body)
	return families, string(body)
}

// value is the value of the family's metric with exactly labels, and
// whether there is one.
func value(f *dto.MetricFamily, labels map[string]string) (float64, bool) {
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) != len(labels) {
			continue
		}
		same := true
		for k, v := range labels {
			same = same && got[k] == v
		}
		if !same {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestServeMetrics: metrics.addr serves GET /metrics in the Prometheus
// text format: from the first scrape every family but the two
// per-request ones, labelled counters at 0 for each label value,
// hds_build_info with /health's version, the Go and process collectors;
// after requests, the request families labelled with route patterns,
// never a name.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	s, url := startWithMetrics(t)

	first, _ := scrape(t, url)
	zeros := []struct {
		family string
		labels map[string]string
	}{
		{"hds_http_requests_in_flight", nil},
		{"hds_store_errors_total", map[string]string{"kind": "timeout"}},
		{"hds_store_errors_total", map[string]string{"kind": "unavailable"}},
		{"hds_store_errors_total", map[string]string{"kind": "other"}},
		{"hds_event_streams", nil},
		{"hds_webhook_deliveries_total", map[string]string{"outcome": "succeeded"}},
		{"hds_webhook_deliveries_total", map[string]string{"outcome": "failed"}},
		{"hds_webhook_deliveries_total", map[string]string{"outcome": "retried"}},
		{"hds_webhook_pending", nil},
		{"hds_rate_limit_shared", nil},
		{"hds_login_failures_total", nil},
		{"hds_backups_total", map[string]string{"outcome": "succeeded"}},
		{"hds_backups_total", map[string]string{"outcome": "failed"}},
	}
	for _, z := range zeros {
		v, ok := value(first[z.family], z.labels)
		assert.True(t, ok, "first scrape: %s%v is there", z.family, z.labels)
		assert.Zero(t, v, "first scrape: %s%v", z.family, z.labels)
	}
	assert.Equal(t, dto.MetricType_COUNTER, first["hds_store_errors_total"].GetType())
	assert.Equal(t, dto.MetricType_GAUGE, first["hds_webhook_pending"].GetType())
	v, ok := value(first["hds_build_info"], map[string]string{"version": hds.BuildVersion(), "go_version": runtime.Version()})
	assert.True(t, ok && v == 1, "hds_build_info{version=%q,go_version=%q} 1", hds.BuildVersion(), runtime.Version())
	status, health := call(t, "GET", s.url+"/health", "", nil)
	require.Equal(t, 200, status)
	assert.Equal(t, hds.BuildVersion(), health["version"], "/health's version is hds_build_info's")
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		assert.Contains(t, first, name, "the Go runtime and process collectors")
	}

	token := login(t, s.url, "alice", "alice-password")
	status, _ = call(t, "POST", s.url+"/api/v1/projects/secret-project-name", token, nil)
	require.Equal(t, 201, status)
	status, _ = call(t, "GET", s.url+"/api/v1/projects/secret-project-name/collections/hidden-collection", token, nil)
	require.Equal(t, 404, status)
	status, _ = call(t, "GET", s.url+"/no/such/path", token, nil)
	require.Equal(t, 404, status)
	status, _ = call(t, "POST", s.url+"/api/v1/auth/login", "", map[string]string{"username": "alice", "password": "wrong"})
	require.Equal(t, 401, status)

	want := []struct {
		family string
		labels map[string]string
		value  float64
	}{
		{"hds_http_requests_total", map[string]string{"method": "POST", "route": "/api/v1/auth/login", "code": "200"}, 1},
		{"hds_http_requests_total", map[string]string{"method": "POST", "route": "/api/v1/auth/login", "code": "401"}, 1},
		{"hds_http_requests_total", map[string]string{"method": "POST", "route": "/api/v1/projects/{project}", "code": "201"}, 1},
		{"hds_http_requests_total", map[string]string{"method": "GET",
			"route": "/api/v1/projects/{project}/collections/{collection}", "code": "404"}, 1},
		{"hds_http_requests_total", map[string]string{"method": "GET", "route": "unmatched", "code": "404"}, 1},
		{"hds_http_requests_total", map[string]string{"method": "GET", "route": "/health", "code": "200"}, 1},
		{"hds_http_request_duration_seconds", map[string]string{"method": "POST", "route": "/api/v1/auth/login"}, 2},
		{"hds_login_failures_total", nil, 1},
		{"hds_http_requests_in_flight", nil, 0},
	}
	// The observer is told off the request path: poll until the last
	// fact is in.
	var families map[string]*dto.MetricFamily
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; {
		families, body = scrape(t, url)
		if v, _ := value(families["hds_login_failures_total"], nil); v == 1 {
			if v, _ := value(families["hds_http_requests_total"], map[string]string{"method": "POST", "route": "/api/v1/auth/login", "code": "401"}); v == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failed login is not counted after 10s:\n%s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, w := range want {
		v, ok := value(families[w.family], w.labels)
		assert.True(t, ok, "%s%v is there", w.family, w.labels)
		assert.Equal(t, w.value, v, "%s%v", w.family, w.labels)
	}
	for _, secret := range []string{"secret-project-name", "hidden-collection", "alice", "no/such", token} {
		assert.NotContains(t, body, secret, "no label holds a name, a username or a token")
	}
}

// TestServeMetricsRoutes: the metrics listener serves GET and HEAD
// /metrics and nothing else: other paths 404, other methods 405.
func TestServeMetricsRoutes(t *testing.T) {
	t.Parallel()
	s, url := startWithMetrics(t)
	base := strings.TrimSuffix(url, "/metrics")
	cases := []struct {
		method, path string
		status       int
	}{
		{"GET", "/metrics", 200},
		{"HEAD", "/metrics", 200},
		{"POST", "/metrics", 405},
		{"PUT", "/metrics", 405},
		{"DELETE", "/metrics", 405},
		{"GET", "/", 404},
		{"GET", "/metrics/", 404},
		{"GET", "/health", 404},
		{"GET", "/api/v1/projects", 404},
		{"GET", "//metrics", 404},
	}
	for _, c := range cases {
		req, err := http.NewRequest(c.method, base+c.path, nil)
		require.NoError(t, err)
		res, err := http.DefaultTransport.RoundTrip(req) // no redirect followed
		require.NoError(t, err, "%s %s", c.method, c.path)
		res.Body.Close()
		assert.Equal(t, c.status, res.StatusCode, "%s %s", c.method, c.path)
		if c.status == 405 {
			assert.Equal(t, "GET, HEAD", res.Header.Get("Allow"), "%s %s: Allow", c.method, c.path)
		}
	}
	res, err := http.Get(s.url + "/metrics")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, 404, res.StatusCode, "the API's own listener has no /metrics")
}

// TestServeMetricsOff: without metrics.addr no metrics listener starts
// and none is named.
func TestServeMetricsOff(t *testing.T) {
	t.Parallel()
	s := start(t, []string{"serve"}, map[string]string{"HDS_ADDR": "127.0.0.1:0", "HDS_DATABASE_URL": "memory:"})
	assert.NotContains(t, s.stdout.String(), "Metrics", "no metrics line")
}

// TestConfigMetricsAddr: metrics.addr, HDS_METRICS_ADDR over it, off by
// default, and a value that is not host:port refused naming the key.
func TestConfigMetricsAddr(t *testing.T) {
	cfg, err := loadConfig(writeConfig(t, `{}`), environ(nil))
	require.NoError(t, err)
	assert.Empty(t, cfg.metricsAddr, "off by default")
	cfg, err = loadConfig(writeConfig(t, `{"metrics": {"addr": "127.0.0.1:9100"}}`), environ(nil))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9100", cfg.metricsAddr)
	cfg, err = loadConfig(writeConfig(t, `{"metrics": {"addr": "127.0.0.1:9100"}}`), environ(map[string]string{"HDS_METRICS_ADDR": ":9200"}))
	require.NoError(t, err)
	assert.Equal(t, ":9200", cfg.metricsAddr, "the environment wins")
	_, err = loadConfig(writeConfig(t, `{"metrics": {"addr": "9100"}}`), environ(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "metrics.addr (or HDS_METRICS_ADDR) must be host:port")
}
