package serve

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// classifier is a 4-feature, 3-class network with random weights and a
// standardizer, so that every row gets its own probabilities.
func classifier(t testing.TB) *modelfile.Model {
	t.Helper()
	m := &modelfile.Model{
		Spec: nn.Spec{Input: []int{4}, Layers: []nn.LayerSpec{{Type: "linear", Out: 8}, {Type: "relu"}, {Type: "linear", Out: 3}}},
		Task: metrics.Classification, Classes: []string{"setosa", "versicolor", "virginica"},
		Columns: []string{"a", "b", "c", "d"},
		Scaler:  &data.Standardizer{Mean: []float64{5, 3, 4, 1}, Std: []float64{1, 0.5, 2, 0.8}},
	}
	net, _, err := m.Spec.Build(tensor.NewRNG(7))
	if err != nil {
		t.Fatal(err)
	}
	net.Eval()
	m.Net = net
	return m
}

// regressor is y = 2a − b + 1.
func regressor(t testing.TB) *modelfile.Model {
	t.Helper()
	m := &modelfile.Model{Spec: nn.Spec{Input: []int{2}, Layers: []nn.LayerSpec{{Type: "linear", Out: 1}}}, Task: metrics.Regression}
	net, _, err := m.Spec.Build(tensor.NewRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	lin := net.At(0).(*nn.Linear)
	copy(lin.Weight.Float32s(), []float32{2, -1})
	lin.Bias.Float32s()[0] = 1
	net.Eval()
	m.Net = net
	return m
}

// start serves models on 127.0.0.1 and returns the base URL; the server
// shuts down at the end of the test.
func start(t *testing.T, opts Options, models ...Model) (*Server, string) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := New(models, opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, "http://" + l.Addr().String()
}

var client = &http.Client{Timeout: 20 * time.Second}

// call sends a request and returns the status code and the body.
func call(t testing.TB, method, url, body string, header ...string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// inferBody is an infer request for rows of float32 features.
func inferBody(x []float32, rows, cols int, outputs ...string) string {
	req := map[string]any{"id": "r1", "inputs": []map[string]any{{"name": "input", "shape": []int{rows, cols}, "datatype": "FP32", "data": x}}}
	if len(outputs) > 0 {
		var o []map[string]string
		for _, n := range outputs {
			o = append(o, map[string]string{"name": n})
		}
		req["outputs"] = o
	}
	b, _ := json.Marshal(req)
	return string(b)
}

type response struct {
	ModelName    string `json:"model_name"`
	ModelVersion string `json:"model_version"`
	ID           string `json:"id"`
	Outputs      []struct {
		Name     string          `json:"name"`
		Shape    []int64         `json:"shape"`
		Datatype string          `json:"datatype"`
		Data     json.RawMessage `json:"data"`
	} `json:"outputs"`
	Error string `json:"error"`
}

func decode(t testing.TB, b []byte) response {
	t.Helper()
	var r response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	return r
}

// output returns the named output's data decoded into v.
func (r response) output(t testing.TB, name string, v any) (shape []int64, dtype string) {
	t.Helper()
	for _, o := range r.Outputs {
		if o.Name == name {
			if err := json.Unmarshal(o.Data, v); err != nil {
				t.Fatalf("output %s: %v", name, err)
			}
			return o.Shape, o.Datatype
		}
	}
	t.Fatalf("no output %q in %+v", name, r)
	return nil, ""
}

// rowsOf returns n rows of 4 features that differ from row to row.
func rowsOf(seed, n int) []float32 {
	x := make([]float32, n*4)
	for i := range x {
		x[i] = float32(math.Sin(float64(seed*131+i*17))*3 + 4)
	}
	return x
}

// refMu serializes the tests' reference predictions: Model.Predict sets
// evaluation mode on every call, a write that concurrent callers race on.
// The server calls each model from its batcher alone; the tests compute
// references on a second instance of the model (same seed, same weights).
var refMu sync.Mutex

// checkClassified checks an answer against PredictRows on the same rows
// (ref is another instance of the served model).
func checkClassified(t testing.TB, ref *modelfile.Model, x []float32, rows int, r response) {
	t.Helper()
	refMu.Lock()
	want, err := ref.PredictRows(x, rows)
	refMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var class []int64
	var probs []float32
	if shape, dt := r.output(t, OutputPredict, &class); dt != "INT64" || len(shape) != 1 || shape[0] != int64(rows) {
		t.Fatalf("predict: %s %v", dt, shape)
	}
	if shape, dt := r.output(t, OutputProbabilities, &probs); dt != "FP32" || len(shape) != 2 || shape[0] != int64(rows) || shape[1] != 3 {
		t.Fatalf("probabilities: %s %v", dt, shape)
	}
	if len(class) != rows || len(probs) != rows*3 {
		t.Fatalf("%d classes, %d probabilities for %d rows", len(class), len(probs), rows)
	}
	for i := range rows {
		if class[i] != want.Class[i] {
			t.Fatalf("row %d: class %d, PredictRows says %d", i, class[i], want.Class[i])
		}
	}
	// A row's result may differ in the last bits when it runs in another
	// batch (the kernels may sum in another order).
	for i, p := range probs {
		if math.Abs(float64(p-want.Probs[i])) > 1e-5 {
			t.Fatalf("probability %d: %v, PredictRows says %v", i, p, want.Probs[i])
		}
	}
}

func TestHealthAndMetadata(t *testing.T) {
	_, url := start(t, Options{}, Model{Name: "iris", Model: classifier(t)}, Model{Name: "reg", Version: "3", Model: regressor(t)})
	for _, test := range []struct {
		method, path string
		code         int
		want         string // a substring of the body
	}{
		{"GET", "/v2/health/live", 200, `"live":true`},
		{"GET", "/v2/health/ready", 200, `"ready":true`},
		{"GET", "/v2", 200, `"name":"fathom"`},
		{"GET", "/v2/models/iris", 200, `"inputs":[{"name":"input","datatype":"FP32","shape":[-1,4]}]`},
		{"GET", "/v2/models/iris", 200, `{"name":"probabilities","datatype":"FP32","shape":[-1,3]}`},
		{"GET", "/v2/models/iris", 200, `"classes":["setosa","versicolor","virginica"]`},
		{"GET", "/v2/models/iris/versions/1", 200, `"versions":["1"]`},
		{"GET", "/v2/models/iris/ready", 200, `"ready":true`},
		{"GET", "/v2/models/iris/versions/1/ready", 200, `"ready":true`},
		{"GET", "/v2/models/reg/versions/3", 200, `"outputs":[{"name":"predict","datatype":"FP32","shape":[-1]}]`},
		{"GET", "/v2/models/reg/versions/1", 404, `has no version \"1\"`},
		{"GET", "/v2/models/nope", 404, `unknown model \"nope\"`},
		{"GET", "/v2/models/nope/ready", 404, `unknown model`},
		{"GET", "/v2/models/iris/explain", 404, `no such endpoint`},
		{"GET", "/v3", 404, `no such endpoint`},
		{"POST", "/v2/models/iris", 405, `use GET`},
		{"GET", "/v2/models/iris/infer", 405, `use POST`},
	} {
		code, body := call(t, test.method, url+test.path, "")
		if code != test.code || !strings.Contains(string(body), test.want) {
			t.Errorf("%s %s: %d %s, want %d with %s", test.method, test.path, code, body, test.code, test.want)
		}
	}
}

func TestInfer(t *testing.T) {
	ref := classifier(t) // the reference: another instance of the served model
	_, url := start(t, Options{}, Model{Name: "iris", Model: classifier(t)}, Model{Name: "reg", Model: regressor(t)})

	t.Run("single", func(t *testing.T) {
		x := rowsOf(1, 1)
		code, body := call(t, "POST", url+"/v2/models/iris/infer", inferBody(x, 1, 4))
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		r := decode(t, body)
		if r.ModelName != "iris" || r.ModelVersion != "1" || r.ID != "r1" {
			t.Fatalf("answer %+v", r)
		}
		checkClassified(t, ref, x, 1, r)
	})
	t.Run("batched", func(t *testing.T) {
		x := rowsOf(2, 5)
		code, body := call(t, "POST", url+"/v2/models/iris/versions/1/infer", inferBody(x, 5, 4))
		if code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		checkClassified(t, ref, x, 5, decode(t, body))
	})
	t.Run("nested FP64 and labels", func(t *testing.T) {
		x := rowsOf(3, 2)
		body := fmt.Sprintf(`{"inputs":[{"name":"input","shape":[2,4],"datatype":"FP64","data":[[%v,%v,%v,%v],[%v,%v,%v,%v]]}],
			"outputs":[{"name":"label"},{"name":"predict"}]}`, x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7])
		code, b := call(t, "POST", url+"/v2/models/iris/infer", body)
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		r := decode(t, b)
		refMu.Lock()
		want, _ := ref.PredictRows(x, 2)
		refMu.Unlock()
		var labels []string
		if _, dt := r.output(t, OutputLabel, &labels); dt != "BYTES" {
			t.Fatalf("label datatype %s", dt)
		}
		if len(r.Outputs) != 2 || r.Outputs[0].Name != "label" || len(labels) != 2 ||
			labels[0] != ref.Classes[want.Class[0]] || labels[1] != ref.Classes[want.Class[1]] {
			t.Fatalf("labels %v (outputs %d), want classes %v", labels, len(r.Outputs), want.Class)
		}
	})
	t.Run("integers", func(t *testing.T) {
		code, b := call(t, "POST", url+"/v2/models/iris/infer", `{"inputs":[{"name":"input","shape":[1,4],"datatype":"INT32","data":[5,3,4,-1]}]}`)
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		checkClassified(t, ref, []float32{5, 3, 4, -1}, 1, decode(t, b))
	})
	t.Run("regression", func(t *testing.T) {
		code, b := call(t, "POST", url+"/v2/models/reg/infer", `{"inputs":[{"name":"input","shape":[2,2],"datatype":"FP32","data":[1,2,3,-1]}]}`)
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		var v []float32
		if shape, dt := decode(t, b).output(t, OutputPredict, &v); dt != "FP32" || shape[0] != 2 || len(v) != 2 || v[0] != 1 || v[1] != 8 {
			t.Fatalf("regression: %v %s %v", shape, dt, v)
		}
	})
}

func TestInferErrors(t *testing.T) {
	_, url := start(t, Options{MaxBody: 4096}, Model{Name: "iris", Model: classifier(t)})
	in := func(name, dt, shape, data string) string {
		return fmt.Sprintf(`{"inputs":[{"name":%q,"shape":%s,"datatype":%q,"data":%s}]}`, name, shape, dt, data)
	}
	for _, test := range []struct {
		name, path, body string
		code             int
		want             string
	}{
		{"malformed JSON", "iris", `{"inputs": [`, 400, "malformed JSON"},
		{"not an object", "iris", `[1,2]`, 400, "malformed JSON"},
		{"no inputs", "iris", `{"inputs":[]}`, 400, "no inputs"},
		{"two inputs", "iris", `{"inputs":[{"name":"input"},{"name":"input"}]}`, 400, "2 inputs"},
		{"wrong name", "iris", in("x", "FP32", "[1,4]", "[1,2,3,4]"), 400, `unknown input "x"`},
		{"wrong shape", "iris", in("input", "FP32", "[1,5]", "[1,2,3,4,5]"), 400, "has shape [1,5]"},
		{"no batch", "iris", in("input", "FP32", "[4]", "[1,2,3,4]"), 400, "has shape [4]"},
		{"zero batch", "iris", in("input", "FP32", "[0,4]", "[]"), 400, "has shape [0,4]"},
		{"huge batch", "iris", in("input", "FP32", "[1000000000000,4]", "[1]"), 400, "cannot fit"},
		{"too few values", "iris", in("input", "FP32", "[2,4]", "[1,2,3,4]"), 400, "4 values for shape [2,4]"},
		{"too many values", "iris", in("input", "FP32", "[1,4]", "[1,2,3,4,5]"), 400, "more than 4 values"},
		{"ragged nesting", "iris", in("input", "FP32", "[2,4]", "[[1,2,3,4],[1,2,3]]"), 400, "holds 3 values"},
		{"BYTES", "iris", in("input", "BYTES", "[1,4]", `["a","b","c","d"]`), 400, `datatype "BYTES" is not supported`},
		{"no datatype", "iris", `{"inputs":[{"name":"input","shape":[1,4],"data":[1,2,3,4]}]}`, 400, "no datatype"},
		{"string in FP32", "iris", in("input", "FP32", "[1,4]", `[1,2,"3",4]`), 400, "FP32 data must be numbers"},
		{"fraction in INT64", "iris", in("input", "INT64", "[1,4]", `[1,2,3.5,4]`), 400, "not an integer"},
		{"UINT8 range", "iris", in("input", "UINT8", "[1,4]", `[1,2,300,4]`), 400, "out of range for UINT8"},
		{"FP32 range", "iris", in("input", "FP32", "[1,4]", `[1,2,1e39,4]`), 400, "out of range for FP32"},
		{"no data", "iris", `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32"}]}`, 400, "no data"},
		{"unknown output", "iris", `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}],"outputs":[{"name":"logits"}]}`, 400, `unknown output "logits"`},
		{"unknown model", "nope", in("input", "FP32", "[1,4]", "[1,2,3,4]"), 404, `unknown model "nope"`},
		{"oversize body", "iris", in("input", "FP32", "[1,4]", "[1,2,3,4"+strings.Repeat(" ", 5000)+"]"), 413, "over the limit of 4096 bytes"},
	} {
		code, body := call(t, "POST", url+"/v2/models/"+test.path+"/infer", test.body)
		var e ErrorResponse
		if err := json.Unmarshal(body, &e); err != nil || code != test.code || !strings.Contains(e.Error, test.want) {
			t.Errorf("%s: %d %s, want %d with %q", test.name, code, body, test.code, test.want)
		}
	}

	// A body of unknown length over the limit (chunked) is cut at the
	// limit: 413 too.
	big := in("input", "FP32", "[1,4]", "[1,2,3,4"+strings.Repeat(" ", 5000)+"]")
	req, _ := http.NewRequest("POST", url+"/v2/models/iris/infer", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked oversize body: %d", resp.StatusCode)
	}

	// The binary tensor data extension: a JSON header, then raw bytes.
	for _, test := range []struct {
		name, head string
		bin        []byte
		length     int // of the JSON header; -1: the header's own
		want       string
	}{
		{"too few bytes", `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","parameters":{"binary_data_size":8}}]}`, make([]byte, 8), -1, "the shape needs 16"},
		{"size mismatch", `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","parameters":{"binary_data_size":20}}]}`, make([]byte, 16), -1, "binary_data_size 20, but 16 bytes"},
		{"no binary_data_size", in("input", "FP32", "[1,4]", "[1,2,3,4]"), make([]byte, 16), -1, "has no binary_data_size"},
		{"bad length", in("input", "FP32", "[1,4]", "[1,2,3,4]"), nil, 100000, "Inference-Header-Content-Length"},
		{"NaN", `{"inputs":[{"name":"input","shape":[1,1],"datatype":"FP32","parameters":{"binary_data_size":4}}]}`, []byte{0, 0, 0xc0, 0x7f}, -1, "has shape [1,1]"},
		{"NaN value", `{"inputs":[{"name":"input","shape":[1,4],"datatype":"FP32","parameters":{"binary_data_size":16}}]}`, append(make([]byte, 12), 0, 0, 0xc0, 0x7f), -1, "element 3 is NaN"},
	} {
		n := test.length
		if n < 0 {
			n = len(test.head)
		}
		code, body := call(t, "POST", url+"/v2/models/iris/infer", test.head+string(test.bin), "Inference-Header-Content-Length", fmt.Sprint(n))
		if code != 400 || !strings.Contains(string(body), test.want) {
			t.Errorf("binary, %s: %d %s, want 400 with %q", test.name, code, body, test.want)
		}
	}
}

func TestInferBinary(t *testing.T) {
	ref := classifier(t)
	_, url := start(t, Options{}, Model{Name: "iris", Model: classifier(t)})
	x := rowsOf(9, 3)
	for _, test := range []struct {
		dt  string
		enc func(v float32) []byte
	}{
		{"FP32", func(v float32) []byte { return binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)) }},
		{"FP64", func(v float32) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(float64(v))) }},
		{"INT16", func(v float32) []byte { return binary.LittleEndian.AppendUint16(nil, uint16(int16(v))) }},
		{"UINT8", func(v float32) []byte { return []byte{uint8(v)} }},
	} {
		var bin []byte
		want := make([]float32, len(x))
		for i, v := range x {
			if test.dt != "FP32" && test.dt != "FP64" {
				v = float32(math.Round(float64(v)))
			}
			want[i] = v
			bin = append(bin, test.enc(v)...)
		}
		head := fmt.Sprintf(`{"inputs":[{"name":"input","shape":[3,4],"datatype":%q,"parameters":{"binary_data_size":%d}}]}`, test.dt, len(bin))
		code, body := call(t, "POST", url+"/v2/models/iris/infer", head+string(bin), "Inference-Header-Content-Length", fmt.Sprint(len(head)))
		if code != 200 {
			t.Fatalf("%s: %d %s", test.dt, code, body)
		}
		checkClassified(t, ref, want, 3, decode(t, body))
	}
}

