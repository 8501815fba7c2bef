package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/tensor"
)

// Losses follow PyTorch's definitions exactly (torch.nn.functional). Each
// computes a per-element loss ℓ and reduces it: ReduceMean (the default,
// the zero value) averages, ReduceSum adds, ReduceNone returns ℓ with the
// shape the formula gives. Input and target shapes must match where the
// formula pairs them; a mismatch panics with both shapes, since PyTorch's
// silent broadcasting there is a classic bug.

// Reduction selects how a loss reduces its per-element values.
type Reduction int

const (
	// ReduceMean averages (for weighted class losses: divides by the sum of
	// the weights of the counted targets).
	ReduceMean Reduction = iota
	// ReduceSum adds.
	ReduceSum
	// ReduceNone returns the per-element losses.
	ReduceNone
)

// ParseReduction maps "mean", "sum" and "none" to a Reduction.
func ParseReduction(s string) (Reduction, error) {
	switch s {
	case "mean", "":
		return ReduceMean, nil
	case "sum":
		return ReduceSum, nil
	case "none":
		return ReduceNone, nil
	}
	return 0, fmt.Errorf("unknown reduction %q (want mean, sum or none)", s)
}

func (r Reduction) String() string {
	switch r {
	case ReduceMean:
		return "mean"
	case ReduceSum:
		return "sum"
	case ReduceNone:
		return "none"
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

func reduce(l *tensor.Tensor, r Reduction) *tensor.Tensor {
	switch r {
	case ReduceMean:
		return l.MeanAll()
	case ReduceSum:
		return l.SumAll()
	case ReduceNone:
		return l
	}
	panic(fmt.Sprintf("nn: unknown reduction %d", int(r)))
}

func sameShapes(op string, a, b *tensor.Tensor) {
	if !slices.Equal(a.Shape(), b.Shape()) {
		panic(fmt.Sprintf("nn: %s: input %v and target %v differ in shape", op, a.Shape(), b.Shape()))
	}
}

// MSELoss is ℓ = (x − y)².
func MSELoss(input, target *tensor.Tensor, r Reduction) *tensor.Tensor {
	sameShapes("MSELoss", input, target)
	return reduce(input.Sub(target).Square(), r)
}

// L1Loss is ℓ = |x − y|.
func L1Loss(input, target *tensor.Tensor, r Reduction) *tensor.Tensor {
	sameShapes("L1Loss", input, target)
	return reduce(input.Sub(target).Abs(), r)
}

// HuberLoss is ℓ = ½d² if |d| < δ, else δ·(|d| − ½δ), with d = x − y
// (Huber, "Robust Estimation of a Location Parameter", 1964; PyTorch's
// default δ is 1).
func HuberLoss(input, target *tensor.Tensor, delta float64, r Reduction) *tensor.Tensor {
	sameShapes("HuberLoss", input, target)
	if delta <= 0 {
		panic(fmt.Sprintf("nn: HuberLoss: delta must be positive, got %g", delta))
	}
	d := input.Sub(target)
	a := d.Abs()
	quad := d.Square().MulScalar(0.5)
	lin := a.SubScalar(0.5 * delta).MulScalar(delta)
	return reduce(tensor.Where(a.LtScalar(delta), quad, lin), r)
}

// SmoothL1Loss is ℓ = ½d²/β if |d| < β, else |d| − ½β, with d = x − y
// (Girshick, "Fast R-CNN", 2015). β = 0 gives L1Loss; PyTorch's default β
// is 1, where it equals HuberLoss with δ = 1.
func SmoothL1Loss(input, target *tensor.Tensor, beta float64, r Reduction) *tensor.Tensor {
	sameShapes("SmoothL1Loss", input, target)
	if beta < 0 {
		panic(fmt.Sprintf("nn: SmoothL1Loss: beta must be non-negative, got %g", beta))
	}
	if beta == 0 {
		return L1Loss(input, target, r)
	}
	d := input.Sub(target)
	a := d.Abs()
	quad := d.Square().MulScalar(0.5 / beta)
	lin := a.SubScalar(0.5 * beta)
	return reduce(tensor.Where(a.LtScalar(beta), quad, lin), r)
}

// BCEOptions configures BCELoss and BCEWithLogitsLoss.
type BCEOptions struct {
	Reduction Reduction
	// Weight, if set, multiplies each element's loss (broadcast to the
	// input's shape).
	Weight *tensor.Tensor
	// PosWeight, if set (BCEWithLogitsLoss only), weighs the positive term,
	// broadcast along the last dim (one weight per class).
	PosWeight *tensor.Tensor
}

// BCELoss is the binary cross-entropy of probabilities x ∈ [0, 1] and
// targets y ∈ [0, 1]: ℓ = −w·(y·ln x + (1 − y)·ln(1 − x)), each logarithm
// clamped to ≥ −100 as PyTorch does so ℓ stays finite.
func BCELoss(input, target *tensor.Tensor, o BCEOptions) *tensor.Tensor {
	sameShapes("BCELoss", input, target)
	if o.PosWeight != nil {
		panic("nn: BCELoss has no pos_weight; use BCEWithLogitsLoss")
	}
	logx := input.Log().Clamp(-100, math.Inf(1))
	log1mx := input.RSubScalar(1).Log().Clamp(-100, math.Inf(1))
	l := target.Mul(logx).Add(target.RSubScalar(1).Mul(log1mx)).Neg()
	if o.Weight != nil {
		l = l.Mul(o.Weight)
	}
	return reduce(l, o.Reduction)
}

// BCEWithLogitsLoss is BCELoss of σ(x) computed stably from the logits x:
// ℓ = −w·(p·y·ln σ(x) + (1 − y)·ln(1 − σ(x))) with p = PosWeight (1 when
// unset), where ln σ(x) = −softplus(−x) and ln(1 − σ(x)) = ln σ(x) − x never
// overflow.
func BCEWithLogitsLoss(logits, target *tensor.Tensor, o BCEOptions) *tensor.Tensor {
	sameShapes("BCEWithLogitsLoss", logits, target)
	ls := logits.LogSigmoid() // ln σ(x)
	lns := ls.Sub(logits)     // ln(1 − σ(x))
	pos := target.Mul(ls)
	if o.PosWeight != nil {
		pos = pos.Mul(o.PosWeight)
	}
	l := pos.Add(target.RSubScalar(1).Mul(lns)).Neg()
	if o.Weight != nil {
		l = l.Mul(o.Weight)
	}
	return reduce(l, o.Reduction)
}

// ClassOptions configures NLLLoss and CrossEntropyLoss.
type ClassOptions struct {
	Reduction Reduction
	// Weight, if set, is a [C] tensor of per-class weights: w[c] multiplies
	// the loss of targets of class c, and the mean divides by the sum of
	// the weights of the counted targets.
	Weight *tensor.Tensor
	// When Ignore is set, targets equal to IgnoreIndex contribute neither
	// loss nor gradient and are not counted by the mean (PyTorch's
	// ignore_index, whose default −100 matches no class). Class-index
	// targets only.
	Ignore      bool
	IgnoreIndex int
	// LabelSmoothing ε ∈ [0, 1] (CrossEntropyLoss only) mixes the target
	// with the uniform distribution: (1 − ε)·target + ε/C (Szegedy et al.,
	// "Rethinking the Inception Architecture", 2016).
	LabelSmoothing float64
}

// classesLast views x [N, C, d1, …, dk] as [N·d1⋯dk, C] (moving C last)
// and returns the shape of the per-position result, [N, d1, …, dk]. A 1-D
// x (one unbatched example) becomes [1, C] with result shape [].
func classesLast(op string, x *tensor.Tensor) (x2 *tensor.Tensor, rest []int, c int) {
	shape := x.Shape()
	switch len(shape) {
	case 0:
		panic(fmt.Sprintf("nn: %s: input must have a class dim, got shape %v", op, shape))
	case 1:
		return x.Unsqueeze(0), nil, shape[0]
	case 2:
		return x, []int{shape[0]}, shape[1]
	}
	perm := []int{0}
	for d := 2; d < len(shape); d++ {
		perm = append(perm, d)
	}
	perm = append(perm, 1)
	rest = append([]int{shape[0]}, shape[2:]...)
	return x.Permute(perm...).Reshape(-1, shape[1]), rest, shape[1]
}

// classTargets checks class-index targets against the input and returns
// them flattened, plus, per position, the weight of its target class
// (0 when ignored) and the sum W of those weights.
func classTargets(op string, target *tensor.Tensor, rest []int, c int, o ClassOptions) (idx []int64, wt []float64, wsum float64, cw []float64) {
	if target.DType().IsFloat() {
		panic(fmt.Sprintf("nn: %s: class-index targets must be an integer tensor, got %v", op, target.DType()))
	}
	if !slices.Equal(target.Shape(), rest) {
		panic(fmt.Sprintf("nn: %s: target shape %v does not match input (want %v)", op, target.Shape(), rest))
	}
	cw = classWeights(op, o.Weight, c)
	idx = target.Int64s()
	wt = make([]float64, len(idx))
	for i, y := range idx {
		if o.Ignore && y == int64(o.IgnoreIndex) {
			continue
		}
		if y < 0 || y >= int64(c) {
			panic(fmt.Sprintf("nn: %s: target %d at position %d is out of range [0, %d)", op, y, i, c))
		}
		w := 1.0
		if cw != nil {
			w = cw[y]
		}
		wt[i] = w
		wsum += w
	}
	return idx, wt, wsum, cw
}

func classWeights(op string, w *tensor.Tensor, c int) []float64 {
	if w == nil {
		return nil
	}
	if w.Dim() != 1 || w.Size(0) != c {
		panic(fmt.Sprintf("nn: %s: class weight shape %v, want [%d]", op, w.Shape(), c))
	}
	return w.Values()
}

// NLLLoss is the negative log-likelihood of log-probabilities x [N, C]
// (or [C], or [N, C, d1, …]) for class-index targets y [N] (or [], or
// [N, d1, …]): ℓ_i = −w[y_i]·x[i, y_i]; the mean is Σℓ_i / Σ w[y_i] over
// counted targets.
func NLLLoss(input, target *tensor.Tensor, o ClassOptions) *tensor.Tensor {
	if o.LabelSmoothing != 0 {
		panic("nn: NLLLoss has no label smoothing; use CrossEntropyLoss")
	}
	x2, rest, c := classesLast("NLLLoss", input)
	idx, wt, wsum, _ := classTargets("NLLLoss", target, rest, c, o)
	// ℓ = −Σ_c x·A with A[i, c] = w_i at the target class (0 elsewhere).
	a := make([]float64, len(idx)*c)
	for i, y := range idx {
		if wt[i] != 0 {
			a[i*c+int(y)] = wt[i]
		}
	}
	at := tensor.FromFloat64(a, len(idx), c).To(x2.DType())
	l := x2.Mul(at).Sum([]int{1}, false).Neg()
	return reduceClass(l, rest, wsum, o.Reduction)
}

func reduceClass(l *tensor.Tensor, rest []int, wsum float64, r Reduction) *tensor.Tensor {
	switch r {
	case ReduceNone:
		return l.Reshape(rest...)
	case ReduceSum:
		return l.SumAll()
	case ReduceMean:
		return l.SumAll().DivScalar(wsum)
	}
	panic(fmt.Sprintf("nn: unknown reduction %d", int(r)))
}

// CrossEntropyLoss is the cross-entropy of logits x [N, C] (or [C], or
// [N, C, d1, …]) with log-probabilities p = log_softmax(x) over C:
//
//   - class-index targets y (integer, [N] or [N, d1, …]): with smoothing ε
//     and class weights w (1 when unset),
//     ℓ_i = (1 − ε)·(−w[y_i]·p[i, y_i]) + (ε/C)·(−Σ_c w[c]·p[i, c]),
//     and the mean divides Σℓ_i by Σ w[y_i] over counted targets;
//   - class-probability targets t (float, same shape as x):
//     ℓ_i = −Σ_c w[c]·t'[i, c]·p[i, c] with t' = (1 − ε)·t + ε/C, and the
//     mean divides by the number of positions N·d1⋯dk.
//
// Both run as one fused pass that computes the loss and its gradient
// (p − a/A form, see crossEntropyFused), except probability targets that
// require grad, which take the composite path.
func CrossEntropyLoss(logits, target *tensor.Tensor, o ClassOptions) *tensor.Tensor {
	if target.DType().IsFloat() && target.RequiresGrad() {
		return crossEntropyComposite(logits, target, o)
	}
	return crossEntropyFused(logits, target, o)
}

// ceCoef describes ℓ_i = −Σ_c a[i, c]·p[i, c] for the 2-D view [M, C]:
// densely for probability targets, and for class-index targets as
// a[i, c] = valid_i·smooth[c] + (1 − ε)·wt_i·[c = y_i] without a matrix.
type ceCoef struct {
	c     int
	dense []float64 // [M·C] for probability targets, else nil

	idx       []int64
	wt        []float64 // w[y_i], 0 when ignored
	valid     []bool
	hard      float64   // 1 − ε
	smooth    []float64 // ε/C·w[c] per class, nil when ε = 0
	smoothSum float64   // Σ_c smooth[c]
	div       float64   // the mean's divisor
}

// row writes a[i, ·] into buf (for the composite path).
func (co *ceCoef) row(i int, buf []float64) {
	if co.dense != nil {
		copy(buf, co.dense[i*co.c:(i+1)*co.c])
		return
	}
	clear(buf)
	if co.valid[i] {
		copy(buf, co.smooth)
		buf[co.idx[i]] += co.hard * co.wt[i]
	}
}

func crossEntropyCoefficients(target *tensor.Tensor, rest []int, m, c int, o ClassOptions) *ceCoef {
	eps := o.LabelSmoothing
	if eps < 0 || eps > 1 {
		panic(fmt.Sprintf("nn: CrossEntropyLoss: label smoothing %g is outside [0, 1]", eps))
	}
	co := &ceCoef{c: c}
	if !target.DType().IsFloat() {
		idx, wt, wsum, cw := classTargets("CrossEntropyLoss", target, rest, c, o)
		co.idx, co.wt, co.div, co.hard = idx, wt, wsum, 1-eps
		co.valid = make([]bool, len(idx))
		for i, y := range idx {
			co.valid[i] = !(o.Ignore && y == int64(o.IgnoreIndex))
		}
		if eps != 0 {
			co.smooth = make([]float64, c)
			for k := range co.smooth {
				w := 1.0
				if cw != nil {
					w = cw[k]
				}
				co.smooth[k] = eps / float64(c) * w
				co.smoothSum += co.smooth[k]
			}
		}
		return co
	}
	// Probability targets.
	if o.Ignore {
		panic("nn: CrossEntropyLoss: ignore_index applies to class-index targets only")
	}
	var want []int
	if len(rest) == 0 {
		want = []int{c}
	} else {
		want = append([]int{rest[0], c}, rest[1:]...)
	}
	if !slices.Equal(target.Shape(), want) {
		panic(fmt.Sprintf("nn: CrossEntropyLoss: probability target %v does not match input %v", target.Shape(), want))
	}
	t2, _, _ := classesLast("CrossEntropyLoss", target)
	tv := t2.Values()
	cw := classWeights("CrossEntropyLoss", o.Weight, c)
	co.dense = make([]float64, m*c)
	for i := range m {
		for k := range c {
			w := 1.0
			if cw != nil {
				w = cw[k]
			}
			co.dense[i*c+k] = w * ((1-eps)*tv[i*c+k] + eps/float64(c))
		}
	}
	co.div = float64(m)
	return co
}

// ceRows turns, row by row, log-probabilities logp into the losses ℓ_i
// and the probabilities held in g into the gradient gs·∂ℓ_i/∂x[i, ·]:
// with A_i = Σ_c a[i, c], ℓ_i = −Σ_c a[i, c]·logp[i, c] and
// ∂ℓ_i/∂x[i, k] = softmax(x)[i, k]·A_i − a[i, k], because
// ∂logp[i, c]/∂x[i, k] = δ_ck − softmax(x)[i, k].
func ceRows[T float32 | float64](logp, g []T, m int, co *ceCoef, gs float64, loss []float64) {
	c := co.c
	for i := range m {
		lr, gr := logp[i*c:(i+1)*c], g[i*c:(i+1)*c]
		if co.dense != nil {
			ar := co.dense[i*c : (i+1)*c]
			var l, sa float64
			for k, ak := range ar {
				if ak != 0 {
					l -= ak * float64(lr[k])
				}
				sa += ak
			}
			loss[i] = l
			for k := range gr {
				gr[k] = T((float64(gr[k])*sa - ar[k]) * gs)
			}
			continue
		}
		if !co.valid[i] {
			loss[i] = 0
			clear(gr)
			continue
		}
		y, hw := co.idx[i], co.hard*co.wt[i]
		l := -hw * float64(lr[y])
		sa := hw + co.smoothSum
		if co.smooth != nil {
			for k, sk := range co.smooth {
				l -= sk * float64(lr[k])
				gr[k] = T((float64(gr[k])*sa - sk) * gs)
			}
		} else {
			f := T(sa * gs)
			for k := range gr {
				gr[k] *= f
			}
		}
		gr[y] -= T(hw * gs)
		loss[i] = l
	}
}

// crossEntropyFused computes the loss and its gradient in one pass over
// the logits (ceRows) and attaches the gradient to the graph with
// attachGrad.
func crossEntropyFused(logits, target *tensor.Tensor, o ClassOptions) *tensor.Tensor {
	dt := logits.DType()
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return crossEntropyFused(logits.To(tensor.Float32), target, o).To(dt)
	}
	x2, rest, c := classesLast("CrossEntropyLoss", logits)
	m := x2.Size(0)
	co := crossEntropyCoefficients(target, rest, m, c, o)
	gs := 1.0 // gradient scale: 1/div for the mean
	if o.Reduction == ReduceMean {
		gs = 1 / co.div
	}
	xc := x2.Detach().Contiguous()
	loss := make([]float64, m)
	var grad *tensor.Tensor
	switch dt {
	case tensor.Float32:
		x := xc.Float32s()
		logp := make([]float32, m*c)
		g := make([]float32, m*c)
		kernel.LogSoftmaxRowsF32(logp, x, m, c)
		kernel.ExpF32(g, logp)
		ceRows(logp, g, m, co, gs, loss)
		grad = tensor.FromFloat32(g, m, c)
	case tensor.Float64:
		x := xc.Float64s()
		logp := make([]float64, m*c)
		g := make([]float64, m*c)
		for i := range m {
			xr, lr, gr := x[i*c:(i+1)*c], logp[i*c:(i+1)*c], g[i*c:(i+1)*c]
			mx := math.Inf(-1)
			for _, v := range xr {
				mx = math.Max(mx, v)
			}
			var s float64
			for _, v := range xr {
				s += math.Exp(v - mx)
			}
			lse := mx + math.Log(s)
			for k, v := range xr {
				lr[k] = v - lse
				gr[k] = math.Exp(lr[k])
			}
		}
		ceRows(logp, g, m, co, gs, loss)
		grad = tensor.FromFloat64(g, m, c)
	}
	switch o.Reduction {
	case ReduceNone:
		val := tensor.FromFloat64(loss, m).To(dt)
		return attachGrad(x2, grad, val, true).Reshape(rest...)
	case ReduceSum, ReduceMean:
		var s float64
		for _, l := range loss {
			s += l
		}
		if o.Reduction == ReduceMean {
			s /= co.div
		}
		return attachGrad(x2, grad, tensor.Scalar(s, dt), false)
	}
	panic(fmt.Sprintf("nn: unknown reduction %d", int(o.Reduction)))
}

// crossEntropyComposite is CrossEntropyLoss built from primitive ops
// (log_softmax, multiply by the coefficient matrix, sum): the reference
// the fused path is tested against, and the path for targets that require
// grad.
func crossEntropyComposite(logits, target *tensor.Tensor, o ClassOptions) *tensor.Tensor {
	x2, rest, c := classesLast("CrossEntropyLoss", logits)
	m := x2.Size(0)
	logp := x2.LogSoftmax(1)
	var l *tensor.Tensor
	var div float64
	if target.DType().IsFloat() {
		// Keep the target in the graph: ℓ = −Σ_c w·((1−ε)t + ε/C)·p.
		t2, _, _ := classesLast("CrossEntropyLoss", target)
		if !slices.Equal(t2.Shape(), x2.Shape()) {
			panic(fmt.Sprintf("nn: CrossEntropyLoss: probability target %v does not match input %v", target.Shape(), logits.Shape()))
		}
		ts := t2.MulScalar(1 - o.LabelSmoothing).AddScalar(o.LabelSmoothing / float64(c))
		if o.Weight != nil {
			ts = ts.Mul(o.Weight)
		}
		l = logp.Mul(ts).Sum([]int{1}, false).Neg()
		div = float64(m)
	} else {
		co := crossEntropyCoefficients(target, rest, m, c, o)
		a := make([]float64, m*c)
		for i := range m {
			co.row(i, a[i*c:(i+1)*c])
		}
		at := tensor.FromFloat64(a, m, c).To(logp.DType())
		l = logp.Mul(at).Sum([]int{1}, false).Neg()
		div = co.div
	}
	return reduceClass(l, rest, div, o.Reduction)
}

// attachGrad returns value (a scalar, or [M] when perRow), recorded as a
// tensor.CustomOp whose gradient with respect to x [M, C] is g·G (g the
// incoming gradient, broadcast per row when perRow). G was computed with
// the loss and is saved; a seed of exactly 1 returns it as is.
func attachGrad(x, grad, value *tensor.Tensor, perRow bool) *tensor.Tensor {
	return tensor.CustomOp("CrossEntropyLoss", value, func(g *tensor.Tensor) []*tensor.Tensor {
		if perRow {
			return []*tensor.Tensor{grad.Mul(g.Reshape(-1, 1))}
		}
		if s := g.Item(); s != 1 {
			return []*tensor.Tensor{grad.MulScalar(s)}
		}
		return []*tensor.Tensor{grad}
	}, x)
}
