package serve

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
)

// Defaults of Options.
const (
	DefaultMaxBatch  = 64
	DefaultMaxDelay  = 0 // no wait: see Options.MaxDelay
	DefaultQueueSize = 1024
	DefaultMaxBody   = 16 << 20
	DefaultTimeout   = 5 * time.Second
)

// InputName is the name of a model's one input tensor.
const InputName = "input"

// Output names: the predicted class index (INT64) or value (FP32 for
// regression), the predicted class name (BYTES) and the class
// probabilities (FP32 [batch, classes]).
const (
	OutputPredict       = "predict"
	OutputLabel         = "label"
	OutputProbabilities = "probabilities"
)

// ErrTokenRequired: Serve refuses a listener beyond loopback without a
// bearer token.
var ErrTokenRequired = errors.New("serving beyond the loopback interface needs a bearer token (--token-file or FATHOM_SERVE_TOKEN)")

// Options configure a Server. The zero value gives the defaults.
type Options struct {
	// MaxBatch is the most rows one batch runs (default 64). A request of
	// more rows runs alone, never split.
	MaxBatch int
	// MaxDelay is how long the batcher waits for more requests after
	// taking the first of a batch. Zero (the default) or negative: no
	// wait, a batch is whatever queued while the model ran the last one,
	// which merges requests under load and adds no latency when idle (the
	// figures in docs/PERFORMANCE.md compare 0 and 1 ms).
	MaxDelay time.Duration
	// QueueSize is the most requests a model's queue holds (default
	// 1024); a request finding it full is answered 503.
	QueueSize int
	// MaxBody is the largest request body in bytes (default 16 MiB);
	// larger ones are answered 413.
	MaxBody int64
	// Timeout bounds an inference request from reading its body to the
	// model's answer (default 5 s); past it the answer is 503.
	Timeout time.Duration
	// Token, if set, is the bearer token every request but the health
	// checks must carry ("Authorization: Bearer <token>"). Serve requires
	// one on a listener beyond loopback.
	Token string
	// Logger receives the server's structured logs (default slog.Default()).
	// Requests are logged at debug level; the token never is.
	Logger *slog.Logger
	// Registry receives the metrics; nil: a registry of the server's own
	// with the Go and process collectors.
	Registry *prometheus.Registry

	// beforePredict, if set, runs in the batcher before each batch (tests
	// block it to fill a queue or hold a request in flight).
	beforePredict func()
}

func (o Options) withDefaults() Options {
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Model is a model to serve under a name.
type Model struct {
	// Name is the model's name in the URLs (no "/"); Version its one
	// version (default "1").
	Name    string
	Version string
	Model   *modelfile.Model
}

// served is a model with its batcher and precomputed metadata.
type served struct {
	name, version string
	model         *modelfile.Model
	shape         []int64 // the input shape per row (the spec's input)
	features      int
	outputs       []string // the output names the model offers
	defaults      []string // the outputs of a request that names none
	batcher       *batcher
	metadata      []byte // ModelMetadata as JSON
}

// Server answers the Open Inference Protocol's REST API for a set of
// models, one dynamic batcher per model.
type Server struct {
	opts           Options
	log            *slog.Logger
	models         map[string]*served
	names          []string
	metrics        *instruments
	meta           []byte // ServerMetadata as JSON
	metricsHandler http.Handler

	mu       sync.Mutex
	closing  bool
	inflight int
	idle     chan struct{} // closed when inflight reaches 0 while closing
	http     *http.Server
}

// New returns a server for models and starts their batchers; Serve
// answers requests, Shutdown stops it.
func New(models []Model, opts Options) (*Server, error) {
	opts = opts.withDefaults()
	if len(models) == 0 {
		return nil, errors.New("serve: no models")
	}
	s := &Server{opts: opts, log: opts.Logger, models: map[string]*served{}, metrics: newInstruments(opts.Registry)}
	s.metricsHandler = promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})
	for _, m := range models {
		sm, err := newServed(m, opts)
		if err != nil {
			s.stopBatchers()
			return nil, err
		}
		if _, dup := s.models[sm.name]; dup {
			s.stopBatchers()
			return nil, fmt.Errorf("serve: two models named %q (give one another name)", sm.name)
		}
		s.models[sm.name] = sm
		s.names = append(s.names, sm.name)
		s.metrics.addModel(sm.name, sm.batcher)
		go sm.batcher.run()
	}
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
	s.meta, _ = json.Marshal(ServerMetadata{Name: "fathom", Version: version, Extensions: []string{}})
	return s, nil
}

