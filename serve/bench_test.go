package serve

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// mlp is the Fashion-MNIST MLP's shape (784-256-128-10), random weights.
func mlp(b *testing.B) *modelfile.Model {
	m := &modelfile.Model{Spec: nn.Spec{Input: []int{784}, Layers: []nn.LayerSpec{
		{Type: "linear", Out: 256}, {Type: "relu"}, {Type: "linear", Out: 128}, {Type: "relu"}, {Type: "linear", Out: 10}}},
		Task: metrics.Classification, Classes: strings.Split("0 1 2 3 4 5 6 7 8 9", " ")}
	net, _, err := m.Spec.Build(tensor.NewRNG(1))
	if err != nil {
		b.Fatal(err)
	}
	net.Eval()
	m.Net = net
	return m
}

// benchInfer runs requests through the handler in process (no network):
// the server's own cost per request, batcher included.
func benchInfer(b *testing.B, rows int, bin bool) {
	s, err := New([]Model{{Name: "mlp", Model: mlp(b)}}, Options{MaxDelay: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Shutdown(b.Context())
	x := make([]float32, rows*784)
	for i := range x {
		x[i] = float32(math.Round(math.Abs(math.Sin(float64(i)))*1000) / 1000)
	}
	var body, length string
	if bin {
		raw := make([]byte, 0, 4*len(x))
		for _, v := range x {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
		head := fmt.Sprintf(`{"inputs":[{"name":"input","shape":[%d,784],"datatype":"FP32","parameters":{"binary_data_size":%d}}]}`, rows, len(raw))
		body, length = head+string(raw), fmt.Sprint(len(head))
	} else {
		body = inferBody(x, rows, 784)
	}
	h := s.Handler()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/v2/models/mlp/infer", strings.NewReader(body))
		if length != "" {
			req.Header.Set(binaryHeaderLength, length)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkInferJSON1(b *testing.B)    { benchInfer(b, 1, false) }
func BenchmarkInferJSON64(b *testing.B)   { benchInfer(b, 64, false) }
func BenchmarkInferBinary1(b *testing.B)  { benchInfer(b, 1, true) }
func BenchmarkInferBinary64(b *testing.B) { benchInfer(b, 64, true) }
