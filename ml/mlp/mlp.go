package mlp

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/optim"
)

func init() {
	ml.RegisterStage(typeClassifier, func() ml.Stage { return NewMultilayerPerceptronClassifier() })
	ml.RegisterModel(typeModel, decodeModel)
}

const (
	typeClassifier = "MultilayerPerceptronClassifier"
	typeModel      = "MultilayerPerceptronClassificationModel"
)

// Solvers of MultilayerPerceptronClassifier.Solver.
const (
	SolverLBFGS = "l-bfgs" // L-BFGS with a strong-Wolfe line search (the default)
	SolverGD    = "gd"     // full-batch gradient descent, step stepSize/√iteration
)

// Precisions of MultilayerPerceptronClassifier.Precision.
const (
	Float64 = "float64" // the default: distributed fits equal the single-process one within 1e-9
	Float32 = "float32" // float32 GEMMs, about twice as fast; see Precision
)

// MultilayerPerceptronClassifier is Spark ML's feed-forward neural network
// classifier: sigmoid hidden layers, a softmax output layer, the mean
// cross-entropy loss, fitted full-batch by L-BFGS (or gradient descent).
// Labels are class indices 0, 1, ..., layers[len−1]−1.
//
// The fields are the parameters, with Spark ML's names and defaults (see
// NewMultilayerPerceptronClassifier); RegParam and Precision are fathom's.
type MultilayerPerceptronClassifier struct {
	// Layers are the layer sizes, input first, output last: [784, 100, 10]
	// is 784 features, one hidden layer of 100 units and 10 classes. As in
	// Spark they must be given; fathom also accepts 0 for the input size
	// (the features' width) and the output size (one more than the largest
	// label), which Spark does not.
	Layers []int `json:"layers" yaml:"layers"`
	// BlockSize is Spark's size of the row blocks stacked into matrices
	// [128]. It is accepted for compatibility and ignored: fathom always
	// computes on all of a rank's rows at once.
	BlockSize int `json:"blockSize" yaml:"blockSize"`
	// MaxIter is the number of iterations [100].
	MaxIter int `json:"maxIter" yaml:"maxIter"`
	// Tol is the convergence tolerance [1e-6]: for L-BFGS, the change of
	// the loss between iterations relative to max(|loss|, 1) (L-BFGS
	// also stops when every gradient entry is below 1e-7 in magnitude);
	// for gd, of the weights (Spark's GradientDescent test
	// ‖Δw‖ < tol·max(‖w‖, 1)).
	Tol float64 `json:"tol" yaml:"tol"`
	// Seed draws the initial weights [0].
	Seed int64 `json:"seed" yaml:"seed"`
	// Solver is "l-bfgs" [default] or "gd".
	Solver string `json:"solver" yaml:"solver"`
	// StepSize is gd's step [0.03] (divided by √iteration, as Spark's
	// SimpleUpdater); L-BFGS ignores it.
	StepSize float64 `json:"stepSize" yaml:"stepSize"`
	// InitialWeights, if set, are the starting weights in Spark's layout
	// (see MultilayerPerceptronClassificationModel.Weights) instead of
	// random ones; their number must fit the layers.
	InitialWeights []float64 `json:"initialWeights,omitempty" yaml:"initialWeights,omitempty"`
	// RegParam is an L2 penalty on the weights (not the biases) [0: none,
	// as Spark, which has no penalty here]: the loss is the mean
	// cross-entropy plus regParam/2·‖W‖². scikit-learn's MLPClassifier
	// alpha (1e-4 by default) adds alpha/(2·rows)·‖W‖², that is
	// regParam = alpha/rows (1.7e-9 on Fashion-MNIST's 60,000 rows: no
	// measurable effect).
	RegParam float64 `json:"regParam" yaml:"regParam"`
	// Precision is "float64" [default] or "float32": the precision of the
	// forward and backward passes (the weights, the loss sums and the
	// optimizer stay float64). float32 runs the GEMMs about twice as fast;
	// every rank still gets the same model, but it differs from the
	// single-process one by float32 rounding, amplified by the
	// iterations, not within 1e-9.
	Precision string `json:"precision" yaml:"precision"`

	FeaturesCol      string `json:"featuresCol" yaml:"featuresCol"`
	LabelCol         string `json:"labelCol" yaml:"labelCol"`
	PredictionCol    string `json:"predictionCol" yaml:"predictionCol"`
	ProbabilityCol   string `json:"probabilityCol" yaml:"probabilityCol"`
	RawPredictionCol string `json:"rawPredictionCol" yaml:"rawPredictionCol"`
}

