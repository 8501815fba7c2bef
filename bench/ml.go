package bench

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/cluster"
	"github.com/fathom-ml/fathom/ml/decomp"
	"github.com/fathom-ml/fathom/ml/mljob"
)

// MLRecipe is one `fathom bench ml` algorithm: a registered stage type
// and its params (YAML, decoded strictly over its defaults), set as the
// scikit-learn peer (shared/anchors/python/job5_sklearn.py) is.
type MLRecipe struct {
	Stage  string
	Params string
	Peer   string
	// COne sets regParam to 1/n for the n training rows: scikit-learn's
	// C = 1 (sklearn sums the loss, Spark averages it, so C is Spark's
	// regParam = 1/(C·n)).
	COne bool
}

// MLRecipes are the algorithms of `fathom bench ml`, by name.
var MLRecipes = map[string]MLRecipe{
	"logreg": {"LogisticRegression",
		"{family: multinomial, maxIter: 100, standardization: false, tol: 1e-12}",
		"LogisticRegression(multi_class='multinomial', solver='lbfgs', max_iter=100, C=1.0)", true},
	"gnb": {"NaiveBayes", "{modelType: gaussian}", "GaussianNB()", false},
	"linsvc": {"LinearSVC",
		"{loss: squared_hinge, maxIter: 100, standardization: false, tol: 1e-12}",
		"LinearSVC(C=1, squared hinge, one-vs-rest, max_iter=1000)", true},
	"mlp": {"MultilayerPerceptronClassifier", "{layers: [784, 100, 10], maxIter: 100, precision: float32}",
		"MLPClassifier(hidden_layer_sizes=(100,), solver='lbfgs', max_iter=100)", false},
	"kmeans": {"KMeans", "{k: 10, maxIter: 100}",
		"KMeans(n_clusters=10, n_init=1, max_iter=100, algorithm='lloyd')", false},
	"pca": {"PCA", "{k: 50}", "PCA(n_components=50, svd_solver='randomized')", false},
}

// MLAlgos returns the names of MLRecipes, sorted.
func MLAlgos() []string { return slices.Sorted(maps.Keys(MLRecipes)) }

// MLHelp lists the algorithms with their stage, params and peer, for
// the command's help.
func MLHelp() string {
	var b strings.Builder
	for _, k := range MLAlgos() {
		r := MLRecipes[k]
		reg := ""
		if r.COne {
			reg = " regParam 1/rows"
		}
		fmt.Fprintf(&b, "  %-7s %s %s%s\n          (peer: %s)\n", k, r.Stage, r.Params, reg, r.Peer)
	}
	return b.String()
}

// MLOptions are the settings of `fathom bench ml`.
type MLOptions struct {
	Algo    string   // a key of MLRecipes
	Rows    int      // fit on the first Rows training rows (0: all)
	Threads int      // GOMAXPROCS for the run (0: all cores)
	Params  []string // key=value overrides of the recipe's params (YAML values)
}

// MLResult is the line of `fathom bench ml --json`.
type MLResult struct {
	Algo         string  `json:"algo"`
	Stage        string  `json:"stage"`
	Params       string  `json:"params"`
	TrainRows    int     `json:"train_rows"`
	TestRows     int     `json:"test_rows"`
	Threads      int     `json:"threads"`
	FitSeconds   float64 `json:"fit_seconds"`
	Iterations   int     `json:"iterations,omitempty"`
	TestAccuracy float64 `json:"test_accuracy,omitempty"`
	Skipped      bool    `json:"skipped,omitempty"`
	Reason       string  `json:"reason,omitempty"`

	// Unsupervised is set for kmeans and pca: Inertia or
	// ExplainedVarianceRatioSum instead of TestAccuracy.
	Unsupervised bool `json:"-"`
	// Inertia (kmeans) is the fitted model's sum of squared distances.
	Inertia float64 `json:"inertia,omitempty"`
	// ExplainedVarianceRatioSum (pca) is the variance the components keep.
	ExplainedVarianceRatioSum float64 `json:"explained_variance_ratio_sum,omitempty"`
}

