package linear

import (
	"fmt"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// BenchResult is one Fashion-MNIST benchmark fit (see BenchFashionMNIST).
type BenchResult struct {
	Algo         string  `json:"algo"`
	FitSeconds   float64 `json:"fit_seconds"`
	Iterations   int     `json:"iterations"`
	Evaluations  int     `json:"evaluations"`
	Objective    float64 `json:"objective"`
	TestAccuracy float64 `json:"test_accuracy"`
}

// TableFrame returns a data.Table (features and class labels) as a frame
// with a float32 "features" vector column and a float64 "label" column.
func TableFrame(t *data.Table) (*data.Frame, error) {
	if t.Labels == nil {
		return nil, fmt.Errorf("table has no class labels")
	}
	y := make([]float64, t.Rows)
	for i, l := range t.Labels {
		y[i] = float64(l)
	}
	return data.NewFrame(data.NewVectorColumn32(ml.FeaturesCol, t.Cols, t.X, nil, nil), data.NewColumn(ml.LabelCol, y, nil))
}

// BenchEstimator returns the estimator of a Fashion-MNIST benchmark with
// the settings of the scikit-learn peer (shared/anchors/python/job5_sklearn.py),
// for n training rows:
//
//   - "logreg": LogisticRegression(C=1, solver="lbfgs", max_iter=100),
//     multinomial: regParam = 1/(C·n), no standardization, no L1, 100
//     iterations (the tolerance is set so that all of them run);
//   - "linsvc": LinearSVC(C=1), squared hinge, one-vs-rest: regParam =
//     1/(C·n), no standardization, 100 L-BFGS iterations for the ten
//     problems together.
func BenchEstimator(algo string, n int) (ml.Estimator, error) {
	switch algo {
	case "logreg":
		e := NewLogisticRegression()
		e.RegParam = 1 / float64(n)
		e.Standardization = false
		e.Family = "multinomial"
		e.MaxIter, e.Tol = 100, 1e-12
		return e, nil
	case "linsvc":
		e := NewLinearSVC()
		e.Loss = "squared_hinge"
		e.RegParam = 1 / float64(n)
		e.Standardization = false
		e.MaxIter, e.Tol = 100, 1e-12
		return e, nil
	}
	return nil, fmt.Errorf("linear: unknown benchmark %q (logreg, linsvc)", algo)
}

// BenchFashionMNIST fits BenchEstimator(algo) on the Fashion-MNIST
// training set (60 000 × 784, pixels/255) in this process and scores it on
// the test set (10 000 rows). FitSeconds times Fit alone (not loading).
func BenchFashionMNIST(algo string) (BenchResult, error) {
	train, err := data.LoadFashionMNIST("train")
	if err != nil {
		return BenchResult{}, err
	}
	test, err := data.LoadFashionMNIST("t10k")
	if err != nil {
		return BenchResult{}, err
	}
	return BenchTables(algo, train, test)
}

// BenchTables is BenchFashionMNIST on given training and test tables.
func BenchTables(algo string, train, test *data.Table) (BenchResult, error) {
	e, err := BenchEstimator(algo, train.Rows)
	if err != nil {
		return BenchResult{}, err
	}
	tf, err := TableFrame(train)
	if err != nil {
		return BenchResult{}, err
	}
	sf, err := TableFrame(test)
	if err != nil {
		return BenchResult{}, err
	}
	start := time.Now()
	m, err := e.Fit(ml.Local(tf))
	if err != nil {
		return BenchResult{}, err
	}
	res := BenchResult{Algo: algo, FitSeconds: time.Since(start).Seconds()}
	switch m := m.(type) {
	case *LogisticRegressionModel:
		res.Iterations, res.Evaluations, res.Objective = m.Iterations, m.Evaluations, m.Objective
	case *LinearSVCModel:
		res.Iterations, res.Evaluations, res.Objective = m.Iterations, m.Evaluations, m.Objective
	}
	out, err := m.Transform(sf)
	if err != nil {
		return BenchResult{}, err
	}
	pred, err := ml.Numbers(out, ml.PredictionCol)
	if err != nil {
		return BenchResult{}, err
	}
	right := 0
	for i, p := range pred {
		if int64(p) == test.Labels[i] {
			right++
		}
	}
	res.TestAccuracy = float64(right) / float64(len(pred))
	return res, nil
}
