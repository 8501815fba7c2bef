package tensor

import (
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// unOp names an elementwise unary op; p1 and p2 are its parameters.
type unOp uint8

const (
	opNeg unOp = iota
	opAbs
	opFloor
	opCeil
	opRound
	opSign
	opExp
	opLog
	opSqrt
	opRsqrt
	opSin
	opCos
	opTanh
	opSigmoid
	opRelu
	opLeakyRelu // p1 = negative slope
	opElu       // p1 = alpha
	opSoftplus  // p1 = beta, p2 = threshold
	opSilu
	opGelu     // exact: x·Φ(x)
	opGeluTanh // tanh approximation
	opClamp    // p1 = min, p2 = max
	opPowS     // p1 = exponent
	opReciprocal
	opSquare
	opLog1p
	opExpm1
	opErf
	opLogSigmoid
)

var unNames = [...]string{"Neg", "Abs", "Floor", "Ceil", "Round", "Sign", "Exp", "Log", "Sqrt", "Rsqrt", "Sin", "Cos", "Tanh", "Sigmoid", "Relu", "LeakyRelu", "Elu", "Softplus", "Silu", "Gelu", "GeluTanh", "Clamp", "PowScalar", "Reciprocal", "Square", "Log1p", "Expm1", "Erf", "LogSigmoid"}

func (op unOp) String() string { return unNames[op] }

// keepsIntegers reports whether op maps integers to integers (and so runs
// on integer tensors without promotion to Float32).
func (op unOp) keepsIntegers() bool {
	switch op {
	case opNeg, opAbs, opFloor, opCeil, opRound, opSign, opRelu, opClamp, opSquare:
		return true
	}
	return false
}

// piecewiseConstant reports whether op's derivative is zero almost everywhere.
func (op unOp) piecewiseConstant() bool {
	return op == opFloor || op == opCeil || op == opRound || op == opSign
}

// gradUsesX reports whether op's derivative is computed from its input
// (else from its output).
func (op unOp) gradUsesX() bool {
	switch op {
	case opExp, opSqrt, opRsqrt, opTanh, opSigmoid, opReciprocal, opExpm1:
		return false
	}
	return true
}

const (
	sqrt2       = math.Sqrt2
	sqrt2OverPi = 0.7978845608028654 // √(2/π)
	geluCoef    = 0.044715
	invSqrt2Pi  = 0.3989422804014327 // 1/√(2π)
)

// sigmoid is the logistic function, computed without overflow.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// unaryElem is the scalar definition of every unary op, in float64.
func unaryElem(op unOp, x, p1, p2 float64) float64 {
	switch op {
	case opNeg:
		return -x
	case opAbs:
		return math.Abs(x)
	case opFloor:
		return math.Floor(x)
	case opCeil:
		return math.Ceil(x)
	case opRound:
		return math.RoundToEven(x)
	case opSign:
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x // ±0 and NaN stay as they are
	case opExp:
		return math.Exp(x)
	case opLog:
		return math.Log(x)
	case opSqrt:
		return math.Sqrt(x)
	case opRsqrt:
		return 1 / math.Sqrt(x)
	case opSin:
		return math.Sin(x)
	case opCos:
		return math.Cos(x)
	case opTanh:
		return math.Tanh(x)
	case opSigmoid:
		return sigmoid(x)
	case opRelu: // NaN stays NaN and −0 stays −0, as in torch.relu
		if x < 0 {
			return 0
		}
		return x
	case opLeakyRelu:
		if x > 0 {
			return x
		}
		return x * p1
	case opElu:
		if x > 0 {
			return x
		}
		return p1 * math.Expm1(x)
	case opSoftplus:
		if x*p1 > p2 {
			return x
		}
		return math.Log1p(math.Exp(x*p1)) / p1
	case opSilu:
		return x * sigmoid(x)
	case opGelu:
		return 0.5 * x * (1 + math.Erf(x/sqrt2))
	case opGeluTanh:
		return 0.5 * x * (1 + math.Tanh(sqrt2OverPi*(x+geluCoef*x*x*x)))
	case opClamp:
		if x != x {
			return x
		}
		return math.Min(math.Max(x, p1), p2)
	case opPowS:
		switch p1 {
		case 2:
			return x * x
		case 1:
			return x
		case 0.5:
			return math.Sqrt(x)
		}
		return math.Pow(x, p1)
	case opReciprocal:
		return 1 / x
	case opSquare:
		return x * x
	case opLog1p:
		return math.Log1p(x)
	case opExpm1:
		return math.Expm1(x)
	case opErf:
		return math.Erf(x)
	case opLogSigmoid: // min(x,0) − log1p(e^−|x|)
		return math.Min(x, 0) - math.Log1p(math.Exp(-math.Abs(x)))
	}
	panic("tensor: bad unary op")
}

// unaryGradElem returns ∂op/∂x at input x with output y, times g.
func unaryGradElem(op unOp, g, x, y, p1, p2 float64) float64 {
	switch op {
	case opNeg:
		return -g
	case opAbs:
		switch {
		case x > 0:
			return g
		case x < 0:
			return -g
		}
		return 0
	case opFloor, opCeil, opRound, opSign:
		return 0
	case opExp:
		return g * y
	case opLog:
		return g / x
	case opSqrt:
		return g * 0.5 / y
	case opRsqrt:
		return -0.5 * g * y * y * y
	case opSin:
		return g * math.Cos(x)
	case opCos:
		return -g * math.Sin(x)
	case opTanh:
		return g * (1 - y*y)
	case opSigmoid:
		return g * y * (1 - y)
	case opRelu: // PyTorch's threshold_backward: a NaN passes g
		if x <= 0 {
			return 0
		}
		return g
	case opLeakyRelu:
		if x > 0 {
			return g
		}
		return g * p1
	case opElu: // as PyTorch: a NaN passes g
		if x <= 0 {
			return g * p1 * math.Exp(x)
		}
		return g
	case opSoftplus:
		if x*p1 > p2 {
			return g
		}
		return g * sigmoid(x*p1)
	case opSilu:
		s := sigmoid(x)
		return g * s * (1 + x*(1-s))
	case opGelu: // Φ(x) + x·φ(x)
		return g * (0.5*(1+math.Erf(x/sqrt2)) + x*invSqrt2Pi*math.Exp(-0.5*x*x))
	case opGeluTanh:
		u := sqrt2OverPi * (x + geluCoef*x*x*x)
		t := math.Tanh(u)
		du := sqrt2OverPi * (1 + 3*geluCoef*x*x)
		return g * (0.5*(1+t) + 0.5*x*(1-t*t)*du)
	case opClamp: // gradient passes where min ≤ x ≤ max, as in PyTorch
		if x >= p1 && x <= p2 {
			return g
		}
		return 0
	case opPowS:
		if p1 == 0 {
			return 0
		}
		return g * p1 * math.Pow(x, p1-1)
	case opReciprocal:
		return -g * y * y
	case opSquare:
		return 2 * g * x
	case opLog1p:
		return g / (1 + x)
	case opExpm1:
		return g * (y + 1)
	case opErf:
		return g * 2 / math.SqrtPi * math.Exp(-x*x)
	case opLogSigmoid:
		return g * sigmoid(-x)
	}
	panic("tensor: bad unary op")
}

// unaryVec computes op over contiguous float slices. The common activations
// have tight loops in T (float32 never goes through float64 where the
// result would be the same); the rest use the float64 definition.
func unaryVec[T float](op unOp, d, x []T, p1, p2 float64) {
	x = x[:len(d)]
	switch op {
	case opNeg:
		for i := range d {
			d[i] = -x[i]
		}
	case opAbs:
		for i := range d {
			d[i] = T(math.Abs(float64(x[i])))
		}
	case opRelu:
		for i := range d {
			if v := x[i]; v < 0 {
				d[i] = 0
			} else {
				d[i] = v
			}
		}
	case opLeakyRelu:
		s := T(p1)
		for i := range d {
			if v := x[i]; v > 0 {
				d[i] = v
			} else {
				d[i] = v * s
			}
		}
	case opSquare:
		for i := range d {
			d[i] = x[i] * x[i]
		}
	case opReciprocal:
		for i := range d {
			d[i] = 1 / x[i]
		}
	case opClamp:
		lo, hi := T(p1), T(p2)
		for i := range d {
			v := x[i]
			if v < lo {
				v = lo
			} else if v > hi {
				v = hi
			}
			d[i] = v
		}
	default:
		for i := range d {
			d[i] = T(unaryElem(op, float64(x[i]), p1, p2))
		}
	}
}

// unaryIntVec computes the integer-preserving ops on integer slices.
func unaryIntVec[T number](op unOp, d, x []T, p1, p2 float64) {
	x = x[:len(d)]
	for i := range d {
		v := x[i]
		switch op {
		case opNeg:
			v = -v
		case opAbs:
			if v < 0 {
				v = -v
			}
		case opSign:
			switch {
			case v > 0:
				v = 1
			case v < 0:
				one := T(1)
				v = -one
			}
		case opRelu:
			if v < 0 {
				v = 0
			}
		case opClamp:
			if float64(v) < p1 {
				v = T(math.Ceil(p1))
			} else if float64(v) > p2 {
				v = T(math.Floor(p2))
			}
		case opSquare:
			v *= v
		}
		d[i] = v
	}
}

// unaryF32Kernel returns package kernel's vector version of op, if any.
func unaryF32Kernel(op unOp) func(dst, x []float32) {
	switch op {
	case opExp:
		return kernel.ExpF32
	case opSigmoid:
		return kernel.SigmoidF32
	case opTanh:
		return kernel.TanhF32
	case opLog:
		return kernel.LogF32
	}
	return nil
}

// unaryRaw applies op without autograd. Integer inputs are promoted to
// Float32 unless op keeps integers.
func unaryRaw(op unOp, t *Tensor, p1, p2 float64) *Tensor {
	dt := t.dtype
	switch {
	case dt.IsHalf():
		return unaryRaw(op, t.castRaw(Float32), p1, p2).castRaw(dt)
	case !dt.IsFloat() && !op.keepsIntegers():
		return unaryRaw(op, t.castRaw(Float32), p1, p2)
	case dt == Bool:
		return unaryRaw(op, t.castRaw(Int64), p1, p2)
	}
	x := t.contiguousRaw()
	out := emptyUninit(dt, t.shape)
	n := out.Numel()
	switch dt {
	case Float32:
		d, s := flat[float32](out), flat[float32](x)
		if f := unaryF32Kernel(op); f != nil {
			f(d, s)
			return out
		}
		if op == opRelu {
			kernel.ReluF32(d, s)
			return out
		}
		parallelChunks(n, func(lo, hi int) { unaryVec(op, d[lo:hi], s[lo:hi], p1, p2) })
	case Float64:
		d, s := flat[float64](out), flat[float64](x)
		parallelChunks(n, func(lo, hi int) { unaryVec(op, d[lo:hi], s[lo:hi], p1, p2) })
	case Int64:
		unaryIntVec(op, flat[int64](out), flat[int64](x), p1, p2)
	case Int32:
		unaryIntVec(op, flat[int32](out), flat[int32](x), p1, p2)
	case Uint8:
		unaryIntVec(op, flat[uint8](out), flat[uint8](x), p1, p2)
	}
	return out
}

// unaryGradRaw returns g·op'(x) given the op's input x and output y.
func unaryGradRaw(op unOp, g, x, y *Tensor, p1, p2 float64) *Tensor {
	dt := x.dtype
	if op.piecewiseConstant() {
		return empty(dt, x.shape)
	}
	if dt.IsHalf() {
		return unaryGradRaw(op, g.castRaw(Float32), x.castRaw(Float32), y.castRaw(Float32), p1, p2).castRaw(dt)
	}
	g = g.castRaw(dt).contiguousRaw()
	src := y
	if op.gradUsesX() {
		src = x
	}
	src = src.contiguousRaw()
	out := emptyUninit(dt, x.shape)
	n := out.Numel()
	switch dt {
	case Float32:
		d, gs, ss := flat[float32](out), flat[float32](g), flat[float32](src)
		if op == opRelu {
			kernel.ReluBackwardF32(d, gs, ss)
			return out
		}
		parallelChunks(n, func(lo, hi int) { unaryGradVec(op, d[lo:hi], gs[lo:hi], ss[lo:hi], p1, p2, op.gradUsesX()) })
	case Float64:
		d, gs, ss := flat[float64](out), flat[float64](g), flat[float64](src)
		parallelChunks(n, func(lo, hi int) { unaryGradVec(op, d[lo:hi], gs[lo:hi], ss[lo:hi], p1, p2, op.gradUsesX()) })
	}
	return out
}

// unaryGradVec computes the gradient over contiguous slices; s holds the
// op's input when usesX, else its output.
func unaryGradVec[T float](op unOp, d, g, s []T, p1, p2 float64, usesX bool) {
	g, s = g[:len(d)], s[:len(d)]
	switch op {
	case opTanh:
		for i := range d {
			d[i] = g[i] * (1 - s[i]*s[i])
		}
	case opSigmoid:
		for i := range d {
			d[i] = g[i] * s[i] * (1 - s[i])
		}
	case opExp:
		for i := range d {
			d[i] = g[i] * s[i]
		}
	case opRelu:
		reluMask(d, g, s)
	default:
		for i := range d {
			if usesX {
				d[i] = T(unaryGradElem(op, float64(g[i]), float64(s[i]), 0, p1, p2))
			} else {
				d[i] = T(unaryGradElem(op, float64(g[i]), 0, float64(s[i]), p1, p2))
			}
		}
	}
}

// unary applies op and records its gradient.
func (t *Tensor) unary(op unOp, p1, p2 float64) *Tensor {
	out := unaryRaw(op, t, p1, p2)
	if track1(out, t) {
		out.attach(op.String(), func(g *Tensor) []*Tensor {
			return []*Tensor{unaryGradRaw(op, g, t, out, p1, p2)}
		}, t)
	}
	return out
}

// Neg returns −t.
func (t *Tensor) Neg() *Tensor { return t.unary(opNeg, 0, 0) }

// Abs returns |t| (gradient 0 at 0).
func (t *Tensor) Abs() *Tensor { return t.unary(opAbs, 0, 0) }

// Floor rounds down (gradient 0).
func (t *Tensor) Floor() *Tensor { return t.unary(opFloor, 0, 0) }

// Ceil rounds up (gradient 0).
func (t *Tensor) Ceil() *Tensor { return t.unary(opCeil, 0, 0) }

// Round rounds half to even, as torch.round (gradient 0).
func (t *Tensor) Round() *Tensor { return t.unary(opRound, 0, 0) }

// Sign returns −1, 0 or 1 (gradient 0).
func (t *Tensor) Sign() *Tensor { return t.unary(opSign, 0, 0) }

// Exp returns eᵗ.
func (t *Tensor) Exp() *Tensor { return t.unary(opExp, 0, 0) }

// Log returns the natural logarithm.
func (t *Tensor) Log() *Tensor { return t.unary(opLog, 0, 0) }

// Log1p returns ln(1+t), accurate for small t.
func (t *Tensor) Log1p() *Tensor { return t.unary(opLog1p, 0, 0) }

// Expm1 returns eᵗ−1, accurate for small t.
func (t *Tensor) Expm1() *Tensor { return t.unary(opExpm1, 0, 0) }

// Sqrt returns √t.
func (t *Tensor) Sqrt() *Tensor { return t.unary(opSqrt, 0, 0) }

// Rsqrt returns 1/√t.
func (t *Tensor) Rsqrt() *Tensor { return t.unary(opRsqrt, 0, 0) }

// Reciprocal returns 1/t.
func (t *Tensor) Reciprocal() *Tensor { return t.unary(opReciprocal, 0, 0) }

// Square returns t².
func (t *Tensor) Square() *Tensor { return t.unary(opSquare, 0, 0) }

// PowScalar returns tᵖ.
func (t *Tensor) PowScalar(p float64) *Tensor { return t.unary(opPowS, p, 0) }

// Sin returns sin t.
func (t *Tensor) Sin() *Tensor { return t.unary(opSin, 0, 0) }

// Cos returns cos t.
func (t *Tensor) Cos() *Tensor { return t.unary(opCos, 0, 0) }

// Erf returns the error function of t.
func (t *Tensor) Erf() *Tensor { return t.unary(opErf, 0, 0) }

// Tanh returns tanh t.
func (t *Tensor) Tanh() *Tensor { return t.unary(opTanh, 0, 0) }

// Sigmoid returns 1/(1+e⁻ᵗ).
func (t *Tensor) Sigmoid() *Tensor { return t.unary(opSigmoid, 0, 0) }

// LogSigmoid returns ln σ(t), computed without overflow.
func (t *Tensor) LogSigmoid() *Tensor { return t.unary(opLogSigmoid, 0, 0) }

// Relu returns 0 where t < 0 and t elsewhere: NaN propagates and −0 stays
// −0, as in torch.relu. The gradient is 0 where t ≤ 0 and passes at NaN.
func (t *Tensor) Relu() *Tensor { return t.unary(opRelu, 0, 0) }

// LeakyRelu returns t where t > 0 and slope·t elsewhere.
func (t *Tensor) LeakyRelu(slope float64) *Tensor { return t.unary(opLeakyRelu, slope, 0) }

// Elu returns t where t > 0 and alpha·(eᵗ−1) elsewhere.
func (t *Tensor) Elu(alpha float64) *Tensor { return t.unary(opElu, alpha, 0) }

// Softplus returns ln(1+e^(beta·t))/beta, or t itself where beta·t >
// threshold (PyTorch's defaults are beta 1, threshold 20).
func (t *Tensor) Softplus(beta, threshold float64) *Tensor {
	return t.unary(opSoftplus, beta, threshold)
}

// Silu returns t·σ(t) (also called Swish).
func (t *Tensor) Silu() *Tensor { return t.unary(opSilu, 0, 0) }

// Swish is Silu.
func (t *Tensor) Swish() *Tensor { return t.Silu() }

// Gelu returns the exact GELU t·Φ(t) (Hendrycks & Gimpel 2016), Φ the
// standard normal CDF.
func (t *Tensor) Gelu() *Tensor { return t.unary(opGelu, 0, 0) }

// GeluTanh returns the tanh approximation of GELU:
// 0.5·t·(1+tanh(√(2/π)·(t+0.044715·t³))) (PyTorch's approximate="tanh").
func (t *Tensor) GeluTanh() *Tensor { return t.unary(opGeluTanh, 0, 0) }

// Clamp limits t to [lo, hi]; use ±math.Inf(1) for a one-sided clamp. The
// gradient passes where lo ≤ t ≤ hi.
func (t *Tensor) Clamp(lo, hi float64) *Tensor { return t.unary(opClamp, lo, hi) }
