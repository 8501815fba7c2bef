package kernel

import (
	"math"
	"unsafe"

	"github.com/fathom-ml/fathom/internal/cpufeat"
)

// Fused optimizer update loops (package optim runs them over its
// parameters): one pass over a parameter's contiguous storage, its
// gradient and its state buffers, with no temporaries. Each loop follows
// the order of operations of PyTorch 1.13's single-tensor implementation
// (torch/optim/*.py, _single_tensor_*), so float64 runs agree with PyTorch
// to rounding and float32 runs to a few ulps. Where PyTorch's vectorized
// kernels fuse a multiply-add (add_(x, alpha=a) is one FMA) the loops call
// fma, and the assembly does the same, so the vector and scalar paths give
// the same bits and a step does not depend on how it was split over cores. Hyperparameters arrive as
// float64 and are rounded to the parameter's type once per call, as
// PyTorch casts its Python-float scalars to the tensor's dtype.

// optimSIMD selects the float32 kernels (optim_amd64.go): the best level the
// CPU offers, Generic (the Go loops below) under the purego tag. Tests set
// it to each of optimVariants in turn to compare every variant against the
// Go reference.
var optimSIMD = cpufeat.Best()

const (
	simdNone   = cpufeat.Generic
	simdAVX2   = cpufeat.AVX2FMA
	simdAVX512 = cpufeat.AVX512
)

// optimVariants lists the variants this CPU can run, for tests.
func optimVariants() []cpufeat.Level { return cpufeat.Levels() }

func sqrtT[T float](x T) T { return T(math.Sqrt(float64(x))) }

// flushSub returns +0 for an x whose magnitude is below the smallest
// normal number of T, and x otherwise (NaN included). The loops apply it
// to the state that decays geometrically (Adam's moments, SGD's momentum
// buffer) as the assembly does: a moment whose gradient stays zero (a
// dead ReLU unit's weights) would otherwise spend hundreds of steps as a
// subnormal number, on which every instruction takes a microcode assist
// — Adam over such state runs an order of magnitude slower. The weights
// do not change: an update from a subnormal moment is far below half an
// ulp of any normal parameter.
func flushSub[T float](x T) T {
	mn := 0x1p-126
	if unsafe.Sizeof(x) == 8 {
		mn = 0x1p-1022
	}
	if x < T(mn) && x > -T(mn) {
		return 0
	}
	return x
}

// fma returns a·b + c rounded once, as the vector FMA instructions of
// the assembly and PyTorch's vectorized add(…, alpha) compute it. (For
// float32 the float64 FMA is rounded a second time to float32; the two
// roundings differ from one only in rare halfway cases.)
func fma[T float](a, b, c T) T { return T(math.FMA(float64(a), float64(b), float64(c))) }

// SGDArgs are the scalars of one SGD update of one parameter.
type SGDArgs struct {
	LR, WeightDecay, Momentum, Dampening float64
	Nesterov, Maximize                   bool
	// First is true on the step that creates the momentum buffer, which
	// PyTorch initializes to the (decayed) gradient itself.
	First bool
}

// Consts returns the scalars of the float32 kernels, in the order of the
// assembly: μ, 1−τ, −lr.
func (a SGDArgs) Consts() [3]float32 {
	return [3]float32{float32(a.Momentum), float32(1 - a.Dampening), float32(-a.LR)}
}

