package optim

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// roundTripJSON sends a StateDict through what a checkpoint does: the
// metadata through JSON, each tensor through raw little-endian bytes with
// its dtype and shape (as safetensors stores it).
func roundTripJSON(t *testing.T, s *StateDict) *StateDict {
	t.Helper()
	meta, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	out := &StateDict{}
	if err := json.Unmarshal(meta, out); err != nil {
		t.Fatal(err)
	}
	out.Tensors = map[string]*tensor.Tensor{}
	for _, name := range s.TensorNames() {
		src := s.Tensors[name]
		vals := src.Values()
		switch src.DType() {
		case tensor.Float32:
			raw := make([]byte, 4*len(vals))
			for i, v := range vals {
				binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
			}
			back := make([]float32, len(vals))
			for i := range back {
				back[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			out.Tensors[name] = tensor.FromFloat32(back, src.Shape()...)
		case tensor.Float64:
			raw := make([]byte, 8*len(vals))
			for i, v := range vals {
				binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
			}
			back := make([]float64, len(vals))
			for i := range back {
				back[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			}
			out.Tensors[name] = tensor.FromFloat64(back, src.Shape()...)
		default:
			t.Fatalf("tensor %q has dtype %v", name, src.DType())
		}
	}
	return out
}

// stateCases build each optimizer over the reference problem.
var stateCases = []struct {
	name string
	make func(ps []*tensor.Tensor) (Optimizer, error)
}{
	{"SGD", func(ps []*tensor.Tensor) (Optimizer, error) {
		return NewSGD(ps, SGDOptions{LR: 0.05, Momentum: 0.9, Nesterov: true, WeightDecay: 0.01})
	}},
	{"Adam", func(ps []*tensor.Tensor) (Optimizer, error) {
		return NewAdam(ps, AdamOptions{LR: 0.05, AMSGrad: true, WeightDecay: 0.01})
	}},
	{"AdamW", func(ps []*tensor.Tensor) (Optimizer, error) { return NewAdamW(ps, DefaultAdamW()) }},
	{"RMSprop", func(ps []*tensor.Tensor) (Optimizer, error) {
		return NewRMSprop(ps, RMSpropOptions{LR: 0.01, Momentum: 0.5, Centered: true})
	}},
	{"Adagrad", func(ps []*tensor.Tensor) (Optimizer, error) {
		return NewAdagrad(ps, AdagradOptions{LR: 0.1, LRDecay: 0.01, InitialAccumulatorValue: 0.1})
	}},
}

// TestStateRoundTrip runs each optimizer for a few steps, saves its state
// through JSON and raw bytes, loads it into a fresh optimizer over copies of
// the parameters, and checks that both continue bit for bit alike, and
// like an uninterrupted run.
func TestStateRoundTrip(t *testing.T) {
	for _, c := range stateCases {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			t.Run(c.name+"-"+dt.String(), func(t *testing.T) {
				ra := newRefProblem(dt)
				a, err := c.make([]*tensor.Tensor{ra.a, ra.b, ra.c})
				if err != nil {
					t.Fatal(err)
				}
				for step := range 4 { // step 3 leaves b without a gradient
					ra.setGrads(step)
					if err := a.Step(); err != nil {
						t.Fatal(err)
					}
				}
				a.SetLR(0, a.LR(0)*0.5) // as a schedule would
				saved := roundTripJSON(t, a.State())

				rb := newRefProblem(dt)
				for _, pair := range [][2]*tensor.Tensor{{rb.a, ra.a}, {rb.b, ra.b}, {rb.c, ra.c}} {
					pair[0].CopyFrom(pair[1])
				}
				b, err := c.make([]*tensor.Tensor{rb.a, rb.b, rb.c})
				if err != nil {
					t.Fatal(err)
				}
				if err := b.LoadState(saved); err != nil {
					t.Fatal(err)
				}
				if b.LR(0) != a.LR(0) {
					t.Fatalf("restored LR %v, saved %v", b.LR(0), a.LR(0))
				}
				for step := 4; step < 8; step++ {
					ra.setGrads(step)
					rb.setGrads(step)
					if err := a.Step(); err != nil {
						t.Fatal(err)
					}
					if err := b.Step(); err != nil {
						t.Fatal(err)
					}
					va, vb := ra.values(), rb.values()
					for i := range va {
						if va[i] != vb[i] {
							t.Fatalf("step %d: element %d = %v after restore, %v uninterrupted", step, i, vb[i], va[i])
						}
					}
				}
			})
		}
	}
}

// TestLoadStateErrors checks that mismatched states are refused and leave
// the optimizer unchanged.
func TestLoadStateErrors(t *testing.T) {
	r := newRefProblem(tensor.Float32)
	sgd, _ := NewSGD([]*tensor.Tensor{r.a, r.b}, SGDOptions{LR: 0.1, Momentum: 0.9})
	r.setGrads(0)
	if err := sgd.Step(); err != nil {
		t.Fatal(err)
	}
	good := sgd.State()
	adam, _ := NewAdam([]*tensor.Tensor{r.a, r.b}, AdamOptions{})
	if err := adam.LoadState(good); err == nil {
		t.Error("Adam accepted an SGD state")
	}
	other, _ := NewSGD([]*tensor.Tensor{r.a}, SGDOptions{LR: 0.1, Momentum: 0.9})
	if err := other.LoadState(good); err == nil {
		t.Error("an SGD over one parameter accepted a state over two")
	}
	swapped, _ := NewSGD([]*tensor.Tensor{r.b, r.a}, SGDOptions{LR: 0.3, Momentum: 0.9})
	if err := swapped.LoadState(good); err == nil {
		t.Error("a state was loaded over parameters of other shapes")
	}
	if swapped.LR(0) != 0.3 {
		t.Errorf("a refused state changed the LR to %v", swapped.LR(0))
	}
	if err := sgd.LoadState(nil); err == nil {
		t.Error("nil state accepted")
	}
}
