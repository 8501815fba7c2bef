package tensor_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// cube is x³ as a CustomOp: forward from raw values, backward 3x²·g.
func cube(x *tensor.Tensor) *tensor.Tensor {
	xd := x.Detach()
	out := xd.Mul(xd).Mul(xd)
	return tensor.CustomOp("Cube", out, func(g *tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{g.Mul(xd.Square()).MulScalar(3)}
	}, x)
}

func TestCustomOpMatchesComposite(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		rng := tensor.NewRNG(1)
		x1 := rng.Normal(dt, 0, 1, 4, 5).SetRequiresGrad(true)
		x2 := x1.Detach().Clone().SetRequiresGrad(true)
		y1 := cube(x1).Sin().SumAll()
		y2 := x2.PowScalar(3).Sin().SumAll()
		if !y1.RequiresGrad() {
			t.Fatalf("%v: custom op output records nothing", dt)
		}
		if math.Abs(y1.Item()-y2.Item()) > 1e-5 {
			t.Fatalf("%v: value %v, composite %v", dt, y1.Item(), y2.Item())
		}
		y1.Backward()
		y2.Backward()
		g1, g2 := x1.Grad().Values(), x2.Grad().Values()
		for i := range g1 {
			if math.Abs(g1[i]-g2[i]) > 1e-4*(1+math.Abs(g2[i])) {
				t.Fatalf("%v: grad[%d] = %v, composite %v", dt, i, g1[i], g2[i])
			}
		}
	}
}

func TestCustomOpRecording(t *testing.T) {
	x := tensor.FromFloat64([]float64{1, 2}).SetRequiresGrad(true)
	if y := cube(x); y.GradFn() != "Cube" || !y.RequiresGrad() {
		t.Fatalf("recorded %q, requires grad %v", y.GradFn(), y.RequiresGrad())
	}
	if y := cube(x.NoGrad()); y.RequiresGrad() || !y.IsInference() || y.GradFn() != "" {
		t.Fatal("a NoGrad input must give an inference-marked output with no node")
	}
	if y := cube(x.Detach()); y.RequiresGrad() {
		t.Fatal("no input requires grad, yet the output does")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("CustomOp accepted an output that already records")
		}
	}()
	tensor.CustomOp("Bad", x.Square(), func(g *tensor.Tensor) []*tensor.Tensor { return nil }, x)
}

// TestLinearReluMatchesComposite checks LinearRelu against
// Linear(...).Relu(): values and gradients for 2-D and 3-D inputs, with
// and without bias, in float32 and float64 (including a single row, which
// takes the dot-product path), plus a float64 gradcheck.
func TestLinearReluMatchesComposite(t *testing.T) {
	for _, c := range []struct {
		name    string
		x       []int
		hasBias bool
	}{{"2d", []int{5, 4}, true}, {"3d-nobias", []int{2, 3, 4}, false}, {"one-row", []int{1, 4}, true}} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			rng := tensor.NewRNG(11)
			x0 := rng.Normal(dt, 0, 1, c.x...)
			w0 := rng.Normal(dt, 0, 1, 6, 4)
			b0 := rng.Normal(dt, 0, 1, 6)
			outShape := append(append([]int(nil), c.x[:len(c.x)-1]...), 6)
			seed := rng.Normal(dt, 0, 1, outShape...)
			run := func(fused bool) []*tensor.Tensor {
				x, w := x0.Clone().SetRequiresGrad(true), w0.Clone().SetRequiresGrad(true)
				var b *tensor.Tensor
				if c.hasBias {
					b = b0.Clone().SetRequiresGrad(true)
				}
				var y *tensor.Tensor
				if fused {
					y = tensor.LinearRelu(x, w, b)
				} else {
					y = tensor.Linear(x, w, b).Relu()
				}
				y.BackwardWith(seed)
				r := []*tensor.Tensor{y.Detach(), x.Grad(), w.Grad()}
				if b != nil {
					r = append(r, b.Grad())
				}
				return r
			}
			want, got := run(false), run(true)
			for i := range want {
				closeTo(t, fmt.Sprintf("%s/%v/%d", c.name, dt, i), got[i], want[i], 1e-6)
			}
		}
	}
	rng := tensor.NewRNG(12)
	x := rng.Normal(tensor.Float64, 0, 1, 3, 4).SetRequiresGrad(true)
	checkGrad(t, func(v []*tensor.Tensor) *tensor.Tensor { return tensor.LinearRelu(v[0], v[1], v[2]) },
		x, leaf64(13, 5, 4), leaf64(14, 5))
}
