package tensor

import "fmt"

// CustomOp records a differentiable op whose forward result the caller has
// already computed, for fused kernels written outside this package (a
// fused loss, a normalization layer). out must be a fresh tensor that
// records nothing yet (compute it from Detach'ed inputs or raw slices);
// backward maps the gradient of out to one gradient per input, in order
// (nil for an input that needs none), each of its input's shape or
// broadcastable to it (the engine sums broadcast dims). CustomOp returns
// out, which requires grad when an input does, as any op's output would;
// when an input is NoGrad-marked, out is marked too and nothing is
// recorded.
//
// backward runs inside Backward: g is valid only during the call (the
// engine may recycle its buffer afterwards), and backward must not keep
// g or the gradients it returns. It may return tensors it saved at
// forward time; those are never recycled. Only float outputs record.
//
//	y := tensor.CustomOp("Square", tensor.FromFloat32(sq, n), func(g *tensor.Tensor) []*tensor.Tensor {
//		return []*tensor.Tensor{g.Mul(x.Detach()).MulScalar(2)}
//	}, x)
func CustomOp(name string, out *Tensor, backward func(g *Tensor) []*Tensor, inputs ...*Tensor) *Tensor {
	if out.node != nil || out.requiresGrad {
		panic(fmt.Sprintf("tensor: CustomOp %s: out must be a fresh tensor that records nothing (it is %s)", name, describeRecord(out)))
	}
	record := false
	for _, in := range inputs {
		if in.inference {
			out.inference = true
			return out
		}
		record = record || in.requiresGrad
	}
	if !record || !out.dtype.IsFloat() {
		return out
	}
	out.attach(name, backward, inputs...)
	out.node.custom = true
	return out
}

func describeRecord(t *Tensor) string {
	if t.node != nil {
		return "the output of " + t.node.op
	}
	return "a tensor that requires grad"
}