func newServed(m Model, opts Options) (*served, error) {
	if m.Name == "" || strings.ContainsAny(m.Name, "/?#% ") {
		return nil, fmt.Errorf("serve: model name %q must be non-empty without '/', '?', '#', '%%' or spaces", m.Name)
	}
	if m.Model == nil || m.Model.Net == nil {
		return nil, fmt.Errorf("serve: model %q has no network", m.Name)
	}
	if m.Version == "" {
		m.Version = "1"
	}
	sm := &served{name: m.Name, version: m.Version, model: m.Model, features: 1}
	for _, d := range m.Model.Spec.Input {
		sm.shape = append(sm.shape, int64(d))
		sm.features *= d
	}
	batchShape := append([]int64{-1}, sm.shape...)
	md := ModelMetadata{Name: m.Name, Versions: []string{m.Version}, Platform: "fathom",
		Inputs:     []TensorMetadata{{Name: InputName, Datatype: "FP32", Shape: batchShape}},
		Parameters: map[string]any{"task": m.Model.Task.String()}}
	if m.Model.Task == metrics.Regression {
		md.Outputs = []TensorMetadata{{Name: OutputPredict, Datatype: "FP32", Shape: []int64{-1}}}
		sm.outputs = []string{OutputPredict}
		sm.defaults = sm.outputs
	} else {
		md.Outputs = []TensorMetadata{
			{Name: OutputPredict, Datatype: "INT64", Shape: []int64{-1}},
			{Name: OutputLabel, Datatype: "BYTES", Shape: []int64{-1}},
			{Name: OutputProbabilities, Datatype: "FP32", Shape: []int64{-1, int64(len(m.Model.Classes))}},
		}
		md.Parameters["classes"] = m.Model.Classes
		sm.outputs = []string{OutputPredict, OutputLabel, OutputProbabilities}
		sm.defaults = []string{OutputPredict, OutputProbabilities}
	}
	if m.Model.Columns != nil {
		md.Parameters["columns"] = m.Model.Columns
	}
	var err error
	if sm.metadata, err = json.Marshal(md); err != nil {
		return nil, fmt.Errorf("serve: model %q: %w", m.Name, err)
	}
	sm.batcher = newBatcher(m.Model, sm.features, opts.MaxBatch, opts.MaxDelay, opts.QueueSize)
	sm.batcher.beforePredict = opts.beforePredict
	return sm, nil
}

// Handler returns the server's HTTP handler (for a listener of the
// caller's own, or httptest).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// IsLoopback reports whether a listener's address is on the loopback
// interface (or not a network address at all, like a Unix socket).
func IsLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.Network() == "unix"
	}
	return ta.IP.IsLoopback()
}

// Serve answers requests on l until Shutdown; it returns
// http.ErrServerClosed after a Shutdown. A listener beyond loopback
// needs Options.Token (ErrTokenRequired).
func (s *Server) Serve(l net.Listener) error {
	if s.opts.Token == "" && !IsLoopback(l.Addr()) {
		return ErrTokenRequired
	}
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30*time.Second + s.opts.Timeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	s.http = hs
	s.mu.Unlock()
	s.log.Info("serving", "addr", l.Addr().String(), "models", s.names, "token", s.opts.Token != "",
		"max_batch", s.opts.MaxBatch, "max_delay", max(s.opts.MaxDelay, 0).String(), "queue", s.opts.QueueSize)
	return hs.Serve(l)
}

// Shutdown stops the server gracefully: it takes no new requests,
// finishes those in flight (they still run through their batchers), then
// stops the batchers. If ctx ends first it closes the connections and
// returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	hs := s.http
	if s.inflight > 0 && s.idle == nil {
		s.idle = make(chan struct{})
	}
	idle := s.idle
	s.mu.Unlock()
	s.log.Info("shutting down")
	var err error
	if hs != nil {
		if err = hs.Shutdown(ctx); err != nil {
			hs.Close()
		}
	}
	if idle != nil && err == nil {
		select {
		case <-idle:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	s.stopBatchers()
	for _, sm := range s.models {
		select {
		case <-sm.batcher.done:
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
		}
	}
	return err
}

func (s *Server) stopBatchers() {
	for _, sm := range s.models {
		sm.batcher.close()
	}
}

// enter counts a request in flight unless the server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.inflight++
	return true
}

