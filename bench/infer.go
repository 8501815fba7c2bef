package bench

import (
	"fmt"
	"sort"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/tensor"
)

// InferBatch is one batch size of `fathom bench infer` (a line of --json).
type InferBatch struct {
	Batch      int     `json:"batch"`
	Rows       int     `json:"rows"`
	SecPerPass float64 `json:"sec_per_pass"`
	RowsPerSec float64 `json:"rows_per_s"`
	USPerCall  float64 `json:"us_per_call"`
	Accuracy   float64 `json:"test_accuracy"`
}

// InferResult is `fathom bench infer`: the loaded model's test accuracy
// and one measurement per batch size.
type InferResult struct {
	Accuracy float64
	Batches  []InferBatch
}

// Infer loads the model at modelPath, feeds the 10,000 Fashion-MNIST test
// images through it as consecutive slices of each batch size (no graph
// is recorded) and measures rows per second: the median of passes passes
// after one warm-up pass.
func Infer(modelPath string, batches []int, passes int) (InferResult, error) {
	var res InferResult
	m, err := modelfile.Load(modelPath)
	if err != nil {
		return res, err
	}
	test, err := data.LoadFashionMNIST("t10k")
	if err != nil {
		return res, fmt.Errorf("bench infer needs the Fashion-MNIST test set (apt-get install dataset-fashion-mnist, or FATHOM_DATA): %w", err)
	}
	in, err := m.PrepareInput(test)
	if err != nil {
		return res, fmt.Errorf("%s: %w", modelPath, err)
	}
	m.Net.Eval()
	n, cols := in.Rows, in.Cols
	shape := m.Spec.Input

	// Accuracy of the loaded model, as the reference prints it.
	correct := 0
	out := m.Net.Forward(tensor.FromFloat32(in.X, append([]int{n}, shape...)...).NoGrad())
	pred := out.ArgMax(1, false).Int64s()
	for i, p := range pred {
		if p == test.Labels[i] {
			correct++
		}
	}
	res.Accuracy = float64(correct) / float64(n)

	for _, bs := range batches {
		var chunks []*tensor.Tensor
		for i := 0; i < n; i += bs {
			rows := min(bs, n-i)
			chunks = append(chunks, tensor.FromFloat32(in.X[i*cols:(i+rows)*cols], append([]int{rows}, shape...)...).NoGrad())
		}
		pass := func() time.Duration {
			start := time.Now()
			for _, c := range chunks {
				m.Net.Forward(c)
			}
			return time.Since(start)
		}
		pass() // warm-up
		times := make([]float64, passes)
		for i := range times {
			times[i] = pass().Seconds()
		}
		sort.Float64s(times)
		sec := times[len(times)/2]
		res.Batches = append(res.Batches, InferBatch{Batch: bs, Rows: n, SecPerPass: sec, RowsPerSec: float64(n) / sec,
			USPerCall: sec / float64(len(chunks)) * 1e6, Accuracy: res.Accuracy})
	}
	return res, nil
}
