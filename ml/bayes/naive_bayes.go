package bayes

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// Model types, Spark's names.
const (
	Multinomial = "multinomial"
	Bernoulli   = "bernoulli"
	Gaussian    = "gaussian"
	Complement  = "complement"
)

// gaussianVarSmoothing is the fraction of the largest feature variance
// added to every variance (Spark's 1e-9, scikit-learn's var_smoothing).
const gaussianVarSmoothing = 1e-9

// NaiveBayes is Spark ML's NaiveBayes estimator. Its zero value is not
// usable: start from NewNaiveBayes.
type NaiveBayes struct {
	FeaturesCol      string `json:"featuresCol" yaml:"featuresCol"`
	LabelCol         string `json:"labelCol" yaml:"labelCol"`
	PredictionCol    string `json:"predictionCol" yaml:"predictionCol"`
	ProbabilityCol   string `json:"probabilityCol" yaml:"probabilityCol"`
	RawPredictionCol string `json:"rawPredictionCol" yaml:"rawPredictionCol"`
	// WeightCol names a column of non-negative row weights; "" weighs
	// every row 1.
	WeightCol string `json:"weightCol" yaml:"weightCol"`
	// ModelType is "multinomial" (default), "bernoulli", "gaussian" or
	// "complement".
	ModelType string `json:"modelType" yaml:"modelType"`
	// Smoothing is the additive (Lidstone) smoothing λ of the discrete
	// models [1.0]; unused by "gaussian".
	Smoothing float64 `json:"smoothing" yaml:"smoothing"`
	// Thresholds, if set (one per class, ≥ 0, at most one 0), make the
	// prediction the class with the largest probability/threshold.
	Thresholds []float64 `json:"thresholds" yaml:"thresholds"`
}

// NewNaiveBayes returns a NaiveBayes with Spark's defaults.
func NewNaiveBayes() *NaiveBayes {
	return &NaiveBayes{
		FeaturesCol:      ml.FeaturesCol,
		LabelCol:         ml.LabelCol,
		PredictionCol:    ml.PredictionCol,
		ProbabilityCol:   ml.ProbabilityCol,
		RawPredictionCol: ml.RawPredictionCol,
		ModelType:        Multinomial,
		Smoothing:        1.0,
	}
}

// Type is "NaiveBayes".
func (nb *NaiveBayes) Type() string { return "NaiveBayes" }

// Copy returns an independent copy.
func (nb *NaiveBayes) Copy() ml.Estimator {
	c := *nb
	c.Thresholds = slices.Clone(nb.Thresholds)
	return &c
}

func (nb *NaiveBayes) validate() error {
	switch nb.ModelType {
	case Multinomial, Bernoulli, Gaussian, Complement:
	default:
		return fmt.Errorf("NaiveBayes: modelType must be multinomial, bernoulli, gaussian or complement, got %q", nb.ModelType)
	}
	if !(nb.Smoothing >= 0) || math.IsInf(nb.Smoothing, 0) {
		return fmt.Errorf("NaiveBayes: smoothing must be ≥ 0, got %g", nb.Smoothing)
	}
	if nb.FeaturesCol == "" || nb.LabelCol == "" {
		return errors.New("NaiveBayes: featuresCol and labelCol must be set")
	}
	return checkThresholds(nb.Thresholds, -1)
}

// checkThresholds validates Spark's thresholds: each ≥ 0, at most one 0,
// and (k ≥ 0) one per class.
func checkThresholds(t []float64, k int) error {
	if t == nil {
		return nil
	}
	if k >= 0 && len(t) != k {
		return fmt.Errorf("NaiveBayes: thresholds has %d values for %d classes", len(t), k)
	}
	zeros := 0
	for i, v := range t {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("NaiveBayes: thresholds[%d] must be finite and ≥ 0, got %g", i, v)
		}
		if v == 0 {
			zeros++
		}
	}
	if zeros > 1 {
		return fmt.Errorf("NaiveBayes: at most one of thresholds may be 0, got %v", t)
	}
	return nil
}