func (s *Server) leave() {
	s.mu.Lock()
	s.inflight--
	if s.inflight == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
	s.mu.Unlock()
}

func (s *Server) ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closing
}

// serveHTTP routes a request.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	switch p {
	case "/v2/health/live":
		if method(w, r, http.MethodGet) {
			writeJSON(w, http.StatusOK, []byte(`{"live":true}`))
		}
		return
	case "/v2/health/ready":
		if method(w, r, http.MethodGet) {
			if s.ready() {
				writeJSON(w, http.StatusOK, []byte(`{"ready":true}`))
			} else {
				writeJSON(w, http.StatusServiceUnavailable, []byte(`{"ready":false}`))
			}
		}
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fathom"`)
		writeError(w, http.StatusUnauthorized, "missing or wrong bearer token (Authorization: Bearer <token>)")
		return
	}
	switch {
	case p == "/metrics":
		if method(w, r, http.MethodGet) {
			s.metricsHandler.ServeHTTP(w, r)
		}
	case p == "/v2":
		if method(w, r, http.MethodGet) {
			writeJSON(w, http.StatusOK, s.meta)
		}
	case strings.HasPrefix(p, "/v2/models/"):
		s.serveModel(w, r, strings.Split(strings.TrimPrefix(p, "/v2/models/"), "/"))
	default:
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
	}
}

// serveModel routes /v2/models/{name}[/versions/{v}][/ready|/infer].
func (s *Server) serveModel(w http.ResponseWriter, r *http.Request, seg []string) {
	name := seg[0]
	sm, ok := s.models[name]
	seg = seg[1:]
	if len(seg) >= 2 && seg[0] == "versions" {
		if ok && seg[1] != sm.version {
			writeError(w, http.StatusNotFound, fmt.Sprintf("model %q has no version %q (it has %q)", name, seg[1], sm.version))
			return
		}
		seg = seg[2:]
	}
	action := ""
	if len(seg) == 1 {
		action = seg[0]
	} else if len(seg) > 1 {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
		return
	}
	if action != "" && action != "ready" && action != "infer" {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
		return
	}
	if !ok {
		if action == "infer" {
			s.metrics.request(unknownModel, http.StatusNotFound, 0)
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown model %q (this server has %s)", name, strings.Join(s.names, ", ")))
		return
	}
	switch action {
	case "":
		if method(w, r, http.MethodGet) {
			writeJSON(w, http.StatusOK, sm.metadata)
		}
	case "ready":
		if method(w, r, http.MethodGet) {
			ready := s.ready()
			code := http.StatusOK
			if !ready {
				code = http.StatusServiceUnavailable
			}
			b, _ := json.Marshal(map[string]any{"name": sm.name, "ready": ready})
			writeJSON(w, code, b)
		}
	case "infer":
		if method(w, r, http.MethodPost) {
			start := time.Now()
			code, rows, msg := s.infer(w, r, sm)
			s.metrics.request(sm.name, code, time.Since(start))
			if s.log.Enabled(r.Context(), slog.LevelDebug) {
				s.log.Debug("infer", "model", sm.name, "code", code, "rows", rows, "seconds", time.Since(start).Seconds(), "error", msg)
			}
		}
	}
}

// method answers 405 unless r uses m.
func method(w http.ResponseWriter, r *http.Request, m string) bool {
	if r.Method == m || (m == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", m)
	writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, m))
	return false
}

func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.opts.Token)) == 1
}

var bufScratch = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// rowsScratch holds the float32 rows of requests (and of merged batches).
var rowsScratch sync.Pool // of *[]float32

// getRows returns an empty slice with room for n values.
func getRows(n int) []float32 {
	if p, ok := rowsScratch.Get().(*[]float32); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]float32, 0, n)
}

// putRows gives x back for reuse once nothing reads it any more.
func putRows(x []float32) {
	if cap(x) > 0 && cap(x) <= 4<<20 {
		rowsScratch.Put(&x)
	}
}

