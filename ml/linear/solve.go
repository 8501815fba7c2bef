package linear

import (
	"errors"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/optim"
)

// fitData is what every linear estimator fits on: this rank's features,
// labels and weights, and statistics of the whole data set.
type fitData struct {
	x    ml.Matrix
	y, w []float64
	comm ml.Comm
	rows int     // rows over every rank
	wsum float64 // Σw over every rank
	// mean and std of each feature over every rank (weighted; the std
	// unbiased as Spark's summarizer computes it).
	mean, std []float64
	// labelSum and labelSq are Σw·y and Σw·y² over every rank.
	labelSum, labelSq float64
	// numClasses is the class count of a classifier's labels.
	numClasses int
}

// readColumns reads this rank's features, labels and weights.
func readColumns(f *data.Frame, featuresCol, labelCol, weightCol string, classes bool) (x ml.Matrix, y, w []float64, err error) {
	if f == nil {
		return x, nil, nil, errors.New("no data frame")
	}
	if x, err = ml.Features(f, featuresCol); err != nil {
		return x, nil, nil, err
	}
	if y, err = ml.Numbers(f, labelCol); err != nil {
		return x, nil, nil, err
	}
	if classes {
		for i, v := range y {
			if v < 0 || v != math.Trunc(v) || v > 1<<30 {
				return x, nil, nil, fmt.Errorf("column %q, row %d: label %g is not a class index 0, 1, 2, ... (index string labels with StringIndexer)", labelCol, i+1, v)
			}
		}
	}
	if w, err = ml.Weights(f, weightCol); err != nil {
		return x, nil, nil, err
	}
	return x, y, w, nil
}

// ErrOtherRank is ml.ErrOtherRank: returned on the ranks whose own data
// were fine when another rank could not read its share (that rank returns
// the reason).
var ErrOtherRank = ml.ErrOtherRank

// loadFitData reads the columns of this rank's frame and computes the
// global statistics (all-reduces: a check that every rank read its data,
// sums, then centred squares). With classes the labels must be class
// indices 0, 1, ..., and numClasses is one more than the largest over
// every rank. name is the estimator's, for errors.
func loadFitData(d ml.Data, name, featuresCol, labelCol, weightCol string, classes bool) (*fitData, error) {
	c := d.C()
	x, y, w, err := readColumns(d.Frame, featuresCol, labelCol, weightCol, classes)
	// Every rank learns whether every other read its data (a rank that
	// returned alone would leave the others waiting in a collective), and
	// the feature counts must agree before any all-reduce whose length
	// depends on them: [failed, d, −d, largest label].
	chk := []float64{0, float64(x.Cols), -float64(x.Cols), -1}
	if err != nil {
		chk[0] = 1
	}
	for _, v := range y {
		chk[3] = max(chk[3], v)
	}
	if e := c.AllReduce(chk, ml.OpMax); e != nil {
		return nil, fmt.Errorf("%s: %w", name, e)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case chk[0] != 0:
		return nil, fmt.Errorf("%s: rank %d: %w", name, c.Rank(), ErrOtherRank)
	case chk[1] != -chk[2]:
		return nil, fmt.Errorf("%s: column %q has between %g and %g features over the ranks", name, featuresCol, -chk[2], chk[1])
	}
	fd := &fitData{x: x, y: y, w: w, comm: c}
	if classes {
		fd.numClasses = int(chk[3]) + 1
	}
	dd := x.Cols
	// [rows, Σw, Σw², Σwy, Σwy², Σw·x (d)]
	s := make([]float64, 5+dd)
	s[0] = float64(x.Rows)
	sumRows(x, w, s[1:5+dd], func(acc []float64, i int, wi float64, row []float64) {
		acc[0] += wi
		acc[1] += wi * wi
		acc[2] += wi * y[i]
		acc[3] += wi * y[i] * y[i]
		for j, v := range row {
			acc[4+j] += wi * v
		}
	})
	if err := c.AllReduce(s, ml.OpSum); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fd.rows, fd.wsum = int(s[0]), s[1]
	fd.labelSum, fd.labelSq = s[3], s[4]
	if fd.rows == 0 {
		return nil, fmt.Errorf("%s: no rows to fit on", name)
	}
	if !(fd.wsum > 0) {
		return nil, fmt.Errorf("%s: the weights in column %q sum to %g; need a positive sum", name, weightCol, fd.wsum)
	}
	fd.mean = make([]float64, dd)
	for j := range dd {
		fd.mean[j] = s[5+j] / fd.wsum
	}
	v := make([]float64, dd)
	sumRows(x, w, v, func(acc []float64, _ int, wi float64, row []float64) {
		for j, xv := range row {
			e := xv - fd.mean[j]
			acc[j] += wi * e * e
		}
	})
	if err := c.AllReduce(v, ml.OpSum); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// Spark's unbiased weighted variance: Σw(x−μ)² / (Σw − Σw²/Σw).
	den := fd.wsum - s[2]/fd.wsum
	fd.std = make([]float64, dd)
	for j := range dd {
		if den > 0 && v[j] > 0 {
			fd.std[j] = math.Sqrt(v[j] / den)
		}
	}
	return fd, nil
}