// valueCheck says which feature values a model type accepts (finite ones,
// and then: any, non-negative, or 0 and 1).
func valueCheck(modelType string) (ok func(float64) bool, want string) {
	switch modelType {
	case Multinomial, Complement:
		return func(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }, "non-negative"
	case Bernoulli:
		return func(x float64) bool { return x == 0 || x == 1 }, "0 or 1"
	}
	return finite, "finite"
}

// badValue describes the rejected value at row i, element j (0-based).
func badValue(who, col, modelType string, r rows, i, j int) error {
	_, want := valueCheck(modelType)
	x := r.at(i, j)
	if !finite(x) {
		return fmt.Errorf("%s: column %q, row %d, element %d: %g is not a finite number", who, col, i+1, j+1, x)
	}
	return fmt.Errorf("%s: column %q, row %d, element %d: %s naive Bayes needs %s feature values, got %g", who, col, i+1, j+1, modelType, want, x)
}

// local is one rank's share of the training data.
type local struct {
	x      rows
	labels []int
	w      []float64
	top    int // the largest label, −1 when there are no rows
}

func (nb *NaiveBayes) readLocal(f *data.Frame) (local, error) {
	x, err := readRows(f, nb.FeaturesCol)
	if err != nil {
		return local{}, fmt.Errorf("NaiveBayes: %w", err)
	}
	y, err := ml.Numbers(f, nb.LabelCol)
	if err != nil {
		return local{}, fmt.Errorf("NaiveBayes: %w", err)
	}
	l := local{x: x, labels: make([]int, len(y)), top: -1}
	for i, v := range y {
		if v < 0 || v != math.Trunc(v) || v > 1<<30 {
			return local{}, fmt.Errorf("NaiveBayes: column %q, row %d: label %g is not a class index 0, 1, 2, ... (index string labels with StringIndexer)", nb.LabelCol, i+1, v)
		}
		l.labels[i] = int(v)
		l.top = max(l.top, int(v))
	}
	if l.w, err = ml.Weights(f, nb.WeightCol); err != nil {
		return local{}, fmt.Errorf("NaiveBayes: %w", err)
	}
	return l, nil
}

// Fit computes the class weights and the per-class feature sums (for
// "gaussian": means and squared deviations) in one parallel pass over this
// rank's rows, combines them over the ranks with one collective (see the
// package doc), and derives the model from the totals.
func (nb *NaiveBayes) Fit(d ml.Data) (ml.Model, error) {
	if err := nb.validate(); err != nil {
		return nil, err
	}
	c := d.C()
	l, localErr := nb.readLocal(d.Frame)

	// Agree on K and the width (and on failure: a rank that fails still
	// joins the collectives, so that no other rank waits for it).
	width := 0
	if localErr == nil {
		width = l.x.d
	}
	meta := []float64{float64(l.top), float64(width), -float64(width), 0}
	if localErr != nil {
		meta = []float64{-1, math.Inf(-1), math.Inf(-1), 1}
	}
	if err := c.AllReduce(meta, ml.OpMax); err != nil {
		return nil, fmt.Errorf("NaiveBayes: %w", err)
	}
	if localErr != nil {
		return nil, localErr
	}
	if meta[3] > 0 {
		return nil, errors.New("NaiveBayes: another rank's data is invalid (see its error)")
	}
	if meta[1] != -meta[2] {
		return nil, fmt.Errorf("NaiveBayes: column %q has %d elements here and %g on another rank", nb.FeaturesCol, width, math.Max(meta[1], -meta[2]))
	}
	k := int(meta[0]) + 1
	if k <= 0 {
		return nil, errors.New("NaiveBayes: no rows to fit on")
	}
	if err := checkThresholds(nb.Thresholds, k); err != nil {
		return nil, err
	}

	gauss := nb.ModelType == Gaussian
	var stats []float64
	if gauss {
		stats = gaussMoments(l, k)
	} else {
		stats = accumulate(l, k, nb.ModelType)
	}
	// The last slot flags invalid values.
	if bad := stats[len(stats)-1]; bad != 0 || !allFinite(stats) {
		ok, _ := valueCheck(nb.ModelType)
		if i, j := l.x.firstBad(ok); i >= 0 {
			localErr = badValue("NaiveBayes", nb.FeaturesCol, nb.ModelType, l.x, i, j)
		} else {
			localErr = fmt.Errorf("NaiveBayes: column %q: the feature sums overflow", nb.FeaturesCol)
		}
		stats[len(stats)-1] = 1
	}
	var err error
	if gauss {
		stats, err = gatherMoments(c, stats, k, width)
	} else {
		err = c.AllReduce(stats, ml.OpSum)
	}
	if err != nil {
		return nil, fmt.Errorf("NaiveBayes: %w", err)
	}
	if localErr != nil {
		return nil, localErr
	}
	if stats[len(stats)-1] != 0 {
		return nil, errors.New("NaiveBayes: another rank's data is invalid (see its error)")
	}

	m := &NaiveBayesModel{
		FeaturesCol:      nb.FeaturesCol,
		PredictionCol:    nb.PredictionCol,
		ProbabilityCol:   nb.ProbabilityCol,
		RawPredictionCol: nb.RawPredictionCol,
		ModelType:        nb.ModelType,
		Thresholds:       slices.Clone(nb.Thresholds),
		NumClasses:       k,
		NumFeatures:      width,
	}
	if gauss {
		err = m.gaussian(stats)
	} else {
		err = m.discrete(stats, nb.Smoothing)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if !finite(x) {
			return false
		}
	}
	return true
}