// SGDUpdate applies SGD (torch.optim.SGD):
//
//	d ← ±g + λ·p;  b ← μ·b + (1−τ)·d (b ← d on the first step);
//	d ← d + μ·b (Nesterov) or d ← b;  p ← p − lr·d.
//
// buf is ignored when momentum is 0.
func SGDUpdate[T float](p, g, buf []T, a SGDArgs) {
	n := len(p)
	g = g[:n]
	lr, wd, mu, damp := T(a.LR), T(a.WeightDecay), T(a.Momentum), T(1-a.Dampening)
	sign := T(1)
	if a.Maximize {
		sign = -1
	}
	if a.Momentum == 0 {
		if wd == 0 {
			for i := range p {
				p[i] = fma(-lr, sign*g[i], p[i])
			}
			return
		}
		for i := range p {
			p[i] = fma(-lr, fma(wd, p[i], sign*g[i]), p[i])
		}
		return
	}
	buf = buf[:n]
	switch {
	case a.First && !a.Nesterov:
		for i := range p {
			d := fma(wd, p[i], sign*g[i])
			buf[i] = flushSub(d)
			p[i] = fma(-lr, d, p[i])
		}
	case a.First && a.Nesterov:
		for i := range p {
			d := fma(wd, p[i], sign*g[i])
			buf[i] = flushSub(d)
			p[i] = fma(-lr, fma(mu, d, d), p[i])
		}
	case !a.Nesterov && wd == 0 && !a.Maximize:
		// The common case: heavy-ball momentum without decay.
		for i := range p {
			b := flushSub(fma(damp, g[i], buf[i]*mu))
			buf[i] = b
			p[i] = fma(-lr, b, p[i])
		}
	case !a.Nesterov:
		for i := range p {
			d := fma(wd, p[i], sign*g[i])
			b := flushSub(fma(damp, d, buf[i]*mu))
			buf[i] = b
			p[i] = fma(-lr, b, p[i])
		}
	default:
		for i := range p {
			d := fma(wd, p[i], sign*g[i])
			b := flushSub(fma(damp, d, buf[i]*mu))
			buf[i] = b
			p[i] = fma(-lr, fma(mu, b, d), p[i])
		}
	}
}

// AdamArgs are the scalars of one Adam or AdamW update of one parameter.
type AdamArgs struct {
	Beta1, Beta2, Eps float64
	// WeightDecay is the L2 coefficient added to the gradient (Adam);
	// Decay multiplies the parameter before the update (AdamW: 1−lr·λ,
	// 1 for Adam).
	WeightDecay, Decay float64
	// StepSize is lr/(1−β1^t); BC2Sqrt is √(1−β2^t).
	StepSize, BC2Sqrt float64
	AMSGrad, Maximize bool
}

// Plain reports whether the update is Adam without weight decay,
// minimizing: the fast path.
func (a AdamArgs) Plain() bool {
	return a.Decay == 1 && a.WeightDecay == 0 && !a.Maximize
}

// Consts returns the scalars of the float32 kernels, in the order of the
// assembly (see _asm/optim).
func (a AdamArgs) Consts() [9]float32 {
	sign := float32(1)
	if a.Maximize {
		sign = -1
	}
	return [9]float32{float32(a.Beta1), float32(1 - a.Beta1), float32(a.Beta2), float32(1 - a.Beta2),
		float32(-a.StepSize * a.BC2Sqrt), float32(a.Eps * a.BC2Sqrt), float32(a.Decay), float32(a.WeightDecay), sign}
}