// TestConcurrentClients sends requests of 1–3 rows from several goroutines
// at once through a batcher that merges them; every caller must get its
// own rows' results.
func TestConcurrentClients(t *testing.T) {
	ref := classifier(t) // the reference: another instance of the served model
	_, url := start(t, Options{MaxBatch: 16, MaxDelay: 2 * time.Millisecond}, Model{Name: "iris", Model: classifier(t)})
	const clients, each = 8, 15
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for k := range each {
				rows := 1 + (c+k)%3
				x := rowsOf(c*1000+k, rows)
				code, body := call(t, "POST", url+"/v2/models/iris/infer", inferBody(x, rows, 4))
				if code != 200 {
					t.Errorf("client %d request %d: %d %s", c, k, code, body)
					return
				}
				checkClassified(t, ref, x, rows, decode(t, body))
			}
		})
	}
	wg.Wait()
}

// gate blocks the batcher before its batches until released, and tells
// when a batch has reached it.
type gate struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	batches int // batches run (read after the batcher is done)
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 100), release: make(chan struct{})} }

func (g *gate) hook() {
	g.batches++
	g.entered <- struct{}{}
	<-g.release
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// waitFor polls cond every millisecond, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 10000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestBatchingMergesQueuedRequests holds the batcher on a first request
// while three more queue up; released, it runs the three as one batch.
func TestBatchingMergesQueuedRequests(t *testing.T) {
	ref := classifier(t) // the reference: another instance of the served model
	g := newGate()
	s, url := start(t, Options{MaxBatch: 64, MaxDelay: -1, beforePredict: g.hook}, Model{Name: "iris", Model: classifier(t)})
	defer g.open()
	var wg sync.WaitGroup
	send := func(seed, rows int) {
		wg.Go(func() {
			x := rowsOf(seed, rows)
			code, body := call(t, "POST", url+"/v2/models/iris/infer", inferBody(x, rows, 4))
			if code != 200 {
				t.Errorf("%d %s", code, body)
				return
			}
			checkClassified(t, ref, x, rows, decode(t, body))
		})
	}
	send(1, 1)
	<-g.entered
	for i := range 3 {
		send(10+i, 1+i)
	}
	waitFor(t, "three queued requests", func() bool { return s.models["iris"].batcher.depth() == 3 })
	g.open()
	wg.Wait()
	<-g.entered
	if g.batches != 2 {
		t.Fatalf("%d batches for a held request and three queued ones, want 2", g.batches)
	}
}

func TestQueueFullAndTimeout(t *testing.T) {
	g := newGate()
	s, url := start(t, Options{QueueSize: 1, Timeout: 300 * time.Millisecond, beforePredict: g.hook}, Model{Name: "iris", Model: classifier(t)})
	defer g.open()
	body := inferBody(rowsOf(1, 1), 1, 4)
	codes := make(chan int, 2)
	go func() { c, _ := call(t, "POST", url+"/v2/models/iris/infer", body); codes <- c }()
	<-g.entered // the first request is in the batcher, held
	go func() { c, _ := call(t, "POST", url+"/v2/models/iris/infer", body); codes <- c }()
	waitFor(t, "a queued request", func() bool { return s.models["iris"].batcher.depth() == 1 })
	code, b := call(t, "POST", url+"/v2/models/iris/infer", body)
	if code != 503 || !strings.Contains(string(b), "queue is full") {
		t.Fatalf("with a full queue: %d %s", code, b)
	}
	// The held request and the queued one pass their timeout: 503 both.
	for range 2 {
		if c := <-codes; c != 503 {
			t.Fatalf("timed-out request: %d", c)
		}
	}
	g.open()
	// The batcher takes the expired job off the queue (and drops it) on
	// its own time: wait for that before the next request.
	waitFor(t, "the queue to drain", func() bool { return s.models["iris"].batcher.depth() == 0 })
	code, b = call(t, "POST", url+"/v2/models/iris/infer", body)
	if code != 200 {
		t.Fatalf("after the queue drained: %d %s", code, b)
	}
	_, metrics := call(t, "GET", url+"/metrics", "")
	for _, want := range []string{
		`fathom_serve_requests_total{code="503",model="iris"} 3`,
		`fathom_serve_requests_total{code="200",model="iris"} 1`,
		`fathom_serve_queue_depth{model="iris"} 0`,
		`fathom_serve_batch_rows_count{model="iris"}`,
		`fathom_serve_request_duration_seconds_bucket{model="iris",le="5"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestToken(t *testing.T) {
	const token = "s3cret-token"
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, url := start(t, Options{Token: token, Logger: logger}, Model{Name: "iris", Model: classifier(t)})
	body := inferBody(rowsOf(1, 1), 1, 4)
	infer := url + "/v2/models/iris/infer"
	for _, test := range []struct {
		name, method, url, auth string
		code                    int
	}{
		{"no token", "POST", infer, "", 401},
		{"wrong token", "POST", infer, "Bearer nope", 401},
		{"not bearer", "POST", infer, "Basic " + token, 401},
		{"right token", "POST", infer, "Bearer " + token, 200},
		{"metadata without", "GET", url + "/v2/models/iris", "", 401},
		{"metrics without", "GET", url + "/metrics", "", 401},
		{"metrics with", "GET", url + "/metrics", "Bearer " + token, 200},
		{"live without", "GET", url + "/v2/health/live", "", 200},
		{"ready without", "GET", url + "/v2/health/ready", "", 200},
	} {
		b := ""
		if test.method == "POST" {
			b = body
		}
		code, got := call(t, test.method, test.url, b, "Authorization", test.auth)
		if code != test.code {
			t.Errorf("%s: %d %s, want %d", test.name, code, got, test.code)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), token) {
		t.Fatal("the log holds the token")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// wideListener is a loopback listener that claims to listen on every
// interface.
type wideListener struct{ net.Listener }

func (wideListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4zero, Port: 8080} }

func TestTokenRequiredBeyondLoopback(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := New([]Model{{Name: "iris", Model: classifier(t)}}, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if err := s.Serve(wideListener{l}); !errors.Is(err, ErrTokenRequired) {
		t.Fatalf("Serve on 0.0.0.0 without a token: %v", err)
	}
	for _, test := range []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1")}, true},
		{&net.TCPAddr{IP: net.ParseIP("::1")}, true},
		{&net.TCPAddr{IP: net.IPv4zero}, false},
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.1")}, false},
		{&net.UnixAddr{Name: "/tmp/s", Net: "unix"}, true},
	} {
		if got := IsLoopback(test.addr); got != test.want {
			t.Errorf("IsLoopback(%v) = %v", test.addr, got)
		}
	}
}

// TestGracefulShutdown shuts the server down while a request is held in
// the batcher: the request still gets its answer, Shutdown returns once it
// has, and the server then takes no more.
func TestGracefulShutdown(t *testing.T) {
	ref := classifier(t) // the reference: another instance of the served model
	g := newGate()
	s, err := New([]Model{{Name: "iris", Model: classifier(t)}}, Options{beforePredict: g.hook, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer g.open()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()

	x := rowsOf(5, 2)
	type answer struct {
		code int
		body []byte
	}
	answers := make(chan answer, 1)
	go func() {
		c, b := call(t, "POST", url+"/v2/models/iris/infer", inferBody(x, 2, 4))
		answers <- answer{c, b}
	}()
	<-g.entered
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- s.Shutdown(ctx)
	}()
	waitFor(t, "shutdown to begin", func() bool { return !s.ready() })
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	default:
	}
	g.open()
	a := <-answers
	if a.code != 200 {
		t.Fatalf("in-flight request: %d %s", a.code, a.body)
	}
	checkClassified(t, ref, x, 2, decode(t, a.body))
	if err := <-stopped; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := client.Get(url + "/v2/health/live"); err == nil {
		t.Fatal("the server still answers after Shutdown")
	}
	select {
	case <-s.models["iris"].batcher.done:
	default:
		t.Fatal("the batcher still runs after Shutdown")
	}
}

func TestNewRejects(t *testing.T) {
	m := classifier(t)
	for _, test := range []struct {
		name   string
		models []Model
		want   string
	}{
		{"none", nil, "no models"},
		{"duplicate", []Model{{Name: "a", Model: m}, {Name: "a", Model: m}}, "two models named"},
		{"slash", []Model{{Name: "a/b", Model: m}}, "must be non-empty"},
		{"empty", []Model{{Name: "", Model: m}}, "must be non-empty"},
		{"no network", []Model{{Name: "a", Model: &modelfile.Model{}}}, "no network"},
	} {
		if _, err := New(test.models, Options{}); err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: %v, want %q", test.name, err, test.want)
		}
	}
}

// TestModelPanic serves a model whose network does not fit its spec (it
// reads 3 features, the spec says 4): the network panics, the request is
// answered 500 and the server goes on answering.
func TestModelPanic(t *testing.T) {
	bad := classifier(t)
	net, _, err := nn.Spec{Input: []int{3}, Layers: []nn.LayerSpec{{Type: "linear", Out: 3}}}.Build(tensor.NewRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	bad.Net, bad.Scaler = net, nil
	_, url := start(t, Options{}, Model{Name: "bad", Model: bad}, Model{Name: "iris", Model: classifier(t)})
	body := inferBody(rowsOf(1, 1), 1, 4)
	code, b := call(t, "POST", url+"/v2/models/bad/infer", body)
	if code != 500 || !strings.Contains(string(b), "panicked") {
		t.Fatalf("a panicking model: %d %s", code, b)
	}
	if code, b := call(t, "POST", url+"/v2/models/iris/infer", body); code != 200 {
		t.Fatalf("after a panic: %d %s", code, b)
	}
}

// TestInferBinaryOutput: outputs asked for in the binary tensor data
// extension (every one by binary_data_output, or one by its binary_data
// parameter) come after the JSON header, whose length the response's
// Inference-Header-Content-Length gives; their values are those of
// PredictRows; a parameter that is not a boolean is the protocol's error.
func TestInferBinaryOutput(t *testing.T) {
	ref := classifier(t)
	_, url := start(t, Options{}, Model{Name: "iris", Model: classifier(t)})
	x := rowsOf(4, 3)
	refMu.Lock()
	want, err := ref.PredictRows(x, 3)
	refMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	post := func(params, outputs string) (*http.Response, []byte) {
		t.Helper()
		data, _ := json.Marshal(x)
		body := fmt.Sprintf(`{%s"inputs":[{"name":"input","shape":[3,4],"datatype":"FP32","data":%s}]%s}`, params, data, outputs)
		resp, err := client.Post(url+"/v2/models/iris/infer", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	// Every output binary.
	resp, b := post(`"parameters":{"binary_data_output":true},`, `,"outputs":[{"name":"probabilities"},{"name":"label"}]`)
	n, err := strconv.Atoi(resp.Header.Get("Inference-Header-Content-Length"))
	if resp.StatusCode != 200 || err != nil || n > len(b) {
		t.Fatalf("%d, header length %q: %s", resp.StatusCode, resp.Header.Get("Inference-Header-Content-Length"), b)
	}
	var head struct {
		Outputs []struct {
			Name       string
			Datatype   string
			Data       json.RawMessage
			Parameters map[string]int
		}
	}
	if err := json.Unmarshal(b[:n], &head); err != nil || len(head.Outputs) != 2 {
		t.Fatalf("header %q: %v", b[:n], err)
	}
	raw := b[n:]
	if sz := head.Outputs[0].Parameters["binary_data_size"]; sz != 4*9 || head.Outputs[0].Data != nil {
		t.Fatalf("probabilities: binary_data_size %d, data %s", sz, head.Outputs[0].Data)
	}
	for i, p := range want.Probs {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != p {
			t.Fatalf("probability %d: %v, PredictRows says %v", i, got, p)
		}
	}
	raw = raw[4*9:]
	if sz := head.Outputs[1].Parameters["binary_data_size"]; sz != len(raw) {
		t.Fatalf("label: binary_data_size %d, %d bytes left", sz, len(raw))
	}
	for i, k := range want.Class {
		l := int(binary.LittleEndian.Uint32(raw))
		if got := string(raw[4 : 4+l]); got != ref.Classes[k] {
			t.Fatalf("label %d: %q, want %q", i, got, ref.Classes[k])
		}
		raw = raw[4+l:]
	}
	// One output binary, the other in the JSON.
	resp, b = post("", `,"outputs":[{"name":"predict","parameters":{"binary_data":true}},{"name":"label"}]`)
	n, _ = strconv.Atoi(resp.Header.Get("Inference-Header-Content-Length"))
	if resp.StatusCode != 200 || len(b)-n != 8*3 || !strings.Contains(string(b[:n]), `"data":["`) {
		t.Fatalf("%d: %q", resp.StatusCode, b)
	}
	for i, k := range want.Class {
		if got := int64(binary.LittleEndian.Uint64(b[n+8*i:])); got != k {
			t.Fatalf("class %d: %d, want %d", i, got, k)
		}
	}
	// Not a boolean.
	if resp, b := post(`"parameters":{"binary_data_output":"yes"},`, ""); resp.StatusCode != 400 || !strings.Contains(string(b), `"error":"parameter binary_data_output is yes`) {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}