// accumulate returns [K class weights | K×d weighted feature sums |
// invalid flag] over l's rows, summed chunk by chunk on internal/parallel's workers
// (chunk results folded in order).
func accumulate(l local, k int, modelType string) []float64 {
	d := l.x.d
	size := k + k*d + 1
	mode := modeAny
	switch modelType {
	case Multinomial, Complement:
		mode = modeNonNeg
	case Bernoulli:
		mode = modeZeroOne
	}
	zero := make([]float64, size)
	return parallel.MapReduce(l.x.n, grain(d), zero,
		func(lo, hi int) []float64 {
			acc := make([]float64, size)
			var bad bool
			if l.x.f64 != nil {
				bad = sumRows(acc, l.x.f64, d, l.labels, l.w, k, nil, mode, lo, hi)
			} else {
				bad = sumRows(acc, l.x.f32, d, l.labels, l.w, k, nil, mode, lo, hi)
			}
			if bad {
				acc[size-1] = 1
			}
			return acc
		},
		func(acc, part []float64) []float64 {
			for i, v := range part {
				acc[i] += v
			}
			return acc
		})
}

const (
	modeAny = iota
	modeNonNeg
	modeZeroOne
)

// grain is the fewest rows of width d a chunk of the fitting pass takes
// (about 64 Ki values).
func grain(d int) int { return max(1, (1<<16)/max(d, 1)) }

// sumRows adds rows [lo, hi) of x into acc (the layout of accumulate, or
// with shift set that of gaussMoments: the weighted sums of x − shift and
// of its squares) and reports whether it met a value the mode rejects.
func sumRows[T float32 | float64](acc []float64, x []T, d int, labels []int, w []float64, k int, shift []float64, mode int, lo, hi int) (bad bool) {
	gauss := shift != nil
	sums := acc[k : k+k*d]
	var sqs []float64
	if gauss {
		sqs = acc[k+k*d : k+2*k*d]
	}
	for i := lo; i < hi; i++ {
		c := labels[i]
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		acc[c] += wi
		row := x[i*d : (i+1)*d]
		s := sums[c*d : (c+1)*d]
		switch {
		case gauss:
			q := sqs[c*d : (c+1)*d]
			if w == nil {
				for j, v := range row {
					f := float64(v) - shift[j]
					s[j] += f
					q[j] += f * f
				}
			} else {
				for j, v := range row {
					f := float64(v) - shift[j]
					wf := wi * f
					s[j] += wf
					q[j] += wf * f
				}
			}
		case mode == modeZeroOne:
			for j, v := range row {
				f := float64(v)
				if f != 0 && f != 1 {
					bad = true
				}
				s[j] += wi * f
			}
		default:
			for j, v := range row {
				f := float64(v)
				if f < 0 {
					bad = true
				}
				s[j] += wi * f
			}
		}
	}
	return bad
}