// NewMultilayerPerceptronClassifier returns the classifier with Spark ML's
// defaults; Layers must still be set.
func NewMultilayerPerceptronClassifier() *MultilayerPerceptronClassifier {
	return &MultilayerPerceptronClassifier{
		BlockSize:        128,
		MaxIter:          100,
		Tol:              1e-6,
		Solver:           SolverLBFGS,
		StepSize:         0.03,
		Precision:        Float64,
		FeaturesCol:      ml.FeaturesCol,
		LabelCol:         ml.LabelCol,
		PredictionCol:    ml.PredictionCol,
		ProbabilityCol:   ml.ProbabilityCol,
		RawPredictionCol: ml.RawPredictionCol,
	}
}

// Type returns "MultilayerPerceptronClassifier".
func (e *MultilayerPerceptronClassifier) Type() string { return typeClassifier }

// Copy returns an independent copy.
func (e *MultilayerPerceptronClassifier) Copy() ml.Estimator {
	c := *e
	c.Layers = slices.Clone(e.Layers)
	c.InitialWeights = slices.Clone(e.InitialWeights)
	return &c
}

// validate checks the parameters that do not depend on the data.
func (e *MultilayerPerceptronClassifier) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: "+format, append([]any{typeClassifier}, a...)...)
	}
	switch {
	case len(e.Layers) < 2:
		return bad("layers must list at least the input and output sizes ([input, hidden..., output], e.g. [784, 100, 10]; 0 as input or output size means \"from the data\"), got %v", e.Layers)
	case e.BlockSize <= 0:
		return bad("blockSize must be > 0, got %d", e.BlockSize)
	case e.MaxIter < 0:
		return bad("maxIter must be ≥ 0, got %d", e.MaxIter)
	case e.Tol < 0 || math.IsNaN(e.Tol):
		return bad("tol must be ≥ 0, got %g", e.Tol)
	case e.Solver != SolverLBFGS && e.Solver != SolverGD:
		return bad("solver must be %q or %q, got %q", SolverLBFGS, SolverGD, e.Solver)
	case !(e.StepSize > 0) || math.IsInf(e.StepSize, 0):
		return bad("stepSize must be > 0, got %g", e.StepSize)
	case !(e.RegParam >= 0) || math.IsInf(e.RegParam, 0):
		return bad("regParam must be ≥ 0, got %g", e.RegParam)
	case e.Precision != Float64 && e.Precision != Float32:
		return bad("precision must be %q or %q, got %q", Float64, Float32, e.Precision)
	case e.FeaturesCol == "" || e.LabelCol == "":
		return bad("featuresCol and labelCol must be set")
	}
	last := len(e.Layers) - 1
	for i, s := range e.Layers {
		if s < 0 || (s == 0 && i != 0 && i != last) {
			return bad("layers[%d] = %d: hidden layer sizes must be > 0 (only the input and output sizes may be 0, \"from the data\")", i, s)
		}
	}
	if e.Layers[last] == 1 {
		return bad("the output layer has 1 unit: a classifier needs at least 2 classes")
	}
	for i, v := range e.InitialWeights {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("initialWeights[%d] = %g is not a finite number", i, v)
		}
	}
	return nil
}

