package serve

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// instruments are the server's Prometheus series, registered on its own
// registry (so that several servers, in tests, do not collide).
type instruments struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec   // model, code
	latency  *prometheus.HistogramVec // model
	batch    *prometheus.HistogramVec // model
	predict  *prometheus.HistogramVec // model
}

// unknownModel is the model label of requests for a model the server does
// not have: clients choose names, so they must not choose label values.
const unknownModel = "_unknown"

func newInstruments(reg *prometheus.Registry) *instruments {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &instruments{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fathom_serve_requests_total",
			Help: "Inference requests by model and HTTP status code.",
		}, []string{"model", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fathom_serve_request_duration_seconds",
			Help:    "Time from reading an inference request to writing its answer.",
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1, 5},
		}, []string{"model"}),
		batch: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fathom_serve_batch_rows",
			Help:    "Rows per batch the model ran (dynamic batching merges requests).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11), // 1 … 1024
		}, []string{"model"}),
		predict: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fathom_serve_batch_seconds",
			Help:    "Time the model took to run one batch.",
			Buckets: []float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 50e-3, 250e-3, 1},
		}, []string{"model"}),
	}
	reg.MustRegister(m.requests, m.latency, m.batch, m.predict)
	return m
}

// addModel registers the per-model series: the queue depth gauge reads
// the batcher's queue when scraped.
func (m *instruments) addModel(name string, b *batcher) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "fathom_serve_queue_depth",
		Help:        "Inference requests waiting in the model's queue.",
		ConstLabels: prometheus.Labels{"model": name},
	}, func() float64 { return float64(b.depth()) }))
	batch, predict := m.batch.WithLabelValues(name), m.predict.WithLabelValues(name)
	b.observe = func(rows int, d time.Duration) {
		batch.Observe(float64(rows))
		predict.Observe(d.Seconds())
	}
}

// request records one finished inference request.
func (m *instruments) request(model string, code int, d time.Duration) {
	m.requests.WithLabelValues(model, strconv.Itoa(code)).Inc()
	if code == 200 {
		m.latency.WithLabelValues(model).Observe(d.Seconds())
	}
}
