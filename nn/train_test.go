package nn_test

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// spiral returns n points per class of two interleaved spirals (the
// classic CS231n toy problem), with labels 0 and 1.
func spiral(rng *tensor.RNG, n int) (*tensor.Tensor, *tensor.Tensor) {
	x := make([]float32, 0, 4*n)
	y := make([]int64, 0, 2*n)
	for c := range 2 {
		for i := range n {
			r := float64(i) / float64(n)
			th := 4*r + float64(c)*math.Pi + rng.NormFloat64()*0.1
			x = append(x, float32(r*math.Sin(th)), float32(r*math.Cos(th)))
			y = append(y, int64(c))
		}
	}
	return tensor.FromFloat32(x, 2*n, 2), tensor.FromInt64(y, 2*n)
}

func accuracy(logits, y *tensor.Tensor) float64 {
	pred := logits.ArgMax(1, false).Int64s()
	ok := 0
	for i, c := range y.Int64s() {
		if pred[i] == c {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}

// TestMLPLearnsSpiral trains a small MLP with plain SGD (momentum 0.9)
// written inline, full batch, until it separates the two spirals.
func TestMLPLearnsSpiral(t *testing.T) {
	rng := tensor.NewRNG(51)
	x, y := spiral(rng, 100)
	model := nn.NewSequential(nn.NewLinear(rng, 2, 64), nn.NewReLU(), nn.NewLinear(rng, 64, 64), nn.NewReLU(), nn.NewLinear(rng, 64, 2))
	params := model.Parameters()
	vel := make([]*tensor.Tensor, len(params))
	for i, p := range params {
		vel[i] = tensor.ZerosLike(p)
	}
	var loss float64
	for step := range 3000 {
		l := nn.CrossEntropyLoss(model.Forward(x), y, nn.ClassOptions{})
		l.Backward()
		for i, p := range params {
			vel[i].MulScalarInPlace(0.9).AddInPlace(p.Grad())
			p.AxpyInPlace(-0.05, vel[i])
			p.ZeroGrad()
		}
		loss = l.Item()
		if step%100 == 0 && accuracy(model.Forward(x.NoGrad()), y) == 1 {
			break
		}
	}
	model.Eval()
	if acc := accuracy(model.Forward(x.NoGrad()), y); acc < 0.99 {
		t.Fatalf("spiral accuracy %.3f after training (loss %.4f), want ≥ 0.99", acc, loss)
	}
}

func TestMLPLearnsXOR(t *testing.T) {
	rng := tensor.NewRNG(52)
	x := tensor.FromFloat32([]float32{0, 0, 0, 1, 1, 0, 1, 1}, 4, 2)
	y := tensor.FromFloat32([]float32{0, 1, 1, 0}, 4, 1)
	model := nn.NewSequential(nn.NewLinear(rng, 2, 8), nn.NewTanh(), nn.NewLinear(rng, 8, 1))
	for range 2000 {
		l := nn.BCEWithLogitsLoss(model.Forward(x), y, nn.BCEOptions{})
		l.Backward()
		for _, p := range model.Parameters() {
			p.AxpyInPlace(-0.5, p.Grad())
			p.ZeroGrad()
		}
	}
	out := model.Forward(x.NoGrad()).Sigmoid().Values()
	for i, want := range []float64{0, 1, 1, 0} {
		if math.Abs(out[i]-want) > 0.1 {
			t.Fatalf("XOR output %v, want [0 1 1 0]", out)
		}
	}
}
