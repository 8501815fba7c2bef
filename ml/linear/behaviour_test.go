package linear

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// With standardization the penalty applies to the coefficients of the
// unit-variance features: fitting X with standardization equals fitting
// X/σ without it, the coefficients divided by σ.
func TestStandardizationIsPenaltyInScaledSpace(t *testing.T) {
	rows := readCSV(t, "reg.csv")
	f := frameOf(t, rows, seq(4), map[string]int{"label": 4})
	fd, err := loadFitData(ml.Local(f), "test", "features", "label", "", false)
	if err != nil {
		t.Fatal(err)
	}
	scaled := make([][]float64, len(rows))
	for i, r := range rows {
		scaled[i] = append([]float64(nil), r...)
		for j := range 4 {
			scaled[i][j] /= fd.std[j]
		}
	}
	fs := frameOf(t, scaled, seq(4), map[string]int{"label": 4})
	cf := clsFrame(t)
	cfd, err := loadFitData(ml.Local(cf), "test", "features", "label3", "", true)
	if err != nil {
		t.Fatal(err)
	}
	crows := readCSV(t, "cls.csv")
	for i, r := range crows {
		for j := range 4 {
			r[j] /= cfd.std[j]
		}
		crows[i] = r
	}
	cfs := frameOf(t, crows, seq(4), map[string]int{"label3": 5})
	for _, c := range []struct {
		name   string
		est    func(std bool) ml.Estimator
		a, b   *data.Frame
		sigma  []float64
		coefOf func(ml.Model) []float64
	}{
		{"ridge normal", func(std bool) ml.Estimator {
			e := NewLinearRegression()
			e.RegParam, e.Standardization, e.Solver = 0.3, std, "normal"
			return e
		}, f, fs, fd.std, func(m ml.Model) []float64 { return m.(*LinearRegressionModel).Coefficients }},
		{"elastic net", func(std bool) ml.Estimator {
			e := NewLinearRegression()
			e.RegParam, e.ElasticNetParam, e.Standardization, e.Tol, e.MaxIter = 0.3, 0.4, std, 1e-15, 1000
			return e
		}, f, fs, fd.std, func(m ml.Model) []float64 { return m.(*LinearRegressionModel).Coefficients }},
		{"multinomial", func(std bool) ml.Estimator {
			e := NewLogisticRegression()
			e.LabelCol, e.RegParam, e.Standardization, e.Tol, e.MaxIter = "label3", 0.05, std, 1e-15, 1000
			return e
		}, cf, cfs, cfd.std, func(m ml.Model) []float64 { return m.(*LogisticRegressionModel).Coefficients }},
	} {
		ma, err := c.est(true).Fit(ml.Local(c.a))
		if err != nil {
			t.Fatal(err)
		}
		mb, err := c.est(false).Fit(ml.Local(c.b))
		if err != nil {
			t.Fatal(err)
		}
		ca, cb := c.coefOf(ma), c.coefOf(mb)
		want := make([]float64, len(cb))
		for i, v := range cb {
			want[i] = v / c.sigma[i%4]
		}
		// The two runs take different paths (centred or not) to the same
		// minimizer: agreement to the solver's accuracy.
		checkClose(t, c.name, ca, want, 1e-6)
	}
}

// The normal equations and L-BFGS minimize the same objective.
func TestNormalEqualsLBFGS(t *testing.T) {
	rows := readCSV(t, "reg.csv")
	for i, r := range rows {
		rows[i] = append(r, 1+float64(i%5))
	}
	f := frameOf(t, rows, seq(4), map[string]int{"label": 4, "w": 5})
	for _, std := range []bool{true, false} {
		for _, icpt := range []bool{true, false} {
			var ms [2]*LinearRegressionModel
			for i, solver := range []string{"normal", "l-bfgs"} {
				e := NewLinearRegression()
				e.RegParam, e.Standardization, e.FitIntercept, e.Solver, e.WeightCol = 0.2, std, icpt, solver, "w"
				e.Tol, e.MaxIter = 1e-15, 1000
				m, err := e.Fit(ml.Local(f))
				if err != nil {
					t.Fatal(err)
				}
				ms[i] = m.(*LinearRegressionModel)
			}
			checkClose(t, "coefficients", ms[1].Coefficients, ms[0].Coefficients, 1e-7)
			checkClose(t, "intercept", []float64{ms[1].Intercept}, []float64{ms[0].Intercept}, 1e-7)
			if !closeTo(ms[1].Objective, ms[0].Objective, 1e-12) || ms[0].Objective <= 0 {
				t.Errorf("objective: l-bfgs %.15g, normal %.15g", ms[1].Objective, ms[0].Objective)
			}
		}
	}
}