// infer answers one inference request; it returns the status code, the
// rows and the error message, for the metrics and the log.
func (s *Server) infer(w http.ResponseWriter, r *http.Request, sm *served) (int, int, string) {
	fail := func(code int, msg string) (int, int, string) {
		writeError(w, code, msg)
		return code, 0, msg
	}
	if !s.enter() {
		return fail(http.StatusServiceUnavailable, ErrShuttingDown.Error())
	}
	defer s.leave()
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
	defer cancel()

	if r.ContentLength > s.opts.MaxBody {
		return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body of %d bytes is over the limit of %d bytes", r.ContentLength, s.opts.MaxBody))
	}
	buf := bufScratch.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 4<<20 { // a rare huge body is left to the collector
			bufScratch.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.opts.MaxBody)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over the limit of %d bytes", s.opts.MaxBody))
		}
		return fail(http.StatusBadRequest, "reading the request body: "+err.Error())
	}
	// The binary tensor data extension: a JSON header of the length the
	// header field gives, then the inputs' raw bytes.
	head, bin := buf.Bytes(), []byte(nil)
	if h := r.Header.Get(binaryHeaderLength); h != "" {
		n, err := strconv.Atoi(h)
		if err != nil || n < 0 || n > len(head) {
			return fail(http.StatusBadRequest, fmt.Sprintf("%s %q: want the JSON header's length, at most the body's %d bytes", binaryHeaderLength, h, len(head)))
		}
		head, bin = head[:n], head[n:]
	}
	var req InferRequest
	if err := json.Unmarshal(head, &req); err != nil {
		return fail(http.StatusBadRequest, "malformed JSON request: "+err.Error())
	}
	x, rows, err := sm.input(&req, bin, s.opts.MaxBody)
	if err != nil {
		return fail(http.StatusBadRequest, err.Error())
	}
	outputs, binaryOut, err := sm.requested(&req)
	if err != nil {
		return fail(http.StatusBadRequest, err.Error())
	}

	j := &job{ctx: ctx, x: x, rows: rows, done: make(chan result, 1)}
	if err := sm.batcher.submit(j); err != nil {
		return fail(http.StatusServiceUnavailable, fmt.Sprintf("model %q: %v, try again later", sm.name, err))
	}
	var res result
	select {
	case res = <-j.done:
		putRows(x) // the batcher is done with it
	case <-ctx.Done():
		res.err = ctx.Err()
	}
	switch {
	case res.err == nil:
	case errors.Is(res.err, context.DeadlineExceeded):
		return fail(http.StatusServiceUnavailable, fmt.Sprintf("model %q: no answer within the timeout of %v", sm.name, s.opts.Timeout))
	case errors.Is(res.err, context.Canceled):
		return 499, rows, "the client closed the request" // nginx's code; nothing is written
	default:
		s.log.Error("predict", "model", sm.name, "rows", rows, "error", res.err)
		return fail(http.StatusInternalServerError, fmt.Sprintf("model %q: %v", sm.name, res.err))
	}

	resp := InferResponse{ModelName: sm.name, ModelVersion: sm.version, ID: req.ID}
	p, n := res.pred, int64(rows)
	for k, name := range outputs {
		o := OutputTensor{Name: name, Shape: []int64{n}, Binary: binaryOut[k]}
		switch name {
		case OutputPredict:
			if p.Values != nil {
				o.Datatype, o.Data = "FP32", p.Values
			} else {
				o.Datatype, o.Data = "INT64", p.Class
			}
		case OutputLabel:
			labels := make([]string, len(p.Class))
			for i, k := range p.Class {
				labels[i] = p.Classes[k]
			}
			o.Datatype, o.Data = "BYTES", labels
		case OutputProbabilities:
			o.Shape = []int64{n, int64(len(p.Classes))}
			o.Datatype, o.Data = "FP32", p.Probs
		}
		resp.Outputs = append(resp.Outputs, o)
	}
	out, err := appendResponse(buf.Bytes()[:0], &resp)
	if err != nil {
		return fail(http.StatusInternalServerError, fmt.Sprintf("model %q: %v", sm.name, err))
	}
	if slices.Contains(binaryOut, true) {
		head := len(out)
		for _, o := range resp.Outputs {
			if o.Binary {
				out = appendBinary(out, o.Data)
			}
		}
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set(binaryHeaderLength, strconv.Itoa(head))
		h.Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(http.StatusOK)
		w.Write(out)
		return http.StatusOK, rows, ""
	}
	writeJSON(w, http.StatusOK, out)
	return http.StatusOK, rows, ""
}

