package tensor

import (
	"fmt"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// gemmLayout reports how a rows×cols matrix with element strides (rs, cs)
// can be handed to a row-major GEMM without copying: as stored (row-major,
// leading dimension ld) or transposed (column-major, i.e. the row-major
// storage of its transpose). ok is false when neither fits.
func gemmLayout(rows, cols, rs, cs int) (trans bool, ld int, ok bool) {
	if cs == 1 || cols == 1 {
		ld = rs
		if rows == 1 {
			ld = max(cols, 1)
		}
		if ld >= max(cols, 1) {
			return false, ld, true
		}
	}
	if rs == 1 || rows == 1 {
		ld = cs
		if cols == 1 {
			ld = max(rows, 1)
		}
		if ld >= max(rows, 1) {
			return true, ld, true
		}
	}
	return false, 0, false
}

// matLayout returns t (or a contiguous copy when its last two dims do not
// fit GEMM) and how to pass its matrices.
func matLayout(t *Tensor) (*Tensor, bool, int) {
	nd := len(t.shape)
	r, c := t.shape[nd-2], t.shape[nd-1]
	if trans, ld, ok := gemmLayout(r, c, t.strides[nd-2], t.strides[nd-1]); ok {
		return t, trans, ld
	}
	t = t.cloneRaw()
	return t, false, max(c, 1)
}

// gemmCall computes C = A·B (+ beta·C) for one matrix of each operand,
// at the given storage offsets. C is row-major with leading dimension n.
func gemmCall(c *Tensor, co int, a *Tensor, ao int, ta bool, lda int, b *Tensor, bo int, tb bool, ldb int, m, n, k int, beta float64) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	switch c.dtype {
	case Float32:
		sgemmAuto(ta, tb, m, n, k, 1, data[float32](a)[ao:], lda, data[float32](b)[bo:], ldb, float32(beta), data[float32](c)[co:], n)
	case Float64:
		kernel.Dgemm(ta, tb, m, n, k, 1, data[float64](a)[ao:], lda, data[float64](b)[bo:], ldb, beta, data[float64](c)[co:], n)
	default:
		panic("tensor: gemm on " + c.dtype.String())
	}
}

// matmulRaw multiplies the last two dims of a (…×m×k) and b (…×k×n),
// broadcasting batch dims, with no autograd.
func matmulRaw(a, b *Tensor) *Tensor {
	if len(a.shape) < 2 || len(b.shape) < 2 {
		panic(fmt.Sprintf("tensor: internal matmul of shapes %v and %v", a.shape, b.shape))
	}
	ct := PromoteTypes(a.dtype, b.dtype)
	a, b = a.castRaw(ct), b.castRaw(ct)
	if ct.IsHalf() {
		return matmulRaw(a.castRaw(Float32), b.castRaw(Float32)).castRaw(ct)
	}
	if !ct.IsFloat() {
		return matmulRaw(a.castRaw(Float64), b.castRaw(Float64)).castRaw(ct)
	}
	na, nb := len(a.shape), len(b.shape)
	m, k, n := a.shape[na-2], a.shape[na-1], b.shape[nb-1]
	if b.shape[nb-2] != k {
		panic(fmt.Sprintf("tensor: MatMul: shapes %v and %v do not multiply (%d ≠ %d)", a.shape, b.shape, k, b.shape[nb-2]))
	}
	batch := broadcastShapes("MatMul", a.shape[:na-2], b.shape[:nb-2])
	outShape := append(append([]int(nil), batch...), m, n)
	var out *Tensor
	if k > 0 {
		out = emptyUninit(ct, outShape) // every element is written by a GEMM with beta = 0
	} else {
		out = empty(ct, outShape)
	}
	// A 2-D right operand lets a's batch fold into the rows of one GEMM
	// when a's rows are evenly spaced.
	if nb == 2 && na > 2 {
		if st := viewStrides(a.shape, a.strides, []int{numelOf(a.shape[:na-1]), k}); st != nil {
			a2 := a.viewAs([]int{numelOf(a.shape[:na-1]), k}, st, a.offset)
			if ta, lda, ok := gemmLayout(a2.shape[0], k, st[0], st[1]); ok {
				b, tb, ldb := matLayout(b)
				gemmCall(out, 0, a2, a2.offset, ta, lda, b, b.offset, tb, ldb, a2.shape[0], n, k, 0)
				return out
			}
		}
	}
	a, ta, lda := matLayout(a)
	b, tb, ldb := matLayout(b)
	if len(batch) == 0 {
		gemmCall(out, 0, a, a.offset, ta, lda, b, b.offset, tb, ldb, m, n, k, 0)
		return out
	}
	// Walk the batch dims with a plan over out, a and b (stride 0 where a
	// batch dim is broadcast).
	var st [maxOperands][]int
	var off [maxOperands]int
	st[0] = out.strides[:len(batch)]
	st[1] = broadcastStrides("MatMul", a.viewAs(a.shape[:na-2], a.strides[:na-2], 0), batch)
	st[2] = broadcastStrides("MatMul", b.viewAs(b.shape[:nb-2], b.strides[:nb-2], 0), batch)
	off[1], off[2] = a.offset, b.offset
	p := newPlan(batch, 3, &st, &off)
	p.run(false, func(o *[maxOperands]int) {
		for e := 0; e < p.n; e++ {
			gemmCall(out, o[0]+e*p.inner[0], a, o[1]+e*p.inner[1], ta, lda, b, o[2]+e*p.inner[2], tb, ldb, m, n, k, 0)
		}
	})
	return out
}

