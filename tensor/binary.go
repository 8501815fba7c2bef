package tensor

import (
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// binOp names an elementwise binary op with NumPy broadcasting.
type binOp uint8

const (
	opAdd binOp = iota
	opSub
	opMul
	opDiv
	opMaximum
	opMinimum
	opPow
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opAnd
	opOr
	opXor
)

var binNames = [...]string{"Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Pow", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "LogicalAnd", "LogicalOr", "LogicalXor"}

func (op binOp) String() string { return binNames[op] }
func (op binOp) isCmp() bool    { return op >= opEq && op <= opGe }
func (op binOp) isLogic() bool  { return op >= opAnd }

// kernels holds the vector kernels package kernel provides for a type; nil
// entries fall back to the generic loops here.
type kernels[T number] struct {
	add, sub, mul, div func(dst, a, b []T)
	addS, mulS         func(dst, x []T, s T)
}

var (
	kernF32 = &kernels[float32]{add: kernel.AddF32, sub: kernel.SubF32, mul: kernel.MulF32, div: kernel.DivF32, addS: kernel.AddScalarF32, mulS: kernel.MulScalarF32}
	kernF64 = &kernels[float64]{add: kernel.AddF64, sub: kernel.SubF64, mul: kernel.MulF64, div: kernel.DivF64, addS: kernel.AddScalarF64, mulS: kernel.MulScalarF64}
)

func (k *kernels[T]) vec(op binOp) func(dst, a, b []T) {
	if k == nil {
		return nil
	}
	switch op {
	case opAdd:
		return k.add
	case opSub:
		return k.sub
	case opMul:
		return k.mul
	case opDiv:
		return k.div
	}
	return nil
}

// binaryRaw computes op(a, b) with broadcasting and type promotion, with no
// autograd. Comparisons return Bool tensors.
func binaryRaw(op binOp, a, b *Tensor) *Tensor {
	ct := PromoteTypes(a.dtype, b.dtype)
	switch {
	case op.isLogic():
		ct = Bool
	case op == opDiv:
		ct = floatOf(ct)
	case ct == Bool && !op.isCmp():
		ct = Int64
	}
	a, b = a.castRaw(ct), b.castRaw(ct)
	if ct.IsHalf() {
		r := binaryRaw(op, a.castRaw(Float32), b.castRaw(Float32))
		if op.isCmp() {
			return r
		}
		return r.castRaw(ct)
	}
	outDT := ct
	if op.isCmp() {
		outDT = Bool
	}
	var shape []int
	if slices.Equal(a.shape, b.shape) {
		shape = a.shape
	} else {
		shape = broadcastShapes(op.String(), a.shape, b.shape)
	}
	out := emptyUninit(outDT, shape)
	if op.isCmp() {
		switch ct {
		case Float32:
			cmpTyped[float32](op, out, a, b)
		case Float64:
			cmpTyped[float64](op, out, a, b)
		case Int64:
			cmpTyped[int64](op, out, a, b)
		case Int32:
			cmpTyped[int32](op, out, a, b)
		case Uint8, Bool:
			cmpTyped[uint8](op, out, a, b)
		case Int8:
			cmpTyped[int8](op, out, a, b)
		}
		return out
	}
	if op.isLogic() {
		logicTyped(op, out, a, b)
		return out
	}
	switch ct {
	case Float32:
		binaryTyped(op, out, a, b, kernF32)
	case Float64:
		binaryTyped(op, out, a, b, kernF64)
	case Int64:
		binaryTyped[int64](op, out, a, b, nil)
	case Int32:
		binaryTyped[int32](op, out, a, b, nil)
	case Uint8:
		binaryTyped[uint8](op, out, a, b, nil)
	case Int8:
		binaryTyped[int8](op, out, a, b, nil)
	}
	return out
}

// binaryTyped writes op(a, b) into out (which may also be a, for in-place
// updates). a and b have out's element type and broadcast to out's shape.
func binaryTyped[T number](op binOp, out, a, b *Tensor, k *kernels[T]) {
	// A large operand laid out differently from out (a transposed view) is
	// first copied with the cache-blocked copy: walking it with a large
	// inner stride would miss the cache on every element.
	if out.IsContiguous() {
		if a != out && !a.IsContiguous() && a.Numel() >= 1<<12 && slices.Equal(a.shape, out.shape) {
			a = a.contiguousRaw()
		}
		if b != out && !b.IsContiguous() && b.Numel() >= 1<<12 && slices.Equal(b.shape, out.shape) {
			b = b.contiguousRaw()
		}
	}
	o, x, y := data[T](out), data[T](a), data[T](b)
	if out.IsContiguous() && a.IsContiguous() && slices.Equal(a.shape, out.shape) {
		n := out.Numel()
		od, xd := o[out.offset:out.offset+n], x[a.offset:a.offset+n]
		if b.IsContiguous() && slices.Equal(b.shape, out.shape) {
			yd := y[b.offset : b.offset+n]
			if f := k.vec(op); f != nil {
				f(od, xd, yd)
				return
			}
			parallelChunks(n, func(lo, hi int) { binVec(op, od[lo:hi], xd[lo:hi], yd[lo:hi]) })
			return
		}
		if b.Numel() == 1 {
			s := y[b.offset]
			if k != nil {
				switch op {
				case opAdd:
					k.addS(od, xd, s)
					return
				case opSub:
					k.addS(od, xd, -s)
					return
				case opMul:
					k.mulS(od, xd, s)
					return
				}
			}
			parallelChunks(n, func(lo, hi int) { binVecS(op, od[lo:hi], xd[lo:hi], s) })
			return
		}
	}
	p := plan3(op.String(), out, a, b)
	n, so, sx, sy := p.n, p.inner[0], p.inner[1], p.inner[2]
	vec := k.vec(op)
	p.run(true, func(off *[maxOperands]int) {
		i, j, l := off[0], off[1], off[2]
		switch {
		case so == 1 && sx == 1 && sy == 1:
			if vec != nil {
				vec(o[i:i+n], x[j:j+n], y[l:l+n])
			} else {
				binVec(op, o[i:i+n], x[j:j+n], y[l:l+n])
			}
		case so == 1 && sx == 1 && sy == 0:
			binVecS(op, o[i:i+n], x[j:j+n], y[l])
		default:
			for e := 0; e < n; e++ {
				o[i+e*so] = binElem(op, x[j+e*sx], y[l+e*sy])
			}
		}
	})
}

// isIntType reports whether T is an integer type.
func isIntType[T number]() bool {
	h := 0.5
	return T(h) == 0
}

func maxNaN[T number](x, y T) T {
	if x != x || x > y {
		return x
	}
	return y
}

func minNaN[T number](x, y T) T {
	if x != x || x < y {
		return x
	}
	return y
}

// binElem applies op to one pair (the strided fallback).
func binElem[T number](op binOp, x, y T) T {
	switch op {
	case opAdd:
		return x + y
	case opSub:
		return x - y
	case opMul:
		return x * y
	case opDiv:
		if y == 0 && isIntType[T]() {
			return 0 // integer division by zero: 0 rather than a run-time panic
		}
		return x / y
	case opMaximum:
		return maxNaN(x, y)
	case opMinimum:
		return minNaN(x, y)
	case opPow:
		return T(math.Pow(float64(x), float64(y)))
	}
	panic("tensor: bad binary op " + op.String())
}

// binVec applies op over equal-length contiguous slices.
func binVec[T number](op binOp, d, x, y []T) {
	x, y = x[:len(d)], y[:len(d)]
	switch op {
	case opAdd:
		for i := range d {
			d[i] = x[i] + y[i]
		}
	case opSub:
		for i := range d {
			d[i] = x[i] - y[i]
		}
	case opMul:
		for i := range d {
			d[i] = x[i] * y[i]
		}
	case opMaximum:
		for i := range d {
			d[i] = maxNaN(x[i], y[i])
		}
	case opMinimum:
		for i := range d {
			d[i] = minNaN(x[i], y[i])
		}
	default:
		for i := range d {
			d[i] = binElem(op, x[i], y[i])
		}
	}
}

// binVecS applies op with a scalar right operand.
func binVecS[T number](op binOp, d, x []T, s T) {
	x = x[:len(d)]
	switch op {
	case opAdd:
		for i := range d {
			d[i] = x[i] + s
		}
	case opSub:
		for i := range d {
			d[i] = x[i] - s
		}
	case opMul:
		for i := range d {
			d[i] = x[i] * s
		}
	case opMaximum:
		for i := range d {
			d[i] = maxNaN(x[i], s)
		}
	case opMinimum:
		for i := range d {
			d[i] = minNaN(x[i], s)
		}
	default:
		for i := range d {
			d[i] = binElem(op, x[i], s)
		}
	}
}

func cmpElem[T number](op binOp, x, y T) bool {
	switch op {
	case opEq:
		return x == y
	case opNe:
		return x != y
	case opLt:
		return x < y
	case opLe:
		return x <= y
	case opGt:
		return x > y
	case opGe:
		return x >= y
	}
	panic("tensor: bad comparison " + op.String())
}

func cmpTyped[T number](op binOp, out, a, b *Tensor) {
	o, x, y := data[uint8](out), data[T](a), data[T](b)
	p := plan3(op.String(), out, a, b)
	n, so, sx, sy := p.n, p.inner[0], p.inner[1], p.inner[2]
	p.run(true, func(off *[maxOperands]int) {
		i, j, l := off[0], off[1], off[2]
		for e := 0; e < n; e++ {
			if cmpElem(op, x[j+e*sx], y[l+e*sy]) {
				o[i+e*so] = 1
			} else {
				o[i+e*so] = 0
			}
		}
	})
}

func logicTyped(op binOp, out, a, b *Tensor) {
	o, x, y := data[uint8](out), data[uint8](a), data[uint8](b)
	p := plan3(op.String(), out, a, b)
	n, so, sx, sy := p.n, p.inner[0], p.inner[1], p.inner[2]
	p.run(true, func(off *[maxOperands]int) {
		i, j, l := off[0], off[1], off[2]
		for e := 0; e < n; e++ {
			u, v := x[j+e*sx], y[l+e*sy]
			switch op {
			case opAnd:
				o[i+e*so] = u & v
			case opOr:
				o[i+e*so] = u | v
			default:
				o[i+e*so] = u ^ v
			}
		}
	})
}

// scalarOperand returns a 0-d tensor holding s in the type a binary op
// between t and a Go number should compute in: t's own type (so a float32
// tensor times 0.1 stays float32), or Float32 when t is an integer tensor
// and s is not integral.
func scalarOperand(t *Tensor, s float64) *Tensor {
	dt := t.dtype
	switch {
	case dt.IsHalf():
		dt = Float32
	case !dt.IsFloat() && s != math.Trunc(s):
		dt = Float32
	case dt == Bool:
		dt = Int64
	}
	return Scalar(s, dt)
}

// binaryScalarRaw computes op(t, s) for a Go number s.
func binaryScalarRaw(op binOp, t *Tensor, s float64) *Tensor {
	r := binaryRaw(op, t, scalarOperand(t, s))
	if t.dtype.IsHalf() && !op.isCmp() {
		r = r.castRaw(t.dtype)
	}
	return r
}

// ---- differentiable binary ops ----

// Add returns a + b (broadcasting).
func (a *Tensor) Add(b *Tensor) *Tensor {
	out := binaryRaw(opAdd, a, b)
	if track2(out, a, b) {
		out.attach("Add", func(g *Tensor) []*Tensor { return []*Tensor{g, g} }, a, b)
	}
	return out
}

// Sub returns a − b (broadcasting).
func (a *Tensor) Sub(b *Tensor) *Tensor {
	out := binaryRaw(opSub, a, b)
	if track2(out, a, b) {
		out.attach("Sub", func(g *Tensor) []*Tensor {
			var gb *Tensor
			if needs(b) {
				gb = unaryRaw(opNeg, g, 0, 0)
			}
			return []*Tensor{g, gb}
		}, a, b)
	}
	return out
}

// Mul returns a · b elementwise (broadcasting).
func (a *Tensor) Mul(b *Tensor) *Tensor {
	out := binaryRaw(opMul, a, b)
	if track2(out, a, b) {
		out.attach("Mul", func(g *Tensor) []*Tensor {
			var ga, gb *Tensor
			if needs(a) {
				ga = binaryRaw(opMul, g, b)
			}
			if needs(b) {
				gb = binaryRaw(opMul, g, a)
			}
			return []*Tensor{ga, gb}
		}, a, b)
	}
	return out
}

// Div returns a / b elementwise (broadcasting). Integer inputs give a
// Float32 result (true division, as in PyTorch).
func (a *Tensor) Div(b *Tensor) *Tensor {
	out := binaryRaw(opDiv, a, b)
	if track2(out, a, b) {
		out.attach("Div", func(g *Tensor) []*Tensor {
			ga := binaryRaw(opDiv, g, b) // ∂/∂a = 1/b
			var gb *Tensor
			if needs(b) { // ∂/∂b = −a/b² = −out/b
				gb = unaryRaw(opNeg, binaryRaw(opMul, ga, out), 0, 0)
			}
			if !needs(a) {
				ga = nil
			}
			return []*Tensor{ga, gb}
		}, a, b)
	}
	return out
}

// Pow returns a raised to b elementwise (broadcasting).
func (a *Tensor) Pow(b *Tensor) *Tensor {
	out := binaryRaw(opPow, a, b)
	if track2(out, a, b) {
		out.attach("Pow", func(g *Tensor) []*Tensor {
			var ga, gb *Tensor
			if needs(a) { // b·a^(b−1)
				ga = binaryRaw(opMul, g, binaryRaw(opMul, b, binaryRaw(opPow, a, binaryScalarRaw(opSub, b, 1))))
			}
			if needs(b) { // a^b·ln a, taken as 0 where a == 0
				lg := unaryRaw(opLog, a, 0, 0)
				lg = whereRaw(binaryScalarRaw(opEq, a, 0), Scalar(0, lg.dtype), lg)
				gb = binaryRaw(opMul, g, binaryRaw(opMul, out, lg))
			}
			return []*Tensor{ga, gb}
		}, a, b)
	}
	return out
}

// maxMinGrad splits g between a and b for Maximum (win = opGt) or Minimum
// (win = opLt) as PyTorch does: each side gets g·(1 − [the other wins] −
// ½[tie]), so ties share g equally and where either is NaN (no win, no
// tie) both get all of it.
func maxMinGrad(win binOp, g, a, b *Tensor) (ga, gb *Tensor) {
	tie := binaryScalarRaw(opMul, binaryRaw(opEq, a, b).castRaw(g.dtype), 0.5)
	share := func(other, self *Tensor) *Tensor {
		lost := binaryRaw(opAdd, binaryRaw(win, other, self).castRaw(g.dtype), tie)
		return binaryRaw(opSub, g, binaryRaw(opMul, g, lost))
	}
	return share(b, a), share(a, b)
}

// Maximum returns the elementwise larger of a and b (NaN if either is NaN).
func (a *Tensor) Maximum(b *Tensor) *Tensor {
	out := binaryRaw(opMaximum, a, b)
	if track2(out, a, b) {
		out.attach("Maximum", func(g *Tensor) []*Tensor {
			ga, gb := maxMinGrad(opGt, g, a, b)
			return []*Tensor{ga, gb}
		}, a, b)
	}
	return out
}

// Minimum returns the elementwise smaller of a and b (NaN if either is NaN).
func (a *Tensor) Minimum(b *Tensor) *Tensor {
	out := binaryRaw(opMinimum, a, b)
	if track2(out, a, b) {
		out.attach("Minimum", func(g *Tensor) []*Tensor {
			ga, gb := maxMinGrad(opLt, g, a, b)
			return []*Tensor{ga, gb}
		}, a, b)
	}
	return out
}

// AddScalar returns t + s.
func (t *Tensor) AddScalar(s float64) *Tensor {
	out := binaryScalarRaw(opAdd, t, s)
	if track1(out, t) {
		out.attach("AddScalar", func(g *Tensor) []*Tensor { return []*Tensor{g} }, t)
	}
	return out
}

// SubScalar returns t − s.
func (t *Tensor) SubScalar(s float64) *Tensor { return t.AddScalar(-s) }

// RSubScalar returns s − t.
func (t *Tensor) RSubScalar(s float64) *Tensor { return t.Neg().AddScalar(s) }

// MulScalar returns t · s.
func (t *Tensor) MulScalar(s float64) *Tensor {
	out := binaryScalarRaw(opMul, t, s)
	if track1(out, t) {
		out.attach("MulScalar", func(g *Tensor) []*Tensor { return []*Tensor{binaryScalarRaw(opMul, g, s)} }, t)
	}
	return out
}

// DivScalar returns t / s (computed as t · (1/s) for float tensors).
func (t *Tensor) DivScalar(s float64) *Tensor {
	if t.dtype.IsFloat() {
		return t.MulScalar(1 / s)
	}
	return t.To(Float32).MulScalar(1 / s)
}

// Add returns a + b. Package functions mirror the methods for readability
// in formulas.
func Add(a, b *Tensor) *Tensor { return a.Add(b) }

// Sub returns a − b.
func Sub(a, b *Tensor) *Tensor { return a.Sub(b) }

// Mul returns a · b elementwise.
func Mul(a, b *Tensor) *Tensor { return a.Mul(b) }

// Div returns a / b elementwise.
func Div(a, b *Tensor) *Tensor { return a.Div(b) }

// Maximum returns the elementwise maximum of a and b.
func Maximum(a, b *Tensor) *Tensor { return a.Maximum(b) }

// Minimum returns the elementwise minimum of a and b.
func Minimum(a, b *Tensor) *Tensor { return a.Minimum(b) }

// ---- comparisons and selection (not differentiable except Where) ----

func compare(op binOp, a, b *Tensor) *Tensor { return inherit(binaryRaw(op, a, b), a, b) }

// Eq returns the Bool tensor a == b (broadcasting).
func (a *Tensor) Eq(b *Tensor) *Tensor { return compare(opEq, a, b) }

// Ne returns a != b.
func (a *Tensor) Ne(b *Tensor) *Tensor { return compare(opNe, a, b) }

// Lt returns a < b.
func (a *Tensor) Lt(b *Tensor) *Tensor { return compare(opLt, a, b) }

// Le returns a <= b.
func (a *Tensor) Le(b *Tensor) *Tensor { return compare(opLe, a, b) }

// Gt returns a > b.
func (a *Tensor) Gt(b *Tensor) *Tensor { return compare(opGt, a, b) }

// Ge returns a >= b.
func (a *Tensor) Ge(b *Tensor) *Tensor { return compare(opGe, a, b) }

// EqScalar returns t == s as a Bool tensor; likewise the other *Scalar
// comparisons.
func (t *Tensor) EqScalar(s float64) *Tensor { return inherit(binaryScalarRaw(opEq, t, s), t) }

// NeScalar returns t != s.
func (t *Tensor) NeScalar(s float64) *Tensor { return inherit(binaryScalarRaw(opNe, t, s), t) }

// LtScalar returns t < s.
func (t *Tensor) LtScalar(s float64) *Tensor { return inherit(binaryScalarRaw(opLt, t, s), t) }

// LeScalar returns t <= s.
func (t *Tensor) LeScalar(s float64) *Tensor { return inherit(binaryScalarRaw(opLe, t, s), t) }

// GtScalar returns t > s.
func (t *Tensor) GtScalar(s float64) *Tensor { return inherit(binaryScalarRaw(opGt, t, s), t) }

// GeScalar returns t >= s.
func (t *Tensor) GeScalar(s float64) *Tensor { return inherit(binaryScalarRaw(opGe, t, s), t) }

// LogicalAnd returns a && b for tensors taken as booleans (non-zero = true).
func (a *Tensor) LogicalAnd(b *Tensor) *Tensor { return inherit(binaryRaw(opAnd, a, b), a, b) }

// LogicalOr returns a || b.
func (a *Tensor) LogicalOr(b *Tensor) *Tensor { return inherit(binaryRaw(opOr, a, b), a, b) }

// LogicalXor returns a != b as booleans.
func (a *Tensor) LogicalXor(b *Tensor) *Tensor { return inherit(binaryRaw(opXor, a, b), a, b) }

// LogicalNot returns !t (t taken as booleans).
func (t *Tensor) LogicalNot() *Tensor { return inherit(binaryRaw(opXor, t, Scalar(1, Bool)), t) }

// whereRaw is Where without autograd.
func whereRaw(cond, a, b *Tensor) *Tensor {
	ct := PromoteTypes(a.dtype, b.dtype)
	a, b, cond = a.castRaw(ct), b.castRaw(ct), cond.castRaw(Bool)
	if ct.IsHalf() {
		return whereRaw(cond, a.castRaw(Float32), b.castRaw(Float32)).castRaw(ct)
	}
	shape := broadcastShapes("Where", broadcastShapes("Where", cond.shape, a.shape), b.shape)
	out := emptyUninit(ct, shape)
	switch ct {
	case Float32:
		whereTyped[float32](out, cond, a, b)
	case Float64:
		whereTyped[float64](out, cond, a, b)
	case Int64:
		whereTyped[int64](out, cond, a, b)
	case Int32:
		whereTyped[int32](out, cond, a, b)
	case Uint8, Bool:
		whereTyped[uint8](out, cond, a, b)
	default:
		panic(fmt.Sprintf("tensor: Where on %v", ct))
	}
	return out
}

func whereTyped[T number](out, cond, a, b *Tensor) {
	o, c, x, y := data[T](out), data[uint8](cond), data[T](a), data[T](b)
	p := plan4("Where", out, cond, a, b)
	n, so, sc, sx, sy := p.n, p.inner[0], p.inner[1], p.inner[2], p.inner[3]
	p.run(true, func(off *[maxOperands]int) {
		i, k, j, l := off[0], off[1], off[2], off[3]
		for e := 0; e < n; e++ {
			if c[k+e*sc] != 0 {
				o[i+e*so] = x[j+e*sx]
			} else {
				o[i+e*so] = y[l+e*sy]
			}
		}
	})
}

// Where returns elements of a where cond is true (non-zero) and of b
// elsewhere, broadcasting all three. Gradients flow to a and b.
func Where(cond, a, b *Tensor) *Tensor {
	out := whereRaw(cond, a, b)
	if track3(out, a, b, cond) {
		out.attach("Where", func(g *Tensor) []*Tensor {
			zero := Scalar(0, g.dtype)
			var ga, gb *Tensor
			if needs(a) {
				ga = whereRaw(cond, g, zero)
			}
			if needs(b) {
				gb = whereRaw(cond, zero, g)
			}
			return []*Tensor{ga, gb}
		}, a, b)
	}
	return out
}

// MaskedFill returns t with v wherever mask is true (mask broadcasts to t).
func (t *Tensor) MaskedFill(mask *Tensor, v float64) *Tensor {
	return Where(mask, scalarOperand(t, v).castRaw(t.dtype), t)
}