// problem is a regularized linear fit: k outputs over d features.
type problem struct {
	report      func(iter int, loss float64) // progress (ml.Data.Report); nil for none
	loss        Loss
	k           int
	intercept   bool
	standardize bool
	regParam    float64 // λ
	elasticNet  float64 // α: penalty λ(α‖β‖₁ + (1−α)/2‖β‖²)
	maxIter     int
	tol         float64
	// x0 is the starting point in the optimizer's space: the scaled
	// coefficients (k × d), then the intercepts (k); nil: zeros.
	x0 []float64
}

// solution is a fitted linear model in the original feature space.
type solution struct {
	coef        []float64 // k × d
	icpt        []float64 // k (zeros without intercept)
	iterations  int
	evaluations int
	objective   float64
	reason      optim.StopReason
}

// solve fits p on fd. With p.standardize the optimization runs in the
// space of the scaled features x_j/σ_j, where the penalty applies —
// centred too when there is an intercept, which leaves the minimizer
// unchanged (the intercept absorbs the shift) and conditions the problem,
// as Spark does. Without it, the penalty applies to the original
// coefficients and the optimization runs on the features as they are
// (scikit-learn's formulation), except that a feature whose mean is large
// against its spread (|μ| > centreRatio·σ) is centred when there is an
// intercept: its coupling with the intercept would stall the solver.
// Spark scales there too; that changes only the path, but with a fixed
// iteration budget (the Fashion-MNIST benchmark, whose pixels have
// |μ| < 2.5σ) the path is what is compared. A feature with σ_j = 0 gets a
// zero coefficient when there is an intercept (as Spark and glmnet);
// without one it is kept as it is. L-BFGS solves it without an L1 part,
// OWL-QN with one.
func solve(fd *fitData, p problem) (solution, error) {
	o := newObjective(fd, p)
	d, k := o.d, o.k
	np := k*d + k
	x0 := p.x0
	if x0 == nil {
		x0 = make([]float64, np)
	}
	opt := optim.MinimizeOptions{MaxIter: p.maxIter, FuncTol: p.tol, GradTol: min(1e-9, p.tol), MaxEval: 4 * p.maxIter,
		Iteration: p.report}
	var res optim.Result
	var err error
	switch {
	case p.maxIter == 0:
		// Spark's maxIter = 0: the starting point.
		res = optim.Result{X: x0, F: o.f(x0, make([]float64, np))}
	case o.anyL1:
		res, err = optim.MinimizeOWLQN(o.f, x0, o.l1, opt)
	default:
		res, err = optim.MinimizeLBFGS(o.f, x0, opt)
	}
	if o.err != nil {
		return solution{}, o.err
	}
	if err != nil && !errors.Is(err, optim.ErrBadStart) {
		return solution{}, err
	}
	if err != nil {
		return solution{}, fmt.Errorf("the loss is not finite at the start: %w", err)
	}
	coef, icpt := make([]float64, k*d), make([]float64, k)
	toOriginal(res.X, coef, icpt, o.scale, o.shift, k, d, p.intercept)
	return solution{coef: coef, icpt: icpt, iterations: res.Iterations, evaluations: res.Evaluations, objective: res.F, reason: res.Reason}, nil
}

// centreRatio is how many standard deviations from zero a feature's mean
// must be for an unstandardized fit to centre it.
const centreRatio = 4

