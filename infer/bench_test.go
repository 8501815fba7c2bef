package infer_test

import (
	"strconv"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/infer"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// BenchmarkNetPredict784Cols: a batch of 10,000 rows of 784 float32
// columns (the layout of the scale run) through the Fashion-MNIST MLP,
// against the bare forward pass of the same rows: what gathering the
// columns into rows and the softmax add.
//
//	go test ./infer -run - -bench NetPredict -benchmem
func BenchmarkNetPredict784Cols(b *testing.B) {
	spec := nn.Spec{Input: []int{784}, Layers: []nn.LayerSpec{
		{Type: "linear", Out: 256}, {Type: "relu"}, {Type: "linear", Out: 128}, {Type: "relu"}, {Type: "linear", Out: 10}}}
	net, _, err := spec.Build(tensor.NewRNG(1))
	if err != nil {
		b.Fatal(err)
	}
	net.Eval()
	classes := make([]string, 10)
	for i := range classes {
		classes[i] = strconv.Itoa(i)
	}
	m := &modelfile.Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: classes}
	const n = 10000
	cols := make([]data.Column, 784)
	x := make([]float32, n*784)
	for j := range cols {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((i*7+j*13)%255) / 255
			x[i*784+j] = v[i]
		}
		cols[j] = data.NewColumn("c"+strconv.Itoa(j+1), v, nil)
	}
	f, err := data.NewFrame(cols...)
	if err != nil {
		b.Fatal(err)
	}
	p, err := infer.NewNet(m, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("predict", func(b *testing.B) {
		for range b.N {
			if _, err := p.Predict(f); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("forward", func(b *testing.B) {
		t := tensor.FromFloat32(x, n, 784).NoGrad()
		for range b.N {
			net.Forward(t)
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