// Fit trains the network on d's rows (over every rank of d.Comm).
func (e *MultilayerPerceptronClassifier) Fit(d ml.Data) (ml.Model, error) {
	if err := e.validate(); err != nil {
		return nil, err
	}
	c := d.C()
	fail := func(err error) error {
		if c.Size() > 1 {
			return fmt.Errorf("%s: rank %d: %w", typeClassifier, c.Rank(), err)
		}
		return fmt.Errorf("%s: %w", typeClassifier, err)
	}

	x, labels, topLabel, err := e.readAgreed(d)
	if err != nil {
		return nil, fail(err)
	}
	layers, err := e.layerSizes(x.Cols, topLabel, labels)
	if err != nil {
		return nil, fail(err)
	}
	last := len(layers) - 1

	// Class counts (and so the row count) over every rank.
	k := layers[last]
	counts := make([]float64, k)
	for _, l := range labels {
		counts[l]++
	}
	if err := c.AllReduce(counts, ml.OpSum); err != nil {
		return nil, fail(err)
	}
	rows, present := 0.0, 0
	for _, n := range counts {
		rows += n
		if n > 0 {
			present++
		}
	}
	if present < 2 {
		return nil, fail(fmt.Errorf("column %q has a single class (%d): a classifier needs rows of at least two classes", e.LabelCol, topLabel))
	}

	top := newTopology(layers)
	w0 := e.InitialWeights
	switch {
	case w0 == nil:
		w0 = top.initWeights(e.Seed)
	case len(w0) != top.size:
		return nil, fail(fmt.Errorf("initialWeights has %d values, layers %v need %d", len(w0), layers, top.size))
	}

	var lossGrad func(w, g []float64) float64
	if e.Precision == Float32 {
		lossGrad = newNetwork(top, featureMajor[float32](x), labels, x.Rows, kernel.Sgemm).lossGrad
	} else {
		lossGrad = newNetwork(top, featureMajor[float64](x), labels, x.Rows, kernel.Dgemm).lossGrad
	}
	x = features{} // the network has its own, feature-major copy
	obj := &objective{top: top, comm: c, rows: rows, reg: e.RegParam, local: lossGrad, buf: make([]float64, 1+top.size)}

	var (
		w     []float64
		iters int
		loss  float64
	)
	switch {
	case e.MaxIter == 0:
		w = slices.Clone(w0)
		loss = obj.eval(w, make([]float64, top.size))
	case e.Solver == SolverGD:
		w, loss, iters = e.descend(obj, w0)
	default:
		var res optim.Result
		res, err = optim.MinimizeLBFGS(obj.eval, w0, optim.MinimizeOptions{
			MaxIter: e.MaxIter,
			MaxEval: 10 * e.MaxIter,
			// optim reads 0 as "its default"; tol 0 means "only an
			// unchanged loss stops", as in Spark.
			FuncTol:   max(e.Tol, math.SmallestNonzeroFloat64),
			Iteration: d.Report,
		})
		w, loss, iters = res.X, res.F, res.Iterations
	}
	if obj.err != nil {
		return nil, fail(obj.err)
	}
	if err != nil {
		return nil, fail(err)
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return nil, fail(fmt.Errorf("the loss is %g after %d iterations", loss, iters))
	}
	return &MultilayerPerceptronClassificationModel{
		Layers:           layers,
		Weights:          w,
		Iterations:       iters,
		Evaluations:      obj.calls,
		Loss:             loss,
		FeaturesCol:      e.FeaturesCol,
		PredictionCol:    e.PredictionCol,
		ProbabilityCol:   e.ProbabilityCol,
		RawPredictionCol: e.RawPredictionCol,
	}, nil
}

// readAgreed reads this rank's rows, then agrees with the other ranks on
// whether every rank's rows are good (a rank must not return early while
// the others wait in a collective), on the feature width and on the
// largest label, which it returns.
func (e *MultilayerPerceptronClassifier) readAgreed(d ml.Data) (features, []int32, int, error) {
	c := d.C()
	x, labels, localErr := readRows(d, e.FeaturesCol, e.LabelCol)
	st := []float64{0, -1, -1, 1}
	if localErr != nil {
		st[0] = 1
	} else {
		st[2], st[3] = float64(x.Cols), -float64(x.Cols)
		for _, l := range labels {
			st[1] = max(st[1], float64(l))
		}
	}
	if err := c.AllReduce(st, ml.OpMax); err != nil {
		return x, nil, 0, err
	}
	switch {
	case localErr != nil:
		return x, nil, 0, localErr
	case st[0] > 0:
		return x, nil, 0, ml.ErrOtherRank
	case st[2] != -st[3]:
		return x, nil, 0, fmt.Errorf("column %q has %d values per row on this rank, but the ranks' widths range from %g to %g", e.FeaturesCol, x.Cols, -st[3], st[2])
	}
	topLabel := int(st[1])
	if topLabel < 0 {
		return x, nil, 0, errors.New("no rows to fit on")
	}
	return x, labels, topLabel, nil
}

// layerSizes returns the layer sizes: e.Layers with a first 0 taken from
// the feature width and a last 0 from the largest label, checked against
// both.
func (e *MultilayerPerceptronClassifier) layerSizes(width, topLabel int, labels []int32) ([]int, error) {
	layers := slices.Clone(e.Layers)
	last := len(layers) - 1
	if layers[0] == 0 {
		layers[0] = width
	}
	if layers[last] == 0 {
		layers[last] = max(topLabel+1, 2)
	}
	if layers[0] != width {
		return nil, fmt.Errorf("layers[0] = %d, but column %q has %d values per row (set layers[0] to %d, or to 0 to take it from the data)", e.Layers[0], e.FeaturesCol, width, width)
	}
	if topLabel >= layers[last] {
		for i, l := range labels {
			if int(l) >= layers[last] {
				return nil, fmt.Errorf("column %q, row %d: label %d, but the output layer has %d units (labels must be < layers[%d] = %d)", e.LabelCol, i+1, l, layers[last], last, layers[last])
			}
		}
		return nil, fmt.Errorf("a label on another rank is %d, but the output layer has %d units (labels must be < layers[%d])", topLabel, layers[last], last)
	}
	return layers, nil
}

