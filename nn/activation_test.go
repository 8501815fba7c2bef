package nn_test

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// TestActivationsPropagateNaN: every activation module maps NaN to NaN, as
// PyTorch's do (a NaN weight or input must surface, not vanish), in the
// vector body and in the tail of the Float32 kernels.
func TestActivationsPropagateNaN(t *testing.T) {
	nan := math.NaN()
	x := make([]float64, 37)
	for i := range x {
		x[i] = float64(i%5) - 2
	}
	at := []int{0, 18, 36}
	for _, i := range at {
		x[i] = nan
	}
	for _, c := range []struct {
		name string
		m    nn.Layer
	}{
		{"ReLU", nn.NewReLU()}, {"LeakyReLU", nn.NewLeakyReLU(0.01)}, {"ELU", nn.NewELU(1)},
		{"Sigmoid", nn.NewSigmoid()}, {"Tanh", nn.NewTanh()}, {"Softplus", nn.NewSoftplus()},
		{"SiLU", nn.NewSiLU()}, {"GELU", nn.NewGELU()}, {"GELU tanh", &nn.GELU{Approximate: "tanh"}},
	} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			y := c.m.Forward(tensor.FromValues(dt, x)).To(tensor.Float64).Float64s()
			for i, v := range y {
				if math.IsNaN(v) != math.IsNaN(x[i]) {
					t.Fatalf("%s %v: y[%d] = %v for x = %v", c.name, dt, i, v, x[i])
				}
			}
		}
	}
}

// TestSequentialLinearReluNaN: the fused Linear+ReLU that Sequential runs
// keeps a NaN weight's output NaN, as torch's relu(linear(x)) does.
func TestSequentialLinearReluNaN(t *testing.T) {
	lin := nn.NewLinear(tensor.NewRNG(1), 3, 4)
	lin.Weight.Float32s()[3*2] = float32(math.NaN()) // row 2
	y := nn.NewSequential(lin, nn.NewReLU()).Forward(tensor.Ones(tensor.Float32, 5, 3)).Float32s()
	for r := range 5 {
		for o := range 4 {
			if v := y[r*4+o]; (v != v) != (o == 2) {
				t.Fatalf("y[%d,%d] = %v: only output 2 should be NaN", r, o, v)
			}
		}
	}
}