// MatMul returns the matrix product with torch.matmul semantics: 1-D·1-D
// is a dot product; a 1-D left operand is a row vector and a 1-D right
// operand a column vector (the added dim is removed from the result);
// otherwise the last two dims multiply and leading (batch) dims broadcast.
// Transposed views are passed to GEMM as transposed operands, not copied.
func (a *Tensor) MatMul(b *Tensor) *Tensor {
	switch {
	case len(a.shape) == 0 || len(b.shape) == 0:
		panic(fmt.Sprintf("tensor: MatMul of 0-d tensors (shapes %v and %v)", a.shape, b.shape))
	case len(a.shape) == 1 && len(b.shape) == 1:
		return Dot(a, b)
	case len(a.shape) == 1:
		return a.Unsqueeze(0).MatMul(b).Squeeze(-2)
	case len(b.shape) == 1:
		return a.MatMul(b.Unsqueeze(1)).Squeeze(-1)
	}
	out := matmulRaw(a, b)
	if track2(out, a, b) {
		out.attach("MatMul", func(g *Tensor) []*Tensor {
			var ga, gb *Tensor
			if needs(a) { // dA = G·Bᵀ
				ga = matmulRaw(g, b.transposeRaw(-2, -1))
			}
			if needs(b) { // dB = Aᵀ·G, with a's batch folded into one GEMM when b is 2-D
				switch {
				case len(b.shape) == 2 && len(a.shape) > 2:
					k, n := a.shape[len(a.shape)-1], g.shape[len(g.shape)-1]
					gb = gemmGrad(b, a.reshapeRaw([]int{-1, k}).transposeRaw(0, 1), g.reshapeRaw([]int{-1, n}))
				case len(b.shape) == 2 && len(a.shape) == 2:
					gb = gemmGrad(b, a.transposeRaw(0, 1), g)
				default:
					gb = matmulRaw(a.transposeRaw(-2, -1), g)
				}
			}
			return []*Tensor{ga, gb}
		}, a, b)
	}
	return out
}

// gemmGrad computes the gradient a·b of the 2-D parameter p. When p is a
// leaf it is written straight into p.grad (accumulated by the GEMM with
// beta = 1, or the fresh product becomes p.grad) and nil is returned;
// otherwise the product is returned for the engine to accumulate.
func gemmGrad(p, a, b *Tensor) *Tensor {
	if !directGrad(p) || a.dtype != p.dtype || b.dtype != p.dtype {
		return matmulRaw(a, b)
	}
	if p.grad == nil {
		p.grad = matmulRaw(a, b)
		return nil
	}
	m, k, n := a.shape[0], a.shape[1], b.shape[1]
	a, ta, lda := matLayout(a)
	b, tb, ldb := matLayout(b)
	gemmCall(p.grad, p.grad.offset, a, a.offset, ta, lda, b, b.offset, tb, ldb, m, n, k, 1)
	return nil
}

// MatMul returns a.MatMul(b).
func MatMul(a, b *Tensor) *Tensor { return a.MatMul(b) }