// appendResponse appends r as JSON, as encoding/json would write it but
// without reflection (a batch's probabilities are thousands of numbers).
// Data must be []float32, []int64 or []string; NaN and infinities, which
// JSON cannot hold, are an error.
func appendResponse(b []byte, r *InferResponse) ([]byte, error) {
	str := func(b []byte, s string) []byte {
		q, _ := json.Marshal(s)
		return append(b, q...)
	}
	b = append(b, `{"model_name":`...)
	b = str(b, r.ModelName)
	if r.ModelVersion != "" {
		b = append(b, `,"model_version":`...)
		b = str(b, r.ModelVersion)
	}
	if r.ID != "" {
		b = append(b, `,"id":`...)
		b = str(b, r.ID)
	}
	b = append(b, `,"outputs":[`...)
	for i, o := range r.Outputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = str(b, o.Name)
		b = append(b, `,"shape":[`...)
		for k, d := range o.Shape {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, d, 10)
		}
		b = append(b, `],"datatype":`...)
		b = str(b, o.Datatype)
		if o.Binary {
			b = append(b, `,"parameters":{"binary_data_size":`...)
			b = strconv.AppendInt(b, int64(binarySizeOf(o.Data)), 10)
			b = append(b, "}}"...)
			continue
		}
		b = append(b, `,"data":[`...)
		switch data := o.Data.(type) {
		case []float32:
			for k, v := range data {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return nil, fmt.Errorf("output %q holds %v, which JSON cannot carry", o.Name, v)
				}
				if k > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
			}
		case []int64:
			for k, v := range data {
				if k > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, v, 10)
			}
		case []string:
			for k, v := range data {
				if k > 0 {
					b = append(b, ',')
				}
				b = str(b, v)
			}
		default:
			return nil, fmt.Errorf("output %q: data of type %T", o.Name, o.Data)
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}\n"...), nil
}

// binarySizeOf is the size of data in the binary tensor data extension.
func binarySizeOf(data any) int {
	switch d := data.(type) {
	case []float32:
		return 4 * len(d)
	case []int64:
		return 8 * len(d)
	case []string:
		n := 0
		for _, s := range d {
			n += 4 + len(s)
		}
		return n
	}
	return 0
}

