package nn_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

var reductions = []nn.Reduction{nn.ReduceMean, nn.ReduceSum, nn.ReduceNone}

// lossCases maps each reference loss case to the nn call with the same
// settings.
func lossCases(r map[string]*tensor.Tensor) map[string]func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor {
	cls := func(o nn.ClassOptions) func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor {
		return func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor {
			o.Reduction = red
			return nn.CrossEntropyLoss(x, y, o)
		}
	}
	return map[string]func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor{
		"mse": nn.MSELoss,
		"l1":  nn.L1Loss,
		"huber": func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor {
			return nn.HuberLoss(x, y, 0.7, red)
		},
		"smoothl1": func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor {
			return nn.SmoothL1Loss(x, y, 0.5, red)
		},
		"ce":        cls(nn.ClassOptions{}),
		"ce_w":      cls(nn.ClassOptions{Weight: r["weight"]}),
		"ce_ignore": cls(nn.ClassOptions{Ignore: true, IgnoreIndex: -100}),
		"ce_smooth": cls(nn.ClassOptions{LabelSmoothing: 0.2}),
		"ce_all":    cls(nn.ClassOptions{Weight: r["weight"], LabelSmoothing: 0.15, Ignore: true, IgnoreIndex: 2}),
		"ce_prob":   cls(nn.ClassOptions{Weight: r["weight"], LabelSmoothing: 0.1}),
		"ce_kdim":   cls(nn.ClassOptions{Weight: r["weight"]}),
		"nll": func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor {
			return nn.NLLLoss(x, y, nn.ClassOptions{Weight: r["weight"], Ignore: true, IgnoreIndex: 4, Reduction: red})
		},
		"bce": func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor {
			return nn.BCELoss(x, y, nn.BCEOptions{Weight: r["weight"], Reduction: red})
		},
		"bcelogits": func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor {
			return nn.BCEWithLogitsLoss(x, y, nn.BCEOptions{Weight: r["weight"], PosWeight: r["pos_weight"], Reduction: red})
		},
		"bcelogits_plain": func(x, y *tensor.Tensor, red nn.Reduction) *tensor.Tensor {
			return nn.BCEWithLogitsLoss(x, y, nn.BCEOptions{Reduction: red})
		},
	}
}

func TestLossesMatchPyTorch(t *testing.T) {
	names := []string{"mse", "l1", "huber", "smoothl1", "ce", "ce_w", "ce_ignore", "ce_smooth", "ce_all", "ce_prob", "ce_kdim", "nll", "bce", "bcelogits", "bcelogits_plain"}
	for _, name := range names {
		for _, red := range reductions {
			t.Run(name+"."+red.String(), func(t *testing.T) {
				r := ref(t, name+"."+red.String())
				f := lossCases(r)[name]
				x := r["input"].Clone().SetRequiresGrad(true)
				out := f(x, r["target"], red)
				assertClose(t, "loss", out, r["out"], 1e-12)
				if red != nn.ReduceNone {
					out.Backward()
					assertClose(t, "input gradient", x.Grad(), r["grad"], 1e-12)
				}
			})
		}
	}
}

// TestCrossEntropyFusedMatchesComposite compares the fused cross-entropy
// (one pass computing loss and gradient) with log_softmax + weighted sum,
// in float32 and float64, for every option.
func TestCrossEntropyFusedMatchesComposite(t *testing.T) {
	rng := tensor.NewRNG(11)
	w := rng.Uniform(tensor.Float64, 0.2, 2, 7)
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		for _, o := range []nn.ClassOptions{
			{},
			{Weight: w},
			{LabelSmoothing: 0.3},
			{Weight: w, LabelSmoothing: 0.1, Ignore: true, IgnoreIndex: 3},
		} {
			for _, red := range reductions {
				o.Reduction = red
				name := fmt.Sprintf("%v/w=%v/eps=%g/ignore=%v/%v", dt, o.Weight != nil, o.LabelSmoothing, o.Ignore, red)
				t.Run(name, func(t *testing.T) {
					logits := rng.Normal(dt, 0, 4, 9, 7)
					target := rng.RandInt(tensor.Int64, 0, 7, 9)
					seed := rng.Uniform(dt, 0.5, 1.5, 9)
					run := func(f func(x, y *tensor.Tensor, o nn.ClassOptions) *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) {
						x := logits.Clone().SetRequiresGrad(true)
						out := f(x, target, o)
						if red == nn.ReduceNone {
							out.BackwardWith(seed)
						} else {
							out.Backward()
						}
						return out.Detach(), x.Grad()
					}
					lf, gf := run(nn.CrossEntropyLoss)
					lc, gc := run(nn.CrossEntropyComposite)
					tol := 1e-12
					if dt == tensor.Float32 {
						tol = 2e-6
					}
					assertClose(t, "loss", lf, lc, tol)
					assertClose(t, "gradient", gf, gc, tol)
				})
			}
		}
	}
	// Without grad, the fused path records nothing.
	l := nn.CrossEntropyLoss(rng.Normal(tensor.Float32, 0, 1, 4, 3).NoGrad(), tensor.FromInt64([]int64{0, 1, 2, 0}), nn.ClassOptions{})
	if l.RequiresGrad() {
		t.Fatal("loss of inference logits requires grad")
	}
}