// A weight of 2 is the row twice.
func TestWeightIsRepetition(t *testing.T) {
	rows := readCSV(t, "cls.csv")
	var weighted, repeated [][]float64
	for i, r := range rows {
		w := float64(1 + i%2)
		weighted = append(weighted, append(append([]float64(nil), r...), w))
		for range int(w) {
			repeated = append(repeated, append(append([]float64(nil), r...), 1))
		}
	}
	fit := func(rows [][]float64) *LogisticRegressionModel {
		e := NewLogisticRegression()
		// Without standardization: Spark's (and our) feature variance
		// treats weights as reliability weights, not repetitions.
		e.LabelCol, e.WeightCol, e.RegParam, e.Tol, e.MaxIter = "label", "w", 0.03, 1e-15, 1000
		e.Standardization = false
		m, err := e.Fit(ml.Local(frameOf(t, rows, seq(4), map[string]int{"label": 5, "w": 6})))
		if err != nil {
			t.Fatal(err)
		}
		return m.(*LogisticRegressionModel)
	}
	a, b := fit(weighted), fit(repeated)
	checkClose(t, "coefficients", a.Coefficients, b.Coefficients, 1e-7)
	checkClose(t, "intercepts", a.Intercepts, b.Intercepts, 1e-7)
}

func TestConstantLabel(t *testing.T) {
	rows := readCSV(t, "cls.csv")
	for _, r := range rows {
		r[4], r[5] = 1, 2
	}
	f := frameOf(t, rows, seq(4), map[string]int{"ones": 4, "twos": 5})
	check := func(m ml.Model, wantPred float64) {
		t.Helper()
		out, err := m.Transform(f)
		if err != nil {
			t.Fatal(err)
		}
		pred, _ := ml.Numbers(out, "prediction")
		for _, p := range pred {
			if p != wantPred {
				t.Fatalf("prediction %g, want %g", p, wantPred)
			}
		}
		prob := out.Col("probability").(*data.VectorColumn).Float64s()
		for _, p := range prob {
			if math.IsNaN(p) {
				t.Fatal("NaN probability")
			}
		}
	}
	// Binomial, every label 1: zero coefficients, intercept +∞.
	e := NewLogisticRegression()
	e.LabelCol = "ones"
	m, err := e.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	lm := m.(*LogisticRegressionModel)
	if !math.IsInf(lm.Intercepts[0], 1) || lm.NumClasses != 2 {
		t.Errorf("binomial: intercepts %v, %d classes", lm.Intercepts, lm.NumClasses)
	}
	for _, c := range lm.Coefficients {
		if c != 0 {
			t.Fatalf("binomial: coefficients %v", lm.Coefficients)
		}
	}
	check(m, 1)
	// Multinomial, every label 2 of 3: +∞ for class 2, −∞ for the others.
	e.LabelCol, e.Family = "twos", "multinomial"
	m, err = e.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	lm = m.(*LogisticRegressionModel)
	if !math.IsInf(lm.Intercepts[2], 1) || !math.IsInf(lm.Intercepts[0], -1) || !math.IsInf(lm.Intercepts[1], -1) {
		t.Errorf("multinomial: intercepts %v", lm.Intercepts)
	}
	check(m, 2)
	// Linear regression: zero coefficients, the label as intercept.
	r := NewLinearRegression()
	r.LabelCol = "twos"
	rm, err := r.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	if lr := rm.(*LinearRegressionModel); lr.Intercept != 2 || lr.Coefficients[0] != 0 {
		t.Errorf("linear regression: intercept %g, coefficients %v", lr.Intercept, lr.Coefficients)
	}
}

func TestSingularDesign(t *testing.T) {
	rows := readCSV(t, "reg.csv")
	for i, r := range rows {
		rows[i] = append(r[:4:4], r[0], r[4]) // feature 0 twice
	}
	f := frameOf(t, rows, seq(5), map[string]int{"label": 5})
	e := NewLinearRegression()
	e.Solver = "normal"
	_, err := e.Fit(ml.Local(f))
	if !errors.Is(err, ml.ErrSingular) || !strings.Contains(err.Error(), "regParam > 0") {
		t.Fatalf("solver normal: err = %v, want ErrSingular suggesting regParam > 0", err)
	}
	// auto falls back to L-BFGS (Spark's behaviour): one of the minimizers,
	// with the duplicated feature's weight split between its copies.
	e.Solver, e.Tol, e.MaxIter = "auto", 1e-15, 1000
	m, err := e.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	lm := m.(*LinearRegressionModel)
	if lm.Solver != "l-bfgs" || !closeTo(lm.Coefficients[0]+lm.Coefficients[4], 1.5126011433510014, 1e-6) {
		t.Errorf("auto: solver %s, coefficients %v", lm.Solver, lm.Coefficients)
	}
	// With a ridge penalty the normal equations are regular again.
	e.Solver, e.RegParam = "normal", 0.1
	if _, err := e.Fit(ml.Local(f)); err != nil {
		t.Errorf("normal with regParam 0.1: %v", err)
	}
}