// Dot returns the inner product of two 1-D tensors of equal length as a
// 0-d tensor.
func Dot(a, b *Tensor) *Tensor {
	if len(a.shape) != 1 || len(b.shape) != 1 || a.shape[0] != b.shape[0] {
		panic(fmt.Sprintf("tensor: Dot needs two 1-D tensors of equal length, got %v and %v", a.shape, b.shape))
	}
	if a.dtype == Float32 && b.dtype == Float32 && a.IsContiguous() && b.IsContiguous() {
		out := Scalar(float64(kernel.DotF32(flat[float32](a), flat[float32](b))), Float32)
		if track2(out, a, b) {
			out.attach("Dot", func(g *Tensor) []*Tensor {
				var ga, gb *Tensor
				if needs(a) {
					ga = binaryRaw(opMul, b, g)
				}
				if needs(b) {
					gb = binaryRaw(opMul, a, g)
				}
				return []*Tensor{ga, gb}
			}, a, b)
		}
		return out
	}
	return a.Mul(b).SumAll()
}

// Outer returns the outer product a·bᵀ of two 1-D tensors.
func Outer(a, b *Tensor) *Tensor {
	if len(a.shape) != 1 || len(b.shape) != 1 {
		panic(fmt.Sprintf("tensor: Outer needs 1-D tensors, got %v and %v", a.shape, b.shape))
	}
	return a.Unsqueeze(1).Mul(b.Unsqueeze(0))
}

// Linear returns x·wᵀ + b, the affine map of a fully connected layer: x is
// […, in], w is [out, in] (PyTorch's layout), b is [out] or nil. It runs
// as one GEMM whose output starts as the broadcast bias (beta = 1), and has
// its own backward: dx = G·w, dw = Gᵀ·x, db = Σ_rows G, each computed only
// when needed.
func Linear(x, w, b *Tensor) *Tensor { return linear(x, w, b, false) }

// LinearRelu returns Linear(x, w, b).Relu() as one op: the ReLU is applied
// to the GEMM's output in place, and backward zeroes the gradient where
// the output is ≤ 0 before Linear's backward, so no intermediate tensor is
// kept. nn.Sequential uses it for a Linear followed by a ReLU.
func LinearRelu(x, w, b *Tensor) *Tensor { return linear(x, w, b, true) }

func linear(x, w, b *Tensor, relu bool) *Tensor {
	if len(x.shape) == 0 || len(w.shape) != 2 || w.shape[1] != x.shape[len(x.shape)-1] {
		panic(fmt.Sprintf("tensor: Linear: input %v does not match weight %v (want [out, in])", x.shape, w.shape))
	}
	outF, in := w.shape[0], w.shape[1]
	if b != nil && (b.Numel() != outF || len(b.shape) > 1) {
		panic(fmt.Sprintf("tensor: Linear: bias %v does not match weight %v", b.shape, w.shape))
	}
	if r, ok := viaFloat(x, w, b, func(x, w, b *Tensor) *Tensor { return linear(x, w, b, relu) }); ok {
		return r
	}
	ct := x.dtype
	x2 := x
	if len(x.shape) != 2 {
		x2 = x.reshapeRaw([]int{-1, in})
	}
	rows := x2.shape[0]
	var out *Tensor
	if b != nil || in > 0 {
		out = emptyUninit(ct, []int{rows, outF}) // the bias fill or a GEMM with beta = 0 writes every element
	} else {
		out = empty(ct, []int{rows, outF})
	}
	beta := 0.0
	if b != nil {
		fillRowsWith(out, b, rows, outF)
		beta = 1
	}
	if !linearRowsF32(out, x2, w, rows, b != nil) {
		x2, ta, lda := matLayout(x2)
		wt, tb, ldb := matLayout(w.transposeRaw(0, 1))
		gemmCall(out, 0, x2, x2.offset, ta, lda, wt, wt.offset, tb, ldb, rows, outF, in, beta)
	}
	if relu {
		switch ct {
		case Float32:
			reluInPlace(data[float32](out))
		case Float64:
			reluInPlace(data[float64](out))
		}
	}
	if len(x.shape) != 2 {
		outShape := append(append([]int(nil), x.shape[:len(x.shape)-1]...), outF)
		out = out.contiguousView(outShape)
	}
	if track3(out, x, w, b) {
		name := "Linear"
		if relu {
			name = "LinearRelu"
		}
		back := func(g *Tensor) []*Tensor {
			g2 := g.reshapeRaw([]int{rows, outF})
			if relu {
				// Zero the gradient where out ≤ 0 (a NaN passes) into
				// scratch recycled
				// when this call is done.
				m := emptyUninit(ct, []int{rows, outF})
				m.st.meta().eng = true
				defer m.st.recycle()
				g2 = g2.contiguousRaw()
				switch ct {
				case Float32:
					kernel.ReluBackwardF32(data[float32](m), flat[float32](g2), data[float32](out))
				case Float64:
					reluMask(data[float64](m), flat[float64](g2), data[float64](out))
				}
				g2 = m
			}
			var gx, gw, gb *Tensor
			if needs(x) {
				gx = matmulRaw(g2, w).reshapeRaw(x.shape)
			}
			if needs(w) {
				gw = gemmGrad(w, g2.transposeRaw(0, 1), x2)
			}
			if needs(b) {
				gb = reduceRaw(redSum, g2, []int{0}, false).reshapeRaw(b.shape)
				if directGrad(b) && b.grad != nil {
					b.grad.addInPlaceRaw(gb)
					gb = nil
				}
			}
			return []*Tensor{gx, gw, gb}
		}
		if b != nil {
			out.attach(name, back, x, w, b)
		} else {
			out.attach(name, back, x, w)
		}
	}
	return out
}