func TestLossGradients(t *testing.T) {
	rng := tensor.NewRNG(12)
	x := func(shape ...int) *tensor.Tensor {
		return rng.Normal(tensor.Float64, 0, 1.5, shape...).SetRequiresGrad(true)
	}
	y := rng.Normal(tensor.Float64, 0, 1, 4, 3)
	prob := rng.Uniform(tensor.Float64, 0.05, 0.95, 4, 3).SetRequiresGrad(true)
	bin := rng.Bernoulli(tensor.Float64, 0.5, 4, 3)
	cls := tensor.FromInt64([]int64{0, 4, 2, 1, 3, 3})
	soft := rng.Uniform(tensor.Float64, 0, 1, 6, 5).SetRequiresGrad(true) // gradient w.r.t. a probability target
	w := rng.Uniform(tensor.Float64, 0.5, 1.5, 5)
	for _, c := range []struct {
		name string
		f    func(in []*tensor.Tensor) *tensor.Tensor
		in   []*tensor.Tensor
	}{
		{"mse", func(in []*tensor.Tensor) *tensor.Tensor { return nn.MSELoss(in[0], y, nn.ReduceMean) }, []*tensor.Tensor{x(4, 3)}},
		{"huber", func(in []*tensor.Tensor) *tensor.Tensor { return nn.HuberLoss(in[0], y, 0.8, nn.ReduceNone) }, []*tensor.Tensor{x(4, 3)}},
		{"smoothl1", func(in []*tensor.Tensor) *tensor.Tensor { return nn.SmoothL1Loss(in[0], y, 0.6, nn.ReduceSum) }, []*tensor.Tensor{x(4, 3)}},
		{"bce", func(in []*tensor.Tensor) *tensor.Tensor { return nn.BCELoss(in[0], bin, nn.BCEOptions{}) }, []*tensor.Tensor{prob}},
		{"bcelogits", func(in []*tensor.Tensor) *tensor.Tensor {
			return nn.BCEWithLogitsLoss(in[0], bin, nn.BCEOptions{PosWeight: tensor.FromFloat64([]float64{0.5, 2, 3})})
		}, []*tensor.Tensor{x(4, 3)}},
		{"ce", func(in []*tensor.Tensor) *tensor.Tensor {
			return nn.CrossEntropyLoss(in[0], cls, nn.ClassOptions{Weight: w, LabelSmoothing: 0.1})
		}, []*tensor.Tensor{x(6, 5)}},
		{"ce none", func(in []*tensor.Tensor) *tensor.Tensor {
			return nn.CrossEntropyLoss(in[0], cls, nn.ClassOptions{Reduction: nn.ReduceNone})
		}, []*tensor.Tensor{x(6, 5)}},
		{"ce kdim", func(in []*tensor.Tensor) *tensor.Tensor {
			return nn.CrossEntropyLoss(in[0], tensor.FromInt64([]int64{0, 1, 2, 3, 4, 0}, 2, 3), nn.ClassOptions{})
		}, []*tensor.Tensor{x(2, 5, 3)}},
		{"ce probability target", func(in []*tensor.Tensor) *tensor.Tensor {
			return nn.CrossEntropyLoss(in[0], in[1], nn.ClassOptions{LabelSmoothing: 0.2})
		}, []*tensor.Tensor{x(6, 5), soft}},
		{"nll", func(in []*tensor.Tensor) *tensor.Tensor {
			return nn.NLLLoss(in[0], cls, nn.ClassOptions{Weight: w})
		}, []*tensor.Tensor{x(6, 5)}},
	} {
		if err := gradcheck.Check(c.f, c.in, 1e-6, 1e-7, 1e-5); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestLossEdgeCases(t *testing.T) {
	// All targets ignored: the mean is 0/0 = NaN, as in PyTorch.
	l := nn.CrossEntropyLoss(tensor.Zeros(tensor.Float32, 2, 3), tensor.FromInt64([]int64{-100, -100}), nn.ClassOptions{Ignore: true, IgnoreIndex: -100})
	if !math.IsNaN(l.Item()) {
		t.Fatalf("all-ignored mean = %v, want NaN", l.Item())
	}
	// Huge logits stay finite.
	big := tensor.FromFloat32([]float32{1e4, -1e4, 0, 0}, 2, 2)
	if v := nn.CrossEntropyLoss(big, tensor.FromInt64([]int64{1, 0}), nn.ClassOptions{}).Item(); math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(v-(2e4+math.Ln2)/2) > 1 {
		t.Fatalf("loss of huge logits = %v", v)
	}
	if v := nn.BCEWithLogitsLoss(tensor.FromFloat32([]float32{-1e4, 1e4}), tensor.FromFloat32([]float32{1, 0}), nn.BCEOptions{}).Item(); v != 1e4 {
		t.Fatalf("BCEWithLogits of ±1e4 = %v, want 1e4", v)
	}
	for name, f := range map[string]func(){
		"target out of range": func() {
			nn.CrossEntropyLoss(tensor.Zeros(tensor.Float32, 2, 3), tensor.FromInt64([]int64{0, 3}), nn.ClassOptions{})
		},
		"shape mismatch": func() {
			nn.MSELoss(tensor.Zeros(tensor.Float32, 2, 3), tensor.Zeros(tensor.Float32, 3, 2), nn.ReduceMean)
		},
		"float class target with wrong shape": func() {
			nn.CrossEntropyLoss(tensor.Zeros(tensor.Float32, 2, 3), tensor.Zeros(tensor.Float32, 2), nn.ClassOptions{})
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	if r, err := nn.ParseReduction("sum"); err != nil || r != nn.ReduceSum {
		t.Fatal("ParseReduction(sum)")
	}
	if _, err := nn.ParseReduction("avg"); err == nil {
		t.Fatal("ParseReduction(avg) must fail")
	}
}

func TestLossSpec(t *testing.T) {
	rng := tensor.NewRNG(13)
	x := rng.Normal(tensor.Float32, 0, 1, 4, 3)
	cls := tensor.FromInt64([]int64{0, 2, 1, 2})
	y := rng.Normal(tensor.Float32, 0, 1, 4, 3)
	ign := -1
	for _, c := range []struct {
		spec      nn.LossSpec
		target    *tensor.Tensor
		reference *tensor.Tensor
	}{
		{nn.LossSpec{Type: "cross_entropy", LabelSmoothing: 0.1, Weight: []float64{1, 2, 3}}, cls,
			nn.CrossEntropyLoss(x, cls, nn.ClassOptions{LabelSmoothing: 0.1, Weight: tensor.FromFloat32([]float32{1, 2, 3})})},
		{nn.LossSpec{Type: "CrossEntropy", Reduction: "sum", IgnoreIndex: &ign}, cls, nn.CrossEntropyLoss(x, cls, nn.ClassOptions{Reduction: nn.ReduceSum})},
		{nn.LossSpec{Type: "nll"}, cls, nn.NLLLoss(x, cls, nn.ClassOptions{})},
		{nn.LossSpec{Type: "mse", Reduction: "none"}, y, nn.MSELoss(x, y, nn.ReduceNone)},
		{nn.LossSpec{Type: "l1"}, y, nn.L1Loss(x, y, nn.ReduceMean)},
		{nn.LossSpec{Type: "huber", Delta: 0.5}, y, nn.HuberLoss(x, y, 0.5, nn.ReduceMean)},
		{nn.LossSpec{Type: "smooth_l1"}, y, nn.SmoothL1Loss(x, y, 1, nn.ReduceMean)},
		{nn.LossSpec{Type: "bce_with_logits", PosWeight: []float64{1, 2, 3}}, y.Sigmoid(),
			nn.BCEWithLogitsLoss(x, y.Sigmoid(), nn.BCEOptions{PosWeight: tensor.FromFloat32([]float32{1, 2, 3})})},
		{nn.LossSpec{Type: "bce"}, y.Sigmoid(), nn.BCELoss(x.Sigmoid(), y.Sigmoid(), nn.BCEOptions{})},
	} {
		f, err := c.spec.Build()
		if err != nil {
			t.Fatalf("%+v: %v", c.spec, err)
		}
		in := x
		if c.spec.Type == "bce" {
			in = x.Sigmoid()
		}
		assertClose(t, c.spec.Type, f(in, c.target), c.reference, 1e-6)
	}
	for _, c := range []struct {
		spec nn.LossSpec
		want string
	}{
		{nn.LossSpec{Type: "hinge"}, `unknown type "hinge"`},
		{nn.LossSpec{Type: "mse", LabelSmoothing: 0.1}, `field "label_smoothing" does not apply`},
		{nn.LossSpec{Type: "mse", Reduction: "avg"}, `unknown reduction "avg"`},
		{nn.LossSpec{Type: "cross_entropy", LabelSmoothing: 2}, "outside [0, 1]"},
	} {
		if _, err := c.spec.Build(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.spec, err, c.want)
		}
	}
}
