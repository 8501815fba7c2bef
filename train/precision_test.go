package train

import (
	"context"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/tensor"
)

// fitIrisAt trains the iris MLP for a few epochs at precision p and returns
// the history and the trainer.
func fitIrisAt(t *testing.T, p tensor.Precision, scale *LossScale) ([]float64, *Trainer) {
	t.Helper()
	trainT, testT := irisSplits(t, 1)
	m := irisMLP(t, 1, false)
	tr, err := New(Options{
		Model: m, Optimizer: adam(t, m, 0.01), Epochs: 15, Precision: p, LossScale: scale,
		Train: loader(t, trainT, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 1}),
		Eval:  loader(t, testT, data.LoaderOptions{BatchSize: 64}),
	})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := tr.Fit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var losses []float64
	for _, e := range hist {
		losses = append(losses, e.Train.Loss)
	}
	if tensor.Autocast() != tensor.PrecisionFloat32 {
		t.Fatalf("autocast left at %v after training", tensor.Autocast())
	}
	return losses, tr
}

// TestPrecisionTrainsLikeFloat32: bf16 and fp16 training follow the
// float32 loss curve closely but not exactly (their products are rounded).
func TestPrecisionTrainsLikeFloat32(t *testing.T) {
	ref, _ := fitIrisAt(t, tensor.PrecisionFloat32, nil)
	for _, p := range []tensor.Precision{tensor.PrecisionBF16, tensor.PrecisionFP16} {
		got, _ := fitIrisAt(t, p, nil)
		same := true
		for i := range ref {
			if got[i] != ref[i] {
				same = false
			}
			if d := math.Abs(got[i] - ref[i]); d > 0.05+0.1*ref[i] {
				t.Errorf("%v: epoch %d train loss %.4f, float32 %.4f", p, i+1, got[i], ref[i])
			}
		}
		if same {
			t.Errorf("%v: losses equal float32's bit for bit: the products were not rounded", p)
		}
	}
}

// TestLossScaleSkipsOverflow: with a scale far too large the first steps
// overflow and are skipped (the scale backs off) until the scale fits,
// and training still converges; the scale grows back after Interval good
// steps.
func TestLossScaleSkipsOverflow(t *testing.T) {
	losses, tr := fitIrisAt(t, tensor.PrecisionFP16, &LossScale{Init: 1e30, Interval: 20})
	scale, skipped := tr.LossScaleState()
	// 1e30·0.5^s must get below binary16's range of gradients: at least
	// (log2(1e30) - 16) ≈ 84 halvings.
	if skipped < 80 {
		t.Errorf("%d steps skipped from a scale of 1e30, want at least 80", skipped)
	}
	if steps := tr.History()[len(losses)-1].Steps; skipped >= steps {
		t.Errorf("%d of %d steps skipped", skipped, steps)
	}
	if !(scale < 1e10) || !(scale > 1) {
		t.Errorf("final scale %g", scale)
	}
	if !(losses[len(losses)-1] < losses[0]/2) {
		t.Errorf("losses %v: training did not converge", losses)
	}
}

func TestLossScaler(t *testing.T) {
	w := tensor.FromFloat32([]float32{1, 2}, 2).SetRequiresGrad(true)
	s, err := newLossScaler(LossScale{Init: 8, Interval: 2})
	if err != nil {
		t.Fatal(err)
	}
	w.SetGrad(tensor.FromFloat32([]float32{8, float32(math.Inf(1))}, 2))
	if s.unscale([]*tensor.Tensor{w}) || s.scale != 4 || s.skipped != 1 {
		t.Fatalf("overflow: scale %g, skipped %d", s.scale, s.skipped)
	}
	for step := 1; step <= 2; step++ {
		w.SetGrad(tensor.FromFloat32([]float32{8, -4}, 2))
		if !s.unscale([]*tensor.Tensor{w}) {
			t.Fatal("finite gradients skipped")
		}
		if g := w.Grad().Float32s(); g[0] != 2 || g[1] != -1 {
			t.Fatalf("unscaled gradients %v, want [2 -1]", g)
		}
	}
	if s.scale != 8 {
		t.Fatalf("scale %g after 2 good steps with interval 2, want 8", s.scale)
	}
	for _, bad := range []LossScale{{Init: -1}, {Growth: 0.5}, {Backoff: 1}, {Interval: -1}} {
		if _, err := newLossScaler(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