// ML fits the recipe o.Algo on the Fashion-MNIST training set (pixels/255
// as a features vector) and scores it on the 10 000 test rows (or, for a
// clustering or decomposition, reports inertia or explained variance).
// Without Fashion-MNIST the result is Skipped, with the Reason, and no
// error.
func ML(o MLOptions) (MLResult, error) {
	r, ok := MLRecipes[o.Algo]
	if !ok {
		return MLResult{}, fmt.Errorf("bench ml: unknown algorithm %q (want one of %s)", o.Algo, strings.Join(MLAlgos(), ", "))
	}
	if o.Threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(o.Threads))
	}
	res := MLResult{Algo: o.Algo, Stage: r.Stage, Params: r.Params, Threads: runtime.GOMAXPROCS(0)}
	wrap := func(err error) (MLResult, error) { return res, fmt.Errorf("bench ml %s: %w", o.Algo, err) }
	st, err := mljob.NewStage(r.Stage, r.Params)
	if err != nil {
		return wrap(err)
	}
	if err := mljob.SetParams(st, o.Params); err != nil {
		return wrap(err)
	}
	est, ok := st.(ml.Estimator)
	if !ok {
		return wrap(fmt.Errorf("%s is not an estimator", r.Stage))
	}
	if reason := FashionMNISTMissing(); reason != "" {
		res.Skipped, res.Reason = true, reason
		return res, nil
	}
	train, test, err := fashionFrames(o.Rows)
	if err != nil {
		return wrap(err)
	}
	res.TrainRows, res.TestRows = train.Len(), test.Len()
	if r.COne && !slices.ContainsFunc(o.Params, func(s string) bool { return strings.HasPrefix(s, "regParam=") }) {
		reg := fmt.Sprintf("regParam=%v", 1/float64(train.Len()))
		if err := mljob.SetParams(st, []string{reg}); err != nil {
			return wrap(err)
		}
		res.Params = strings.TrimSuffix(res.Params, "}") + ", " + strings.Replace(reg, "=", ": ", 1) + "}"
	}
	start := time.Now()
	m, err := est.Fit(ml.Local(train))
	if err != nil {
		return wrap(err)
	}
	res.FitSeconds = time.Since(start).Seconds()
	res.Iterations = mljob.Iterations(m)
	if res.Unsupervised = unsupervisedResult(m, &res); res.Unsupervised {
		return res, nil
	}
	out, err := m.Transform(test)
	if err != nil {
		return wrap(err)
	}
	if res.TestAccuracy, err = Accuracy(out); err != nil {
		return wrap(err)
	}
	return res, nil
}

// fashionFrames returns the first rows rows (all for 0) of the
// Fashion-MNIST training set and the whole test set as frames
// (ml.TableFrame).
func fashionFrames(rows int) (train, test *data.Frame, err error) {
	trainT, err := data.LoadFashionMNIST("train")
	if err != nil {
		return nil, nil, err
	}
	testT, err := data.LoadFashionMNIST("t10k")
	if err != nil {
		return nil, nil, err
	}
	if train, err = ml.TableFrame(trainT); err != nil {
		return nil, nil, err
	}
	if rows > 0 && rows < train.Len() {
		train = train.Slice(0, rows)
	}
	test, err = ml.TableFrame(testT)
	return train, test, err
}

// unsupervisedResult fills res from a clustering or decomposition model
// (inertia, explained variance) and reports whether m was one.
func unsupervisedResult(m ml.Model, res *MLResult) bool {
	switch m := m.(type) {
	case *cluster.KMeansModel:
		res.Inertia = m.TrainingCost
		return true
	case *decomp.PCAModel:
		s := 0.0
		for _, v := range m.ExplainedVariance {
			s += v
		}
		res.ExplainedVarianceRatioSum = s
		return true
	}
	return false
}

// Accuracy is the fraction of the rows of f whose prediction column
// equals the label column.
func Accuracy(f *data.Frame) (float64, error) {
	p, err := ml.Numbers(f, ml.PredictionCol)
	if err != nil {
		return 0, err
	}
	y, err := ml.Numbers(f, ml.LabelCol)
	if err != nil {
		return 0, err
	}
	right := 0
	for i := range p {
		if p[i] == y[i] {
			right++
		}
	}
	return float64(right) / float64(max(len(p), 1)), nil
}

// CheckMLRecipe builds the recipe's stage (its params decoded strictly).
func CheckMLRecipe(r MLRecipe) error {
	st, err := mljob.NewStage(r.Stage, r.Params)
	if err != nil {
		return err
	}
	if _, ok := st.(ml.Estimator); !ok {
		return fmt.Errorf("%s is not an estimator", r.Stage)
	}
	return nil
}