// appendBinary appends data in the binary tensor data extension:
// little-endian numbers; BYTES elements each as a 4-byte little-endian
// length and the bytes.
func appendBinary(b []byte, data any) []byte {
	le := binary.LittleEndian
	switch d := data.(type) {
	case []float32:
		for _, v := range d {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
	case []int64:
		for _, v := range d {
			b = le.AppendUint64(b, uint64(v))
		}
	case []string:
		for _, s := range d {
			b = le.AppendUint32(b, uint32(len(s)))
			b = append(b, s...)
		}
	}
	return b
}

// binaryHeaderLength is the HTTP header of the binary tensor data
// extension: the length of the JSON part of the body.
const binaryHeaderLength = "Inference-Header-Content-Length"

// input checks the request's one input against the model and returns its
// values as float32 rows; bin holds the binary data after the JSON
// header (the binary tensor data extension), or nothing.
func (sm *served) input(req *InferRequest, bin []byte, maxBody int64) ([]float32, int, error) {
	want := fmt.Sprintf("model %q reads one input %q of shape %s", sm.name, InputName, shapeString(append([]int64{-1}, sm.shape...)))
	if len(sm.shape) > 1 {
		want += fmt.Sprintf(" (or [-1,%d])", sm.features)
	}
	switch {
	case len(req.Inputs) == 0:
		return nil, 0, errors.New("the request has no inputs: " + want)
	case len(req.Inputs) > 1:
		return nil, 0, fmt.Errorf("the request has %d inputs: %s", len(req.Inputs), want)
	}
	in := &req.Inputs[0]
	if in.Name != InputName {
		return nil, 0, fmt.Errorf("unknown input %q: %s", in.Name, want)
	}
	if in.Datatype == "" {
		return nil, 0, fmt.Errorf("input %q has no datatype", in.Name)
	}
	if len(in.Shape) < 2 || in.Shape[0] < 1 {
		return nil, 0, fmt.Errorf("input %q has shape %s: %s, the batch first (at least 1)", in.Name, shapeString(in.Shape), want)
	}
	n := int64(1)
	for _, d := range in.Shape[1:] {
		if d < 1 || d > int64(sm.features) {
			n = -1
			break
		}
		n *= d
	}
	if n != int64(sm.features) || (!slices.Equal(in.Shape[1:], sm.shape) && len(in.Shape) != 2) {
		return nil, 0, fmt.Errorf("input %q has shape %s: %s", in.Name, shapeString(in.Shape), want)
	}
	// Each value takes at least two bytes of JSON ("0,"), or one in binary,
	// so a body within the limit cannot hold more; refusing larger shapes
	// early bounds the allocation below.
	_, binary := in.Parameters["binary_data_size"]
	perValue := int64(2)
	if binary {
		perValue = 1
	}
	if rows := in.Shape[0]; rows > maxBody/(perValue*n)+1 {
		return nil, 0, fmt.Errorf("input %q: %d rows of %d values cannot fit in a body of at most %d bytes", in.Name, rows, n, maxBody)
	}
	rows := int(in.Shape[0])
	var x []float32
	var err error
	if binary {
		size := in.Parameters["binary_data_size"]
		f, isNum := size.(float64)
		switch {
		case !isNum || f != float64(len(bin)):
			return nil, 0, fmt.Errorf("input %q: binary_data_size %v, but %d bytes follow the JSON header (%s)", in.Name, size, len(bin), binaryHeaderLength)
		case len(in.Data) != 0:
			return nil, 0, fmt.Errorf("input %q has both data and binary_data_size", in.Name)
		}
		x, err = decodeBinary(getRows(rows*sm.features), bin, in.Datatype, int64(rows*sm.features))
	} else {
		if len(bin) != 0 {
			return nil, 0, fmt.Errorf("%d bytes of binary data follow the JSON header, but input %q has no binary_data_size", len(bin), in.Name)
		}
		if len(in.Data) == 0 {
			return nil, 0, fmt.Errorf("input %q has no data", in.Name)
		}
		x, err = decodeData(getRows(rows*sm.features), in.Data, in.Datatype, in.Shape)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("input %q: %w", in.Name, err)
	}
	return x, rows, nil
}

// requested returns the output names a request asks for, in its order.
func (sm *served) requested(req *InferRequest) (names []string, binaryOut []bool, err error) {
	// The binary tensor data extension: binary_data_output asks for every
	// output in binary, an output's binary_data for that one.
	all, err := boolParam(req.Parameters, "binary_data_output")
	if err != nil {
		return nil, nil, err
	}
	if len(req.Outputs) == 0 {
		for range sm.defaults {
			binaryOut = append(binaryOut, all)
		}
		return sm.defaults, binaryOut, nil
	}
	names = make([]string, 0, len(req.Outputs))
	for _, o := range req.Outputs {
		if !slices.Contains(sm.outputs, o.Name) {
			return nil, nil, fmt.Errorf("unknown output %q: model %q has outputs %s", o.Name, sm.name, strings.Join(sm.outputs, ", "))
		}
		if slices.Contains(names, o.Name) {
			continue
		}
		bin := all
		if _, ok := o.Parameters["binary_data"]; ok {
			if bin, err = boolParam(o.Parameters, "binary_data"); err != nil {
				return nil, nil, fmt.Errorf("output %q: %w", o.Name, err)
			}
		}
		names = append(names, o.Name)
		binaryOut = append(binaryOut, bin)
	}
	return names, binaryOut, nil
}

// boolParam returns a boolean parameter (false when absent).
func boolParam(params map[string]any, name string) (bool, error) {
	v, ok := params[name]
	if !ok {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("parameter %s is %v, want true or false", name, v)
	}
	return b, nil
}

// shapeString writes a shape as the protocol does: [2,4].
func shapeString(shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func writeJSON(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	w.Write(body)
}

// writeError writes the protocol's error body {"error": msg}.
func writeError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(ErrorResponse{Error: msg})
	writeJSON(w, code, b)
}