func TestBadParams(t *testing.T) {
	f := clsFrame(t)
	for _, c := range []struct {
		est  ml.Estimator
		want string
	}{
		{&LogisticRegression{Params: Params{RegParam: -1}}, "LogisticRegression: regParam must be ≥ 0, got -1"},
		{func() ml.Estimator { e := NewLogisticRegression(); e.ElasticNetParam = 2; return e }(), "elasticNetParam must be in [0, 1]"},
		{func() ml.Estimator {
			e := NewLogisticRegression()
			e.LabelCol, e.Family = "label2", "poisson"
			return e
		}(), "family must be"},
		{func() ml.Estimator {
			e := NewLogisticRegression()
			e.LabelCol = "label3"
			e.Family = "binomial"
			return e
		}(), "family binomial"},
		{func() ml.Estimator {
			e := NewLogisticRegression()
			e.LabelCol = "label3"
			e.Thresholds = []float64{1, 2}
			return e
		}(), "thresholds has 2 values for 3 classes"},
		{func() ml.Estimator { e := NewLogisticRegression(); e.LabelCol = "nope"; return e }(), `no column "nope"`},
		{func() ml.Estimator { e := NewLinearRegression(); e.Solver = "qr"; return e }(), "solver must be"},
		{func() ml.Estimator { e := NewLinearRegression(); e.MaxIter = -1; return e }(), "maxIter must be ≥ 0"},
		{func() ml.Estimator { e := NewLinearSVC(); e.Loss = "log"; return e }(), "loss must be"},
		{func() ml.Estimator { e := NewLinearSVC(); e.LabelCol = "weight"; return e }(), "is not a class index"},
	} {
		_, err := c.est.Fit(ml.Local(f))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.est.Type(), err, c.want)
		}
	}
	// A string in the features column: an error naming the column.
	sf, _ := data.NewFrame(data.NewColumn("features", []string{"1", "x"}, nil), data.NewColumn("label", []float64{0, 1}, nil))
	if _, err := NewLogisticRegression().Fit(ml.Local(sf)); err == nil || !strings.Contains(err.Error(), `"features"`) {
		t.Errorf("string features: err = %v", err)
	}
}

func TestThresholds(t *testing.T) {
	f := clsFrame(t)
	e := NewLogisticRegression()
	e.LabelCol = "label2"
	m, err := e.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	lm := m.(*LogisticRegressionModel)
	count := func(m *LogisticRegressionModel) (ones int) {
		out, err := m.Transform(f)
		if err != nil {
			t.Fatal(err)
		}
		pred, _ := ml.Numbers(out, "prediction")
		prob := out.Col("probability").(*data.VectorColumn).Float64s()
		for i, p := range pred {
			if p == 1 {
				ones++
			}
			if want := prob[2*i+1] > m.Threshold; len(m.Thresholds) == 0 && want != (p == 1) {
				t.Fatalf("row %d: prediction %g with P(1) = %g, threshold %g", i, p, prob[2*i+1], m.Threshold)
			}
		}
		return ones
	}
	base := count(lm)
	lm.Threshold = 0.9
	high := count(lm)
	lm.Threshold = 0.1
	low := count(lm)
	if !(high < base && base < low) {
		t.Errorf("ones predicted at thresholds 0.9, 0.5, 0.1: %d, %d, %d", high, base, low)
	}
	lm.Thresholds = []float64{1, 0} // class 1 whenever P(1) > 0
	if n := count(lm); n != f.Len() {
		t.Errorf("thresholds [1 0]: %d ones of %d", n, f.Len())
	}
}

func TestRegistered(t *testing.T) {
	for _, c := range []struct {
		typ  string
		want ml.Stage
	}{{"LinearRegression", NewLinearRegression()}, {"LogisticRegression", NewLogisticRegression()}, {"LinearSVC", NewLinearSVC()}} {
		s, err := ml.NewStage(c.typ)
		if err != nil || s.Type() != c.typ {
			t.Fatalf("NewStage(%q) = %v, %v", c.typ, s, err)
		}
	}
	if e := NewLogisticRegression(); e.MaxIter != 100 || e.Tol != 1e-6 || !e.FitIntercept || !e.Standardization || e.Threshold != 0.5 || e.Family != "auto" {
		t.Errorf("defaults: %+v", e)
	}
}