// discrete derives pi and theta of the multinomial, bernoulli and
// complement models from the summed statistics (Spark's formulas):
//
//	pi_c    = log(n_c + λ) − log(n + Kλ)
//	theta_cj = log(s_cj + λ) − log(Σ_j s_cj + dλ)     multinomial
//	theta_cj = log(s_cj + λ) − log(n_c + 2λ)           bernoulli
//	theta_cj = −(log(t_cj + λ) − log(Σ_j t_cj + dλ))   complement, t_cj = Σ_c' s_c'j − s_cj
func (m *NaiveBayesModel) discrete(stats []float64, lambda float64) error {
	k, d := m.NumClasses, m.NumFeatures
	counts, sums := stats[:k], stats[k:k+k*d]
	n := 0.0
	for _, v := range counts {
		n += v
	}
	if !(n > 0) {
		return errors.New("NaiveBayes: the total weight of the rows is 0")
	}
	m.Pi = make([]float64, k)
	m.Theta = make([]float64, k*d)
	piDenom := math.Log(n + float64(k)*lambda)
	var total []float64
	if m.ModelType == Complement {
		total = make([]float64, d)
		for c := range k {
			for j, v := range sums[c*d : (c+1)*d] {
				total[j] += v
			}
		}
	}
	row := make([]float64, d)
	for c := range k {
		m.Pi[c] = math.Log(counts[c]+lambda) - piDenom
		copy(row, sums[c*d:(c+1)*d])
		if total != nil {
			for j := range row {
				row[j] = total[j] - row[j]
			}
		}
		var denom float64
		if m.ModelType == Bernoulli {
			denom = math.Log(counts[c] + 2*lambda)
		} else {
			s := 0.0
			for _, v := range row {
				s += v
			}
			denom = math.Log(s + float64(d)*lambda)
		}
		th := m.Theta[c*d : (c+1)*d]
		for j, v := range row {
			th[j] = math.Log(v+lambda) - denom
			if total != nil {
				th[j] = -th[j]
			}
		}
	}
	for i, v := range m.Pi {
		if !finite(v) {
			return fmt.Errorf("NaiveBayes: class %d has no weight and smoothing is 0 (log 0); use smoothing > 0", i)
		}
	}
	for i, v := range m.Theta {
		if !finite(v) || (m.ModelType == Bernoulli && v >= 0) {
			return fmt.Errorf("NaiveBayes: class %d, feature %d: smoothing 0 leaves a probability of 0 or 1 (log 0); use smoothing > 0", i/d, i%d+1)
		}
	}
	return nil
}