// descend is Spark's GradientDescent with miniBatchFraction 1 and its
// SimpleUpdater: w ← w − stepSize/√t·∇f(w), stopping once
// ‖Δw‖ < tol·max(‖w‖, 1).
func (e *MultilayerPerceptronClassifier) descend(obj *objective, w0 []float64) (w []float64, loss float64, iters int) {
	w = slices.Clone(w0)
	g := make([]float64, len(w))
	for t := 1; t <= e.MaxIter; t++ {
		loss = obj.eval(w, g)
		if obj.err != nil || math.IsNaN(loss) {
			return w, loss, t - 1
		}
		step := e.StepSize / math.Sqrt(float64(t))
		var dw2, w2 float64
		for i, gi := range g {
			d := step * gi
			w[i] -= d
			dw2 += d * d
			w2 += w[i] * w[i]
		}
		iters = t
		if t > 1 && math.Sqrt(dw2) < e.Tol*max(math.Sqrt(w2), 1) {
			break
		}
	}
	return w, obj.eval(w, g), iters
}

// objective is the loss the solvers minimize: every rank's summed
// cross-entropy and gradient, all-reduced in one call, divided by the row
// count, plus the L2 penalty.
type objective struct {
	top   topology
	comm  ml.Comm
	rows  float64
	reg   float64
	local func(w, g []float64) float64
	buf   []float64 // [loss, grad...] for the all-reduce
	err   error     // the first collective's error
	calls int       // evaluations so far
}

func (o *objective) eval(w, grad []float64) float64 {
	if o.err != nil {
		return math.NaN()
	}
	o.calls++
	o.buf[0] = o.local(w, o.buf[1:])
	if err := o.comm.AllReduce(o.buf, ml.OpSum); err != nil {
		o.err = err
		return math.NaN()
	}
	inv := 1 / o.rows
	loss := o.buf[0] * inv
	for i, v := range o.buf[1:] {
		grad[i] = v * inv
	}
	if o.reg > 0 {
		pen := 0.0
		for l := range o.top.affine() {
			for i := o.top.wOff[l]; i < o.top.bOff[l]; i++ {
				pen += w[i] * w[i]
				grad[i] += o.reg * w[i]
			}
		}
		loss += o.reg / 2 * pen
	}
	return loss
}

// readRows reads this rank's features and labels (class indices).
func readRows(d ml.Data, featuresCol, labelCol string) (features, []int32, error) {
	if d.Frame == nil {
		return features{}, nil, errors.New("no data frame")
	}
	x, err := readFeatures(d.Frame, featuresCol)
	if err != nil {
		return features{}, nil, err
	}
	v, err := ml.Numbers(d.Frame, labelCol)
	if err != nil {
		return features{}, nil, err
	}
	labels := make([]int32, len(v))
	for i, l := range v {
		if l < 0 || l != math.Trunc(l) || l > 1<<30 {
			return features{}, nil, fmt.Errorf("column %q, row %d: label %g is not a class index 0, 1, 2, ... (index string labels with StringIndexer)", labelCol, i+1, l)
		}
		labels[i] = int32(l)
	}
	return x, labels, nil
}

// features are a features column's values, row-major, in the column's
// own precision (one of f64 and f32 is set): a float32 column (as
// Fashion-MNIST's) goes to the float32 passes without a float64 copy.
type features struct {
	Rows, Cols int
	f64        []float64
	f32        []float32
}

// readFeatures reads column col of f as ml.Features does (with its
// errors), keeping a float32 vector column without nulls as it is.
func readFeatures(f *data.Frame, col string) (features, error) {
	if vc, ok := f.Col(col).(*data.VectorColumn); ok && vc.Float32s() != nil && vc.NullCount() == 0 && vc.ElemValid() == nil {
		v, w := vc.Float32s(), max(vc.Width(), 1)
		for i, x := range v {
			if x != x || math.IsInf(float64(x), 0) {
				return features{}, fmt.Errorf("column %q, row %d, element %d: %g is not a finite number", col, i/w+1, i%w+1, x)
			}
		}
		return features{Rows: vc.Len(), Cols: vc.Width(), f32: v}, nil
	}
	m, err := ml.Features(f, col)
	return features{Rows: m.Rows, Cols: m.Cols, f64: m.Data}, err
}

// featureMajor returns x transposed (see network) in T.
func featureMajor[T float](x features) []T {
	if x.f32 != nil {
		return transpose[T](x.f32, x.Rows, x.Cols)
	}
	return transpose[T](x.f64, x.Rows, x.Cols)
}