// linearSmallRows is the batch size up to which Linear computes each
// output row as a matrix-vector product (kernel.GemvF32, float32
// accumulation like the GEMM) instead of running a GEMM: with one or two
// rows a GEMM spends its time packing the weights, while the product
// streams each weight row once from memory.
const linearSmallRows = 2

// linearRowsF32 sets out to x2·wᵀ, plus out's contents (the bias) when
// addTo, by matrix-vector products when x2 has at most linearSmallRows rows and x2
// and w are contiguous float32; it reports whether it did.
func linearRowsF32(out, x2, w *Tensor, rows int, addTo bool) bool {
	if rows > linearSmallRows || out.dtype != Float32 || !x2.IsContiguous() || !w.IsContiguous() || Autocast() != PrecisionFloat32 {
		return false
	}
	in := w.shape[1]
	o, xs, ws := data[float32](out), flat[float32](x2), flat[float32](w)
	outF := w.shape[0]
	for r := range rows {
		or := o[r*outF : (r+1)*outF]
		var bias []float32
		if addTo {
			bias = or // y += W·x: GemvF32 reads bias[i] before it writes y[i]
		}
		kernel.GemvF32(or, ws, xs[r*in:(r+1)*in], bias)
	}
	return true
}

// fillRowsWith sets every row of the contiguous rows×n matrix out to the
// vector b (n elements): directly for contiguous float operands, else
// through a broadcasting copy.
func fillRowsWith(out, b *Tensor, rows, n int) {
	if b.IsContiguous() {
		switch out.dtype {
		case Float32:
			fillRowsSlice(data[float32](out), flat[float32](b), rows, n)
			return
		case Float64:
			fillRowsSlice(data[float64](out), flat[float64](b), rows, n)
			return
		}
	}
	copyRaw(out, b.reshapeRaw([]int{n}))
}

func fillRowsSlice[T float](o, b []T, rows, n int) {
	b = b[:n]
	for r := range rows {
		copy(o[r*n:(r+1)*n], b)
	}
}

// viaFloat runs f, an operation on an input, a weight and an optional
// bias, on the three cast to one float type (recorded casts) when their
// types differ or are 16-bit, and casts the result back to the promoted
// type when it is a float type. It returns false, having done nothing,
// when the three already share a 32- or 64-bit float type.
func viaFloat(x, w, b *Tensor, f func(x, w, b *Tensor) *Tensor) (*Tensor, bool) {
	ct := PromoteTypes(x.dtype, w.dtype)
	if b != nil {
		ct = PromoteTypes(ct, b.dtype)
	}
	if !ct.IsHalf() && ct.IsFloat() && x.dtype == ct && w.dtype == ct && (b == nil || b.dtype == ct) {
		return nil, false
	}
	ft := floatOf(ct)
	if ft.IsHalf() {
		ft = Float32
	}
	var bf *Tensor
	if b != nil {
		bf = b.To(ft)
	}
	r := f(x.To(ft), w.To(ft), bf)
	if ct.IsFloat() {
		r = r.To(ct)
	}
	return r, true
}