// gaussMoments returns [K class weights | K×d class means | K×d sums of
// squared deviations from the class means (M2) | invalid flag] over l's
// rows. Each chunk sums x − (its first row) and the squares, which it
// turns into means and M2 (the shift keeps the subtraction S2 − S1²/W
// from cancelling when the mean is large beside the spread); chunks are
// merged in order as Chan, Golub and LeVeque merge partial variances.
func gaussMoments(l local, k int) []float64 {
	d := l.x.d
	size := k + 2*k*d + 1
	return parallel.MapReduce(l.x.n, grain(d), make([]float64, size),
		func(lo, hi int) []float64 {
			acc := make([]float64, size)
			shift := make([]float64, d)
			l.x.row(lo, shift)
			var bad bool
			if l.x.f64 != nil {
				bad = sumRows(acc, l.x.f64, d, l.labels, l.w, k, shift, modeAny, lo, hi)
			} else {
				bad = sumRows(acc, l.x.f32, d, l.labels, l.w, k, shift, modeAny, lo, hi)
			}
			means, m2 := acc[k:k+k*d], acc[k+k*d:k+2*k*d]
			for c := range k {
				wc := acc[c]
				for j := range d {
					i := c*d + j
					s1, s2 := means[i], m2[i]
					if !finite(s1) || !finite(s2) {
						bad = true
					}
					if wc > 0 {
						means[i] = shift[j] + s1/wc
						m2[i] = max(s2-s1*s1/wc, 0)
					} else {
						means[i], m2[i] = 0, 0
					}
				}
			}
			if bad {
				acc[size-1] = 1
			}
			return acc
		},
		func(acc, part []float64) []float64 {
			mergeMoments(acc, part, k, d)
			return acc
		})
}

// mergeMoments merges the moments b into a (Chan, Golub and LeVeque's
// pairwise update); the flags are added.
func mergeMoments(a, b []float64, k, d int) {
	for c := range k {
		wa, wb := a[c], b[c]
		if wb == 0 {
			continue
		}
		w := wa + wb
		ma, mb := a[k+c*d:k+(c+1)*d], b[k+c*d:k+(c+1)*d]
		qa, qb := a[k+k*d+c*d:k+k*d+(c+1)*d], b[k+k*d+c*d:k+k*d+(c+1)*d]
		for j := range d {
			delta := mb[j] - ma[j]
			ma[j] += delta * (wb / w)
			qa[j] += qb[j] + delta*delta*(wa*wb/w)
		}
		a[c] = w
	}
	a[len(a)-1] += b[len(b)-1]
}

// gatherMoments gathers every rank's moments and merges them in rank
// order, so that every rank ends with the same totals.
func gatherMoments(c ml.Comm, local []float64, k, d int) ([]float64, error) {
	all, err := ml.AllGatherFloats(c, local)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(local))
	for r, part := range all {
		if len(part) != len(local) {
			return nil, fmt.Errorf("rank %d sent %d moments, want %d", r, len(part), len(local))
		}
		mergeMoments(out, part, k, d)
	}
	return out, nil
}

// gaussian derives pi, theta (means) and sigma (variances) from the
// merged moments as Spark does: pi_c = log(n_c/n), population variances
// plus ε = 1e-9 · the largest variance of any feature over all rows.
func (m *NaiveBayesModel) gaussian(stats []float64) error {
	k, d := m.NumClasses, m.NumFeatures
	counts, means, m2 := stats[:k], stats[k:k+k*d], stats[k+k*d:k+2*k*d]
	n := 0.0
	for c, v := range counts {
		if !(v > 0) {
			return fmt.Errorf("NaiveBayes: class %d has no rows (or weight 0); gaussian naive Bayes needs every class 0..%d", c, k-1)
		}
		n += v
	}
	eps := 0.0
	for j := range d {
		mean := 0.0
		for c := range k {
			mean += counts[c] * means[c*d+j]
		}
		mean /= n
		q := 0.0
		for c := range k {
			e := means[c*d+j] - mean
			q += m2[c*d+j] + counts[c]*e*e
		}
		eps = max(eps, q/n)
	}
	eps *= gaussianVarSmoothing
	m.Pi = make([]float64, k)
	m.Theta = slices.Clone(means)
	m.Sigma = make([]float64, k*d)
	logN := math.Log(n)
	for c := range k {
		m.Pi[c] = math.Log(counts[c]) - logN
		for j := range d {
			i := c*d + j
			m.Sigma[i] = m2[i]/counts[c] + eps
			if !(m.Sigma[i] > 0) {
				return fmt.Errorf("NaiveBayes: feature %d: every feature is constant, gaussian naive Bayes needs some variance", j+1)
			}
		}
	}
	return nil
}