// A constant feature is collinear with the intercept: its coefficient is
// 0 (Spark, glmnet), whatever the solver; without an intercept it is an
// ordinary feature.
func TestConstantFeature(t *testing.T) {
	rows := readCSV(t, "reg.csv")
	for i, r := range rows {
		rows[i] = append(r[:4:4], 5, r[4])
	}
	f := frameOf(t, rows, seq(5), map[string]int{"label": 5})
	for _, solver := range []string{"normal", "l-bfgs"} {
		for _, std := range []bool{true, false} {
			e := NewLinearRegression()
			e.Solver, e.Standardization, e.RegParam, e.Tol, e.MaxIter = solver, std, 0.01, 1e-15, 1000
			m, err := e.Fit(ml.Local(f))
			if err != nil {
				t.Fatalf("%s: %v", solver, err)
			}
			if c := m.(*LinearRegressionModel).Coefficients; c[4] != 0 {
				t.Errorf("%s standardization=%v: constant feature's coefficient %g", solver, std, c[4])
			}
		}
	}
	e := NewLinearRegression()
	e.FitIntercept = false
	m, err := e.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	// Without an intercept the constant column plays its part: the OLS
	// intercept (testdata/peer_sklearn.py) divided by 5.
	if c := m.(*LinearRegressionModel).Coefficients; !closeTo(c[4]*5, 2.878868183604317, 1e-9) {
		t.Errorf("no intercept: coefficients %v", c)
	}
}

// LinearSVC on one class: a finite model predicting that class.
func TestLinearSVCOneClass(t *testing.T) {
	rows := readCSV(t, "cls.csv")
	for _, r := range rows {
		r[4] = 1
	}
	f := frameOf(t, rows, seq(4), map[string]int{"label": 4})
	m, err := NewLinearSVC().Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := ml.Numbers(out, "prediction")
	for i, p := range pred {
		if p != 1 {
			t.Fatalf("row %d: prediction %g", i, p)
		}
	}
}

// Features far from zero relative to their spread: the normal equations
// are formed on centred data, so no digits are lost.
func TestNormalEquationsLargeMeans(t *testing.T) {
	rows := readCSV(t, "reg.csv")
	for _, r := range rows {
		for j := range 4 {
			r[j] += 1e6
		}
	}
	e := NewLinearRegression()
	e.Solver = "normal"
	m, err := e.Fit(ml.Local(frameOf(t, rows, seq(4), map[string]int{"label": 4})))
	if err != nil {
		t.Fatal(err)
	}
	// OLS is shift-invariant: testdata/peer_sklearn.py's coefficients.
	checkClose(t, "coefficients", m.(*LinearRegressionModel).Coefficients,
		[]float64{1.5126011433510014, -0.699386970568052, 1.8411042255791563, -0.04240479649071878}, 1e-7)
}

// Unstandardized features far from zero: the solver still converges (the
// features are centred inside it).
func TestLBFGSLargeMeans(t *testing.T) {
	for _, off := range []float64{100, 1e4, 1e6} {
		rows := readCSV(t, "reg.csv")
		for _, r := range rows {
			for j := range 4 {
				r[j] += off
			}
		}
		e := NewLinearRegression()
		e.Solver, e.Standardization = "l-bfgs", false
		m, err := e.Fit(ml.Local(frameOf(t, rows, seq(4), map[string]int{"label": 4})))
		if err != nil {
			t.Fatal(err)
		}
		// Default tolerance: agreement with OLS to about 1e-4.
		checkClose(t, "coefficients", m.(*LinearRegressionModel).Coefficients,
			[]float64{1.5126011433510014, -0.699386970568052, 1.8411042255791563, -0.04240479649071878}, 1e-4)
	}
}

// maxIter = 0 returns the starting point (Spark): zero coefficients and,
// for logistic regression, the intercept of the class prior.
func TestMaxIterZero(t *testing.T) {
	f := clsFrame(t)
	e := NewLogisticRegression()
	e.LabelCol, e.MaxIter = "label2", 0
	m, err := e.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	lm := m.(*LogisticRegressionModel)
	labels, _ := ml.Numbers(f, "label2")
	ones := 0.0
	for _, v := range labels {
		ones += v
	}
	want := math.Log(ones / (float64(len(labels)) - ones))
	if !closeTo(lm.Intercepts[0], want, 1e-12) || lm.Coefficients[0] != 0 {
		t.Errorf("intercept %g (want %g), coefficients %v", lm.Intercepts[0], want, lm.Coefficients)
	}
}
