package nn

import (
	"fmt"
	"math"
	"slices"

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
// (tensor.CrossEntropyRows and tensor.CrossEntropySum), except
// probability targets that require grad, which take the composite path.
func CrossEntropyLoss(logits, target *tensor.Tensor, o ClassOptions) *tensor.Tensor {
	if target.DType().IsFloat() && target.RequiresGrad() {
		return crossEntropyComposite(logits, target, o)
	}
	return crossEntropyFused(logits, target, o)
}

// ceCoef holds the coefficients of ℓ_i = −Σ_c a[i, c]·p[i, c] for the
// 2-D view [M, C] (densely for probability targets, per target class for
// class-index targets) and the mean's divisor.
type ceCoef struct {
	tensor.CrossEntropyTargets
	div float64
}

func crossEntropyCoefficients(target *tensor.Tensor, rest []int, m, c int, o ClassOptions) *ceCoef {
	eps := o.LabelSmoothing
	if eps < 0 || eps > 1 {
		panic(fmt.Sprintf("nn: CrossEntropyLoss: label smoothing %g is outside [0, 1]", eps))
	}
	co := &ceCoef{}
	if !target.DType().IsFloat() {
		idx, wt, wsum, cw := classTargets("CrossEntropyLoss", target, rest, c, o)
		co.Class, co.Weight, co.div = idx, wt, wsum
		co.Skip = make([]bool, len(idx))
		for i, y := range idx {
			co.Weight[i] *= 1 - eps // wt is ours: scaled in place
			co.Skip[i] = o.Ignore && y == int64(o.IgnoreIndex)
		}
		if eps != 0 {
			co.Smooth = make([]float64, c)
			for k := range co.Smooth {
				w := 1.0
				if cw != nil {
					w = cw[k]
				}
				co.Smooth[k] = eps / float64(c) * w
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
	co.Dense = make([]float64, m*c)
	for i := range m {
		for k := range c {
			w := 1.0
			if cw != nil {
				w = cw[k]
			}
			co.Dense[i*c+k] = w * ((1-eps)*tv[i*c+k] + eps/float64(c))
		}
	}
	co.div = float64(m)
	return co
}

// crossEntropyFused computes the loss and its gradient in one pass over
// the logits with tensor.CrossEntropyRows or tensor.CrossEntropySum.
func crossEntropyFused(logits, target *tensor.Tensor, o ClassOptions) *tensor.Tensor {
	dt := logits.DType()
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return crossEntropyFused(logits.To(tensor.Float32), target, o).To(dt)
	}
	x2, rest, c := classesLast("CrossEntropyLoss", logits)
	m := x2.Size(0)
	co := crossEntropyCoefficients(target, rest, m, c, o)
	switch o.Reduction {
	case ReduceNone:
		return tensor.CrossEntropyRows(x2, &co.CrossEntropyTargets).Reshape(rest...)
	case ReduceSum:
		return tensor.CrossEntropySum(x2, &co.CrossEntropyTargets, 1)
	case ReduceMean:
		return tensor.CrossEntropySum(x2, &co.CrossEntropyTargets, co.div)
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
			co.Row(i, a[i*c:(i+1)*c])
		}
		at := tensor.FromFloat64(a, m, c).To(logp.DType())
		l = logp.Mul(at).Sum([]int{1}, false).Neg()
		div = co.div
	}
	return reduceClass(l, rest, div, o.Reduction)
}
