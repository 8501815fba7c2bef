package onnx

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// TestFineTuneImported: a network imported from PyTorch's ONNX file
// trains like any fathom network (every parameter gets a gradient and
// the loss falls), and saves as a fathom model file that loads with the
// same outputs.
func TestFineTuneImported(t *testing.T) {
	for _, name := range []string{"mlp", "cnn"} {
		t.Run(name, func(t *testing.T) {
			m, err := LoadWith(filepath.Join("testdata", "torch_"+name+".onnx"), ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rng := tensor.NewRNG(3)
			const rows = 16
			n := numelInts(m.Spec.Input)
			xs := make([]float32, rows*n)
			ys := make([]int64, rows)
			for i := range xs {
				xs[i] = float32(rng.NormFloat64())
			}
			// A learnable target: the class is the row's mean, binned.
			for i := range ys {
				mean := 0.0
				for _, v := range xs[i*n : (i+1)*n] {
					mean += float64(v) / float64(n)
				}
				ys[i] = int64(min(max(int((mean*float64(n)/4+1.5)), 0), len(m.Classes)-1))
			}
			x := tensor.FromFloat32(xs, append([]int{rows}, m.Spec.Input...)...)
			y := tensor.FromInt64(ys, rows)
			params := m.Net.Parameters()
			before := make([][]float32, len(params))
			for i, p := range params {
				before[i] = slices.Clone(p.Float32s())
			}
			opt, err := optim.NewAdam(params, optim.AdamOptions{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
			if err != nil {
				t.Fatal(err)
			}
			m.Net.Train()
			var first, last float64
			for step := range 80 {
				m.Net.ZeroGrad()
				loss := nn.CrossEntropyLoss(m.Net.Forward(x), y, nn.ClassOptions{})
				loss.Backward()
				if step == 0 {
					first = loss.Item()
					for i, p := range params {
						if p.Grad() == nil {
							t.Fatalf("parameter %d has no gradient", i)
						}
					}
				}
				last = loss.Item()
				if err := opt.Step(); err != nil {
					t.Fatal(err)
				}
			}
			if !(last < 0.5*first) {
				t.Errorf("loss %g → %g in 80 steps: not learning", first, last)
			}
			for i, p := range params {
				if slices.Equal(before[i], p.Float32s()) {
					t.Errorf("parameter %d did not change", i)
				}
			}
			m.Net.Eval()
			path := filepath.Join(t.TempDir(), "tuned.safetensors")
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			back, err := modelfile.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			a, b := m.Net.Forward(x.NoGrad()).Float32s(), back.Net.Forward(x.NoGrad()).Float32s()
			if !slices.Equal(a, b) {
				t.Error("the saved fine-tuned model gives other outputs")
			}
		})
	}
}