// objective is the smooth part of a problem's objective as a function of
// the optimizer's point (scaled coefficients, then intercepts), and the
// L1 penalty per coordinate.
type objective struct {
	p            problem
	d, k         int
	agg          *Aggregator
	scale, shift []float64 // x_scaled = (x − shift)·scale
	l1, l2       []float64
	anyL1        bool
	coef, icpt   []float64
	gw, gb       []float64
	err          error // the first evaluation error (a failed all-reduce)
}

func newObjective(fd *fitData, p problem) *objective {
	d, k := fd.x.Cols, p.k
	o := &objective{p: p, d: d, k: k, scale: make([]float64, d), shift: make([]float64, d)}
	for j := range d {
		switch {
		case fd.std[j] > 0 && p.standardize:
			o.scale[j] = 1 / fd.std[j]
			if p.intercept {
				o.shift[j] = fd.mean[j]
			}
		case fd.std[j] > 0:
			o.scale[j] = 1
			if p.intercept && math.Abs(fd.mean[j]) > centreRatio*fd.std[j] {
				o.shift[j] = fd.mean[j]
			}
		case !p.intercept && fd.mean[j] != 0:
			o.scale[j] = 1
		}
	}
	np := k*d + k
	o.l1, o.l2 = make([]float64, np), make([]float64, np)
	for c := range k {
		for j := range d {
			if o.scale[j] == 0 {
				continue
			}
			// The penalty of β_j = β'_j·scale_j in the original space
			// is the penalty of β'_j times scale_j (L1) or scale_j² (L2).
			f := 1.0
			if !p.standardize {
				f = o.scale[j]
			}
			o.l1[c*d+j] = p.regParam * p.elasticNet * f
			o.l2[c*d+j] = p.regParam * (1 - p.elasticNet) * f * f
			o.anyL1 = o.anyL1 || o.l1[c*d+j] > 0
		}
	}
	o.agg = NewAggregator(p.loss, fd.x, fd.y, fd.w, k, p.intercept, fd.comm)
	o.coef, o.icpt = make([]float64, k*d), make([]float64, k)
	o.gw, o.gb = make([]float64, k*d), make([]float64, k)
	return o
}

// f returns the average loss plus the L2 penalty at x and writes its
// gradient into grad (the signature optim's minimizers take).
func (o *objective) f(x, grad []float64) float64 {
	if o.err != nil {
		return math.NaN()
	}
	d, k := o.d, o.k
	toOriginal(x, o.coef, o.icpt, o.scale, o.shift, k, d, o.p.intercept)
	lsum, wsum, err := o.agg.Eval(o.coef, o.icpt, o.gw, o.gb)
	if err != nil {
		o.err = err
		return math.NaN()
	}
	f := lsum / wsum
	inv := 1 / wsum
	for c := range k {
		for j := range d {
			i := c*d + j
			b := x[i]
			grad[i] = (o.gw[i]-o.shift[j]*o.gb[c])*o.scale[j]*inv + o.l2[i]*b
			f += o.l2[i] * b * b / 2
		}
		if o.p.intercept {
			grad[k*d+c] = o.gb[c] * inv
		} else {
			grad[k*d+c] = 0
		}
	}
	return f
}

// toOriginal maps the optimizer's point x (scaled coefficients, then
// intercepts) to coefficients and intercepts over the original features.
func toOriginal(x, coef, icpt, scale, shift []float64, k, d int, intercept bool) {
	for c := range k {
		b := 0.0
		if intercept {
			b = x[k*d+c]
		}
		for j := range d {
			w := x[c*d+j] * scale[j]
			coef[c*d+j] = w
			b -= w * shift[j]
		}
		icpt[c] = b
	}
}

// sumRows adds add(acc, i, w_i, row_i) over the rows of x into out, in
// chunks over the cores whose sums are added in order (the result
// depends only on the data).
func sumRows(x ml.Matrix, w, out []float64, add func(acc []float64, i int, wi float64, row []float64)) {
	count, size := chunkRows(x.Rows, len(out))
	parts := make([][]float64, count)
	parallel.For(count, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			acc := make([]float64, len(out))
			for i := c * size; i < min((c+1)*size, x.Rows); i++ {
				wi := 1.0
				if w != nil {
					wi = w[i]
				}
				add(acc, i, wi, x.Row(i))
			}
			parts[c] = acc
		}
	})
	for _, p := range parts {
		for j, v := range p {
			out[j] += v
		}
	}
}