// NaiveBayesModel is a fitted NaiveBayes. Its transform adds the
// prediction (class index), the probability vector and rawPrediction: the
// log-posteriors up to a constant per row (Spark's).
type NaiveBayesModel struct {
	FeaturesCol      string    `json:"featuresCol"`
	PredictionCol    string    `json:"predictionCol"`
	ProbabilityCol   string    `json:"probabilityCol"`
	RawPredictionCol string    `json:"rawPredictionCol"`
	ModelType        string    `json:"modelType"`
	Thresholds       []float64 `json:"thresholds,omitempty"`
	NumClasses       int       `json:"numClasses"`
	NumFeatures      int       `json:"numFeatures"`

	// Pi holds the log class priors (K).
	Pi []float64 `json:"-"`
	// Theta is K × NumFeatures, row-major: the log feature probabilities
	// (multinomial, bernoulli), their complement's negation (complement),
	// or the class means (gaussian).
	Theta []float64 `json:"-"`
	// Sigma is K × NumFeatures, the class variances (gaussian only).
	Sigma []float64 `json:"-"`
}

// Type is "NaiveBayesModel".
func (m *NaiveBayesModel) Type() string { return "NaiveBayesModel" }

// Transform adds the prediction, probability and rawPrediction columns
// (an empty column name skips that output).
func (m *NaiveBayesModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := readRows(f, m.FeaturesCol)
	if err != nil {
		return nil, fmt.Errorf("NaiveBayesModel: %w", err)
	}
	if x.d != m.NumFeatures {
		return nil, fmt.Errorf("NaiveBayesModel: column %q has %d elements, the model was fitted on %d", m.FeaturesCol, x.d, m.NumFeatures)
	}
	ok, _ := valueCheck(m.ModelType)
	if i, j := x.firstBad(ok); i >= 0 {
		return nil, badValue("NaiveBayesModel", m.FeaturesCol, m.ModelType, x, i, j)
	}
	k, d := m.NumClasses, m.NumFeatures
	raw := make([]float64, x.n*k)
	prob := make([]float64, x.n*k)
	pred := make([]float64, x.n)
	sc := m.scorer()
	parallel.For(x.n, max(1, 4096/max(1, d*k)), func(lo, hi int) {
		row := make([]float64, d)
		for i := lo; i < hi; i++ {
			x.row(i, row)
			r := raw[i*k : (i+1)*k]
			sc.raw(row, r)
			p := prob[i*k : (i+1)*k]
			softmax(r, p)
			pred[i] = float64(m.predict(r, p))
		}
	})
	var cols []data.Column
	if m.RawPredictionCol != "" {
		cols = append(cols, ml.VectorOut(m.RawPredictionCol, k, raw))
	}
	if m.ProbabilityCol != "" {
		cols = append(cols, ml.VectorOut(m.ProbabilityCol, k, prob))
	}
	if m.PredictionCol != "" {
		cols = append(cols, ml.ScalarOut(m.PredictionCol, pred))
	}
	return ml.WithColumns(f, cols...)
}

// predict is Spark's: the argmax of probability/threshold when thresholds
// are set, otherwise of rawPrediction (first of equals).
func (m *NaiveBayesModel) predict(raw, prob []float64) int {
	best, arg := math.Inf(-1), 0
	for c := range raw {
		v := raw[c]
		if m.Thresholds != nil {
			v = prob[c] / m.Thresholds[c]
		}
		if v > best {
			best, arg = v, c
		}
	}
	return arg
}

// softmax writes the normalized exp(raw) to p.
func softmax(raw, p []float64) {
	top := math.Inf(-1)
	for _, v := range raw {
		top = max(top, v)
	}
	s := 0.0
	for c, v := range raw {
		p[c] = math.Exp(v - top)
		s += p[c]
	}
	for c := range p {
		p[c] /= s
	}
}

// scorer holds what rawPrediction needs, precomputed from the model.
type scorer struct {
	m      *NaiveBayesModel
	theta  []float64 // bernoulli: theta − log(1 − exp(theta)); gaussian: 1/sigma
	offset []float64 // per class
}

