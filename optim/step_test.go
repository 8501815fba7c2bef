package optim

import (
	"math"
	"runtime"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// sameBits reports the first index where a and b differ in their bits.
func sameBits(a, b []float32) (int, bool) {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return 0, true
}

func clone32(s []float32) []float32 { return append([]float32(nil), s...) }

// TestStepIndependentOfCores checks that a step gives the same bits
// whether it runs on one core or is split over several (the vector and
// scalar loops round alike, so chunk boundaries do not matter).
func TestStepIndependentOfCores(t *testing.T) {
	run := func(procs int) [][]float32 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		// Odd sizes, so that chunk boundaries fall inside vectors.
		rng := tensor.NewRNG(3)
		var ps []*tensor.Tensor
		for _, n := range []int{70001, 3, 65553, 33} {
			p := rng.Normal(tensor.Float32, 0, 1, n).SetRequiresGrad(true)
			p.SetGrad(rng.Normal(tensor.Float32, 0, 0.1, n))
			ps = append(ps, p)
		}
		o, err := NewAdamW(ps, AdamOptions{LR: 0.01, WeightDecay: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := o.Step(); err != nil {
				t.Fatal(err)
			}
		}
		var out [][]float32
		for _, p := range ps {
			out = append(out, clone32(p.Float32s()))
		}
		st := o.State() // the moments show differences the parameters round away
		for _, name := range st.TensorNames() {
			out = append(out, clone32(st.Tensors[name].Float32s()))
		}
		return out
	}
	one, four := run(1), run(4)
	for k := range one {
		if i, ok := sameBits(one[k], four[k]); !ok {
			t.Fatalf("tensor %d element %d: %v on one core, %v on four", k, i, one[k][i], four[k][i])
		}
	}
}

func widen(s []float32) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}
