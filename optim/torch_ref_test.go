package optim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// torchReference is testdata/torch_reference.json, written by
// testdata/gen_torch.py with PyTorch 1.13.
type torchReference struct {
	TorchVersion string `json:"torch_version"`
	Optimizers   []struct {
		Kind   string             `json:"kind"`
		Opts   map[string]any     `json:"opts"`
		DType  string             `json:"dtype"`
		Groups []torchGroupConfig `json:"groups"`
		Traj   [][]float64        `json:"traj"`
	} `json:"optimizers"`
	Schedulers []struct {
		Kind    string         `json:"kind"`
		Opts    map[string]any `json:"opts"`
		Metrics []float64      `json:"metrics"`
		LRs     [][]float64    `json:"lrs"`
	} `json:"schedulers"`
	LBFGS []struct {
		LineSearch  string  `json:"line_search"`
		LR          float64 `json:"lr"`
		MaxIter     int     `json:"max_iter"`
		HistorySize int     `json:"history_size"`
		Traj        []struct {
			X     []float64 `json:"x"`
			Loss  float64   `json:"loss"`
			Evals int       `json:"evals"`
			NIter int       `json:"n_iter"`
		} `json:"traj"`
	} `json:"lbfgs"`
}

type torchGroupConfig struct {
	Params []string       `json:"params"`
	Opts   map[string]any `json:"opts"`
}

func loadTorchReference(t *testing.T) *torchReference {
	t.Helper()
	b, err := os.ReadFile("testdata/torch_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref torchReference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	return &ref
}

func optF(m map[string]any, k string) float64 {
	if v, ok := m[k].(float64); ok {
		return v
	}
	return 0
}

func optB(m map[string]any, k string) bool {
	v, _ := m[k].(bool)
	return v
}

// refProblem is the problem of gen_torch.py: parameters a [3 4] and b [5]
// with loss Σ w_i (x_i − sin i)² + 0.05 x_i⁴, and c [2] with no gradient.
type refProblem struct{ a, b, c *tensor.Tensor }

func newRefProblem(dt tensor.DType) refProblem {
	av := make([]float64, 12)
	for i := range av {
		av[i] = 0.5 * math.Cos(1.3*float64(i))
	}
	bv := make([]float64, 5)
	for i := range bv {
		bv[i] = 0.3*float64(i) - 0.6
	}
	return refProblem{
		a: tensor.FromValues(dt, av, 3, 4).SetRequiresGrad(true),
		b: tensor.FromValues(dt, bv, 5).SetRequiresGrad(true),
		c: tensor.FromValues(dt, []float64{1, -1}, 2).SetRequiresGrad(true),
	}
}

// setGrads sets the gradients of step `step` as gen_torch.py does.
func (r refProblem) setGrads(step int) {
	x := append(r.a.Values(), r.b.Values()...)
	g := make([]float64, len(x))
	for i, xi := range x {
		w := float64(1 + i%3)
		g[i] = 2*w*(xi-math.Sin(float64(i))) + 0.2*xi*xi*xi
	}
	dt := r.a.DType()
	r.a.SetGrad(tensor.FromValues(dt, g[:12], 3, 4))
	if step == 3 {
		r.b.SetGrad(nil)
	} else {
		r.b.SetGrad(tensor.FromValues(dt, g[12:], 5))
	}
}

func (r refProblem) values() []float64 {
	return append(append(r.a.Values(), r.b.Values()...), r.c.Values()...)
}

func (r refProblem) byName(n string) *tensor.Tensor {
	return map[string]*tensor.Tensor{"a": r.a, "b": r.b, "c": r.c}[n]
}

// newFromTorchConfig builds the optimizer a reference case describes.
func newFromTorchConfig(kind string, o map[string]any, groups []ParamGroup) (Optimizer, error) {
	switch kind {
	case "sgd":
		return NewSGDGroups(groups, SGDOptions{LR: optF(o, "lr"), Momentum: optF(o, "momentum"),
			Dampening: optF(o, "dampening"), WeightDecay: optF(o, "weight_decay"),
			Nesterov: optB(o, "nesterov"), Maximize: optB(o, "maximize")})
	case "adam", "adamw":
		a := AdamOptions{LR: optF(o, "lr"), Eps: optF(o, "eps"), WeightDecay: optF(o, "weight_decay"),
			AMSGrad: optB(o, "amsgrad"), Maximize: optB(o, "maximize")}
		if betas, ok := o["betas"].([]any); ok {
			a.Beta1, a.Beta2 = betas[0].(float64), betas[1].(float64)
		}
		if kind == "adam" {
			return NewAdamGroups(groups, a)
		}
		if _, ok := o["weight_decay"]; !ok {
			a.WeightDecay = 0.01 // PyTorch's AdamW default
		}
		return NewAdamWGroups(groups, a)
	case "rmsprop":
		return NewRMSpropGroups(groups, RMSpropOptions{LR: optF(o, "lr"), Alpha: optF(o, "alpha"),
			Eps: optF(o, "eps"), WeightDecay: optF(o, "weight_decay"), Momentum: optF(o, "momentum"),
			Centered: optB(o, "centered"), Maximize: optB(o, "maximize")})
	case "adagrad":
		return NewAdagradGroups(groups, AdagradOptions{LR: optF(o, "lr"), LRDecay: optF(o, "lr_decay"),
			WeightDecay: optF(o, "weight_decay"), InitialAccumulatorValue: optF(o, "initial_accumulator_value"),
			Eps: optF(o, "eps"), Maximize: optB(o, "maximize")})
	}
	return nil, fmt.Errorf("unknown optimizer %q", kind)
}

// TestOptimizersMatchTorch replays every PyTorch trajectory of
// testdata/torch_reference.json: float64 runs must agree to rounding,
// float32 runs to a few float32 ulps.
func TestOptimizersMatchTorch(t *testing.T) {
	ref := loadTorchReference(t)
	if len(ref.Optimizers) == 0 {
		t.Fatal("no optimizer cases in the reference")
	}
	for ci, c := range ref.Optimizers {
		name := fmt.Sprintf("%d-%s-%s-%v", ci, c.Kind, c.DType, c.Opts)
		t.Run(name, func(t *testing.T) {
			dt, tol := tensor.Float64, 1e-12
			if c.DType == "float32" {
				dt, tol = tensor.Float32, 2e-6
			}
			r := newRefProblem(dt)
			groups := []ParamGroup{{Params: []*tensor.Tensor{r.a, r.b, r.c}}}
			if c.Groups != nil {
				groups = nil
				for _, g := range c.Groups {
					pg := ParamGroup{LR: optF(g.Opts, "lr")}
					for _, n := range g.Params {
						pg.Params = append(pg.Params, r.byName(n))
					}
					if wd, ok := g.Opts["weight_decay"].(float64); ok {
						pg.WeightDecay = wd
						pg.NoWeightDecay = wd == 0
					}
					groups = append(groups, pg)
				}
			}
			o, err := newFromTorchConfig(c.Kind, c.Opts, groups)
			if err != nil {
				t.Fatal(err)
			}
			for step, want := range c.Traj {
				r.setGrads(step)
				if err := o.Step(); err != nil {
					t.Fatal(err)
				}
				got := r.values()
				for i := range want {
					if d := math.Abs(got[i] - want[i]); d > tol*math.Max(1, math.Abs(want[i])) {
						t.Fatalf("step %d: element %d = %.17g, PyTorch %.17g (diff %.3g)", step, i, got[i], want[i], d)
					}
				}
			}
		})
	}
}