func (m *NaiveBayesModel) scorer() scorer {
	k, d := m.NumClasses, m.NumFeatures
	s := scorer{m: m, theta: m.Theta, offset: m.Pi}
	switch m.ModelType {
	case Bernoulli:
		s.theta = make([]float64, k*d)
		s.offset = slices.Clone(m.Pi)
		for i, t := range m.Theta {
			neg := math.Log1p(-math.Exp(t))
			s.theta[i] = t - neg
			s.offset[i/d] += neg
		}
	case Gaussian:
		s.theta = make([]float64, k*d)
		s.offset = make([]float64, k)
		for i, v := range m.Sigma {
			s.theta[i] = 1 / v
			s.offset[i/d] += math.Log(v)
		}
	}
	return s
}

// raw writes the rawPrediction of one row x to r (Spark's predictRaw).
func (s scorer) raw(x, r []float64) {
	m := s.m
	d := m.NumFeatures
	switch m.ModelType {
	case Gaussian:
		for c := range r {
			mu, inv := m.Theta[c*d:(c+1)*d], s.theta[c*d:(c+1)*d]
			q := 0.0
			for j, v := range x {
				e := v - mu[j]
				q += e * e * inv[j]
			}
			r[c] = m.Pi[c] - (q+s.offset[c])/2
		}
	case Complement:
		top := math.Inf(-1)
		for c := range r {
			r[c] = dot(s.theta[c*d:(c+1)*d], x)
			top = max(top, r[c])
		}
		sum := 0.0
		for _, v := range r {
			sum += math.Exp(v - top)
		}
		lse := math.Log(sum) + top
		for c := range r {
			r[c] -= lse
		}
	default:
		for c := range r {
			r[c] = s.offset[c] + dot(s.theta[c*d:(c+1)*d], x)
		}
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range b {
		s += a[i] * v
	}
	return s
}

// Encode stores the columns and type as params and pi, theta (and sigma)
// as arrays.
func (m *NaiveBayesModel) Encode() (ml.Encoded, error) {
	arrays := map[string]ml.Array{
		"pi":    ml.Vec(m.Pi),
		"theta": ml.Mat(m.NumClasses, m.NumFeatures, m.Theta),
	}
	if m.ModelType == Gaussian {
		arrays["sigma"] = ml.Mat(m.NumClasses, m.NumFeatures, m.Sigma)
	}
	return ml.Encoded{Params: m, Arrays: arrays}, nil
}

func decodeModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	m := &NaiveBayesModel{}
	if err := ml.DecodeParams(raw, m); err != nil {
		return nil, err
	}
	switch m.ModelType {
	case Multinomial, Bernoulli, Gaussian, Complement:
	default:
		return nil, fmt.Errorf("unknown modelType %q", m.ModelType)
	}
	if m.NumClasses < 1 || m.NumFeatures < 0 {
		return nil, fmt.Errorf("bad numClasses %d or numFeatures %d", m.NumClasses, m.NumFeatures)
	}
	if err := checkThresholds(m.Thresholds, m.NumClasses); err != nil {
		return nil, err
	}
	pi, err := ml.Need(arrays, "pi", m.NumClasses)
	if err != nil {
		return nil, err
	}
	theta, err := ml.Need(arrays, "theta", m.NumClasses, m.NumFeatures)
	if err != nil {
		return nil, err
	}
	m.Pi, m.Theta = pi.Data, theta.Data
	if m.ModelType == Gaussian {
		sigma, err := ml.Need(arrays, "sigma", m.NumClasses, m.NumFeatures)
		if err != nil {
			return nil, err
		}
		m.Sigma = sigma.Data
	}
	return m, nil
}

func init() {
	ml.RegisterStage("NaiveBayes", func() ml.Stage { return NewNaiveBayes() })
	ml.RegisterModel("NaiveBayesModel", decodeModel)
}
