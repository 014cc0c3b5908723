package rest

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/meridian-catalog/meridian/store"
)

// metrics are the side-car's Prometheus collectors, served at /metrics without
// authentication (they hold no catalog data): requests by method, route pattern and
// status, their latency, the outbox consumers' positions and backlog, and the Go
// runtime and process collectors. Every label value comes from a fixed set, so no
// request can grow the metrics: methods are the standard ones or "other", routes are
// the registered patterns or "unmatched", codes are the statuses the server answers.
// On a driver that commits writes in groups (SQLite), the writer's work is counted too:
// the share of the time it is busy tells whether writes wait for the one writer.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(d *store.Dispatcher, db store.Driver) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meridian_http_requests_total", Help: "HTTP requests by method, route pattern and status code.",
		}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "meridian_http_request_duration_seconds", Help: "HTTP request latency by method and route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"method", "route"}),
	}
	m.registry.MustRegister(m.requests, m.duration, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if d != nil {
		m.registry.MustRegister(outboxCollector{d})
	}
	if g, ok := db.(store.GroupCommitter); ok {
		m.registry.MustRegister(writerCollector{g})
	}
	return m
}

// observe records one finished request.
func (m *metrics) observe(r *http.Request, status int, took time.Duration) {
	route := "unmatched"
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
		route = rc.RoutePattern()
	}
	method := methodLabel(r.Method)
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(took.Seconds())
}

// methodLabel is the method label of a request: one of the methods of RFC 9110 and
// PATCH, or "other" for any invented method.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// outboxCollector reports each outbox consumer's position and backlog at scrape time;
// the backlog is a count query, so a scrape reads no event.
type outboxCollector struct{ d *store.Dispatcher }

var (
	outboxPosition = prometheus.NewDesc("meridian_outbox_position", "Sequence number of the last change event a consumer handled.", []string{"consumer"}, nil)
	outboxPending  = prometheus.NewDesc("meridian_outbox_pending", "Change events waiting for a consumer.", []string{"consumer"}, nil)
)

func (c outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- outboxPosition
	ch <- outboxPending
}

func (c outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	status, err := c.d.Status(ctx)
	if err != nil {
		return
	}
	for _, s := range status {
		ch <- prometheus.MustNewConstMetric(outboxPosition, prometheus.GaugeValue, float64(s.Position), s.Name)
		ch <- prometheus.MustNewConstMetric(outboxPending, prometheus.GaugeValue, float64(s.Pending), s.Name)
	}
}

// writerCollector reports a group-committing driver's counts (store.GroupStats).
type writerCollector struct{ g store.GroupCommitter }

var (
	writerCommits = prometheus.NewDesc("meridian_writer_commits_total",
		"Write transactions the single writer committed (or tried to), each holding a group of concurrent writes.", nil, nil)
	writerWrites = prometheus.NewDesc("meridian_writer_writes_total",
		"Writes the single writer ran in those transactions.", nil, nil)
	writerBusy = prometheus.NewDesc("meridian_writer_busy_seconds_total",
		"Time the single writer spent running and committing them; its rate near 1 means writes wait for the writer.", nil, nil)
)

func (c writerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- writerCommits
	ch <- writerWrites
	ch <- writerBusy
}

func (c writerCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.g.GroupStats()
	ch <- prometheus.MustNewConstMetric(writerCommits, prometheus.CounterValue, float64(st.Groups))
	ch <- prometheus.MustNewConstMetric(writerWrites, prometheus.CounterValue, float64(st.Writes))
	ch <- prometheus.MustNewConstMetric(writerBusy, prometheus.CounterValue, st.Busy.Seconds())
}