// AdamUpdate applies Adam (Kingma & Ba, 2015, Algorithm 1, with PyTorch's
// placement of ε) or AdamW (Loshchilov & Hutter, 2019, decoupled decay):
//
//	x ← decay·p;  g ← ±g + λ·x;
//	m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;  v̂ ← max(v̂, v) (AMSGrad);
//	p ← x − stepSize · m / (√v / √(1−β2^t) + ε).
//
// The last line is evaluated as p ← x + (s′·m)/(√v + ε′) with
// s′ = −stepSize·√(1−β2^t) and ε′ = ε·√(1−β2^t): the same value with one
// division per element instead of two. vmax is used only with amsgrad.
func AdamUpdate[T float](p, g, m, v, vmax []T, a AdamArgs) {
	n := len(p)
	g, m, v = g[:n], m[:n], v[:n]
	b1, omb1 := T(a.Beta1), T(1-a.Beta1)
	b2, omb2 := T(a.Beta2), T(1-a.Beta2)
	wd, decay := T(a.WeightDecay), T(a.Decay)
	step, eps := T(-a.StepSize*a.BC2Sqrt), T(a.Eps*a.BC2Sqrt)
	sign := T(1)
	if a.Maximize {
		sign = -1
	}
	if a.AMSGrad {
		vmax = vmax[:n]
		for i := range p {
			x := p[i] * decay
			gi := fma(wd, x, sign*g[i])
			mi := flushSub(fma(omb1, gi, m[i]*b1))
			vi := flushSub(fma(omb2*gi, gi, v[i]*b2))
			m[i], v[i] = mi, vi
			vm := max(vmax[i], vi)
			vmax[i] = vm
			p[i] = x + step*mi/(sqrtT(vm)+eps)
		}
		return
	}
	if a.Plain() {
		for i := range p {
			gi := g[i]
			mi := flushSub(fma(omb1, gi, m[i]*b1))
			vi := flushSub(fma(omb2*gi, gi, v[i]*b2))
			m[i], v[i] = mi, vi
			p[i] += step * mi / (sqrtT(vi) + eps)
		}
		return
	}
	for i := range p {
		x := p[i] * decay
		gi := fma(wd, x, sign*g[i])
		mi := flushSub(fma(omb1, gi, m[i]*b1))
		vi := flushSub(fma(omb2*gi, gi, v[i]*b2))
		m[i], v[i] = mi, vi
		p[i] = x + step*mi/(sqrtT(vi)+eps)
	}
}

// RMSpropArgs are the scalars of one RMSprop update of one parameter.
type RMSpropArgs struct {
	LR, Alpha, Eps, WeightDecay, Momentum float64
	Centered, Maximize                    bool
}

// RMSpropUpdate applies RMSprop (Hinton, Lecture 6e of "Neural Networks
// for Machine Learning", 2012; centered variant of Graves, 2013, eq. 38–45),
// as torch.optim.RMSprop:
//
//	g ← ±g + λ·p;  s ← α·s + (1−α)·g²;  ḡ ← α·ḡ + (1−α)·g (centered);
//	a ← √(s − ḡ²) + ε (centered) or √s + ε;
//	b ← μ·b + g/a, p ← p − lr·b (momentum) or p ← p − lr·g/a.
func RMSpropUpdate[T float](p, g, sq, gavg, buf []T, a RMSpropArgs) {
	n := len(p)
	g, sq = g[:n], sq[:n]
	alpha, oma := T(a.Alpha), T(1-a.Alpha)
	lr, eps, wd, mu := T(a.LR), T(a.Eps), T(a.WeightDecay), T(a.Momentum)
	sign := T(1)
	if a.Maximize {
		sign = -1
	}
	if a.Centered {
		gavg = gavg[:n]
	}
	if a.Momentum > 0 {
		buf = buf[:n]
	}
	for i := range p {
		gi := fma(wd, p[i], sign*g[i])
		s := fma(oma*gi, gi, sq[i]*alpha)
		sq[i] = s
		var avg T
		if a.Centered {
			ga := fma(oma, gi, gavg[i]*alpha)
			gavg[i] = ga
			avg = sqrtT(s-ga*ga) + eps
		} else {
			avg = sqrtT(s) + eps
		}
		if a.Momentum > 0 {
			b := buf[i]*mu + gi/avg
			buf[i] = b
			p[i] = fma(-lr, b, p[i])
		} else {
			p[i] -= lr * gi / avg
		}
	}
}

// AdagradUpdate applies Adagrad (Duchi, Hazan & Singer, 2011) as
// torch.optim.Adagrad, with clr = lr/(1+(t−1)·lr_decay):
//
//	g ← ±g + λ·p;  s ← s + g²;  p ← p − clr·g/(√s + ε).
func AdagradUpdate[T float](p, g, sum []T, clr, eps, weightDecay float64, maximize bool) {
	n := len(p)
	g, sum = g[:n], sum[:n]
	step, e, wd := T(-clr), T(eps), T(weightDecay)
	sign := T(1)
	if maximize {
		sign = -1
	}
	for i := range p {
		gi := fma(wd, p[i], sign*g[i])
		s := fma(gi, gi, sum[i])
		sum[i] = s
		p[i] += step * gi / (sqrtT(s) + e)
	}
}
