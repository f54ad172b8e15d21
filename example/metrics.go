package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hds-go/hds"
)

// metricsPath is the one path of the metrics listener.
const metricsPath = "/metrics"

// metrics are the Prometheus metrics of the server (metrics.addr,
// docs/server.md#metrics), built on hds.WithObserver: the observer's
// facts become the families of docs/api.md's metrics section. Their
// labels are route patterns, methods, statuses, kinds and outcomes: never
// a name, a username, a token or a value.
type metrics struct {
	registry   *prometheus.Registry
	requests   *prometheus.CounterVec
	durations  *prometheus.HistogramVec
	inFlight   prometheus.Gauge
	storeErrs  *prometheus.CounterVec
	streams    prometheus.Gauge
	deliveries *prometheus.CounterVec
	pending    prometheus.Gauge
	shared     prometheus.Gauge
	logins     prometheus.Counter
	backups    *prometheus.CounterVec

	// series holds the request counter and duration histogram of each
	// method, route and status seen, so that a request's two counts
	// skip the label hashing of WithLabelValues (and formatting the
	// status). Its keys are bounded: methods, route patterns, statuses.
	seriesMu sync.Mutex
	series   map[seriesKey]requestSeries
}

// seriesKey names a request's series.
type seriesKey struct {
	method, route string
	status        int
}

// requestSeries are the metrics one request's end counts.
type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// newMetrics registers every family, with the Go runtime and process
// collectors; version is hds_build_info's (/health's).
func newMetrics(version string) *metrics {
	m := &metrics{
		series:   map[seriesKey]requestSeries{},
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hds_http_requests_total", Help: "HTTP requests answered, by method, route pattern and status code.",
		}, []string{"method", "route", "code"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hds_http_request_duration_seconds", Help: "Time from a request's start to its end, by method and route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hds_http_requests_in_flight", Help: "HTTP requests started and not yet answered.",
		}),
		storeErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hds_store_errors_total", Help: "Requests answered with a store error, by kind (timeout, unavailable, other).",
		}, []string{"kind"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hds_event_streams", Help: "Open change-feed streams.",
		}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hds_webhook_deliveries_total", Help: "Webhook delivery attempts, by outcome (succeeded, failed, retried).",
		}, []string{"outcome"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hds_webhook_pending", Help: "Webhook deliveries not yet succeeded or failed.",
		}),
		shared: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hds_rate_limit_shared", Help: "1 while the rate limit counters are in Redis, 0 while local or without Redis.",
		}),
		logins: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hds_login_failures_total", Help: "Failed logins.",
		}),
		backups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hds_backups_total", Help: "Backups made, by outcome (succeeded, failed).",
		}, []string{"outcome"}),
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hds_build_info", Help: "Always 1: the version of hds (as /health reports it) and of Go.",
	}, []string{"version", "go_version"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	// Every labelled counter shows each of its label values from the
	// first scrape, at 0.
	for _, kind := range []string{"timeout", "unavailable", "other"} {
		m.storeErrs.WithLabelValues(kind)
	}
	for _, outcome := range []string{"succeeded", "failed", "retried"} {
		m.deliveries.WithLabelValues(outcome)
	}
	for _, outcome := range []string{"succeeded", "failed"} {
		m.backups.WithLabelValues(outcome)
	}
	m.registry.MustRegister(m.requests, m.durations, m.inFlight, m.storeErrs, m.streams, m.deliveries,
		m.pending, m.shared, m.logins, m.backups, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observer returns the hds.Observer that feeds m.
func (m *metrics) observer() hds.Observer {
	return hds.Observer{
		RequestStarted: func(string) { m.inFlight.Inc() },
		RequestFinished: func(method, route string, status int, d time.Duration) {
			m.inFlight.Dec()
			s := m.requestSeries(method, route, status)
			s.count.Inc()
			s.duration.Observe(d.Seconds())
		},
		StoreError:        func(kind string) { m.storeErrs.WithLabelValues(kind).Inc() },
		EventStreamOpened: m.streams.Inc,
		EventStreamClosed: m.streams.Dec,
		WebhookDelivery:   func(outcome string) { m.deliveries.WithLabelValues(outcome).Inc() },
		WebhookPending:    func(n int) { m.pending.Set(float64(n)) },
		RateLimitShared: func(shared bool) {
			if shared {
				m.shared.Set(1)
			} else {
				m.shared.Set(0)
			}
		},
		LoginFailed: m.logins.Inc,
		Backup:      m.backup,
	}
}

// requestSeries returns the series of a request's end, made on first
// use.
func (m *metrics) requestSeries(method, route string, status int) requestSeries {
	k := seriesKey{method, route, status}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	s, ok := m.series[k]
	if !ok {
		s = requestSeries{m.requests.WithLabelValues(method, route, strconv.Itoa(status)),
			m.durations.WithLabelValues(method, route)}
		m.series[k] = s
	}
	return s
}

// backupOutcome counts a backup made, scheduled or over HTTP
// (backups.Dir.Outcome): err nil is "succeeded", else "failed".
func (m *metrics) backupOutcome(err error) {
	if err != nil {
		m.backup("failed")
		return
	}
	m.backup("succeeded")
}

// backup counts a backup made, outcome "succeeded" or "failed"
// (hds_backups_total): the server's scheduled and HTTP backups call it.
func (m *metrics) backup(outcome string) {
	if m != nil {
		m.backups.WithLabelValues(outcome).Inc()
	}
}

// handler serves GET (and HEAD) /metrics in the Prometheus text format;
// another method on it is 405, any other path 404.
func (m *metrics) handler(logger *slog.Logger) http.Handler {
	h := promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelError),
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != metricsPath:
			http.Error(w, "404 page not found: the metrics are at "+metricsPath, http.StatusNotFound)
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// metricsServer is the second listener, of metrics.addr.
type metricsServer struct {
	srv    *http.Server
	ln     net.Listener
	served chan error
}

// listenMetrics listens on addr and serves m there, without
// authentication: bind it where only the scraper reaches.
func listenMetrics(addr string, m *metrics, logger *slog.Logger) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.addr: listen: %w", err)
	}
	s := &metricsServer{
		srv: &http.Server{
			Handler:           m.handler(logger),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       60 * time.Second,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
		},
		ln:     ln,
		served: make(chan error, 1),
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

// addr is the address it listens on.
func (s *metricsServer) addr() net.Addr { return s.ln.Addr() }

// close stops it at once (a start that failed later); after shutdown it
// does nothing.
func (s *metricsServer) close() { _ = s.srv.Close() }

// shutdown stops it, waiting for scrapes in flight until ctx is done; a
// nil one has nothing to stop.
func (s *metricsServer) shutdown(ctx context.Context) error {
	if s == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	if serr := <-s.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
