package glm

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

func frameOf(t *testing.T, width int, x, y []float64) *data.Frame {
	t.Helper()
	f, err := data.NewFrame(
		data.NewVectorColumn("features", width, x, nil, nil),
		data.NewColumn("label", y, nil))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func peer(name string) peerCase {
	for _, pc := range peerCases {
		if pc.name == name {
			return pc
		}
	}
	panic("no peer case " + name)
}

func TestBadInput(t *testing.T) {
	x := []float64{1, 2, 2, 1, 3, 5, 4, 3, 5, 6}
	y := []float64{1, 0, 1, 1, 0}
	for _, tc := range []struct {
		name string
		set  func(*GeneralizedLinearRegression)
		x, y []float64
		want string
	}{
		{"family", func(g *GeneralizedLinearRegression) { g.Family = "laplace" }, x, y, `family must be gaussian, binomial, poisson, gamma or tweedie, got "laplace"`},
		{"link", func(g *GeneralizedLinearRegression) { g.Family = Binomial; g.Link = Log }, x, y, `the binomial family supports the links [logit probit cloglog], got "log"`},
		{"maxIter", func(g *GeneralizedLinearRegression) { g.MaxIter = 0 }, x, y, "maxIter must be ≥ 1, got 0"},
		{"tol", func(g *GeneralizedLinearRegression) { g.Tol = -1 }, x, y, "tol must be ≥ 0, got -1"},
		{"regParam", func(g *GeneralizedLinearRegression) { g.RegParam = math.NaN() }, x, y, "regParam must be ≥ 0"},
		{"variancePower", func(g *GeneralizedLinearRegression) { g.Family = Tweedie; g.VariancePower = 0.5 }, x, y, "variancePower must be 0 or ≥ 1, got 0.5"},
		{"tweedie link", func(g *GeneralizedLinearRegression) { g.Family = Tweedie; g.Link = Log }, x, y, "set linkPower"},
		{"linkPower", func(g *GeneralizedLinearRegression) { g.LinkPower = ptr(0) }, x, y, "linkPower is only for the tweedie family"},
		{"binomial label", func(g *GeneralizedLinearRegression) { g.Family = Binomial }, x, []float64{1, 0, 2, 1, 0}, `column "label", row 3: label 2: the binomial needs a label in [0, 1]`},
		{"poisson label", func(g *GeneralizedLinearRegression) { g.Family = Poisson }, x, []float64{1, 0, 2, -1, 0}, `row 4: label -1: the poisson needs a non-negative label`},
		{"gamma label", func(g *GeneralizedLinearRegression) { g.Family = Gamma }, x, []float64{1, 3, 2, 1, 0}, `row 5: label 0: the gamma needs a positive label`},
		{"tweedie label", func(g *GeneralizedLinearRegression) { g.Family = Tweedie; g.VariancePower = 1.5 }, x, []float64{1, -3, 2, 1, 0}, `row 2: label -3: the tweedie needs a non-negative label`},
		{"nan feature", nil, []float64{1, 2, 2, 1, math.NaN(), 5, 4, 3, 5, 6}, y, `column "features", row 3, element 1: NaN is not a finite number`},
		{"duplicate column", nil, []float64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, y, "singular design"},
		{"constant column", nil, []float64{1, 7, 2, 7, 3, 7, 4, 7, 5, 7}, y, "singular design"},
		{"too few rows", nil, []float64{1, 2, 2, 1}, []float64{1, 2}, "singular design"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGeneralizedLinearRegression()
			if tc.set != nil {
				tc.set(g)
			}
			m, err := g.Fit(ml.Local(frameOf(t, 2, tc.x, tc.y)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fit: model %v, err %v; want an error containing %q", m, err, tc.want)
			}
		})
	}
}

// TestNotConverged: IRLS stopped by maxIter returns the last iterate, with
// Converged false and a warning, not an error or NaN.
func TestNotConverged(t *testing.T) {
	pc := peer("binomial-cloglog")
	g := pc.estimator()
	g.MaxIter = 2
	m, err := g.Fit(ml.Local(pc.frame(t)))
	if err != nil {
		t.Fatal(err)
	}
	gm := m.(*GeneralizedLinearRegressionModel)
	s := gm.Summary
	if s.Converged || s.NumIterations != 2 || !strings.Contains(s.Warning, "did not converge in 2 iterations") {
		t.Fatalf("converged %v after %d iterations, warning %q", s.Converged, s.NumIterations, s.Warning)
	}
	for _, v := range append(append([]float64{gm.Intercept, s.Deviance, s.AIC}, gm.Coefficients...), s.CoefficientStandardErrors...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite value in %+v", gm)
		}
	}
}

// TestRegParam: with an L2 penalty, the gaussian fit is the minimum of
// Spark's objective Σ w r² / (2 Σ w) + λ/2 ‖β‖² (intercept not penalized):
// its gradient, computed here directly, is zero.
func TestRegParam(t *testing.T) {
	pc := peer("gaussian-identity-weighted")
	g := pc.estimator()
	g.RegParam = 0.3
	m, err := g.Fit(ml.Local(pc.frame(t)))
	if err != nil {
		t.Fatal(err)
	}
	gm := m.(*GeneralizedLinearRegressionModel)
	d := pc.cols
	grad := make([]float64, d+1)
	sw := 0.0
	for i := range pc.rows {
		x := pc.x[i*d : (i+1)*d]
		r := pc.y[i] - gm.Intercept
		for j, v := range x {
			r -= v * gm.Coefficients[j]
		}
		for j, v := range x {
			grad[j] -= pc.w[i] * r * v
		}
		grad[d] -= pc.w[i] * r
		sw += pc.w[i]
	}
	for j := range grad {
		grad[j] /= sw
		if j < d {
			grad[j] += g.RegParam * gm.Coefficients[j]
		}
		if math.Abs(grad[j]) > 1e-12 {
			t.Fatalf("gradient[%d] = %g at the fitted coefficients %v", j, grad[j], gm.Coefficients)
		}
	}
	// And the penalty shrinks: ‖β‖ is smaller than without it.
	norm := func(v []float64) float64 { return math.Sqrt(dot(v, v)) }
	if norm(gm.Coefficients) >= norm(pc.coefficients) {
		t.Fatalf("‖β‖ = %g with regParam, %g without", norm(gm.Coefficients), norm(pc.coefficients))
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestTransform: prediction = g⁻¹(x·β + intercept + offset), the link
// prediction is the linear predictor, and the offset column is required.
func TestTransform(t *testing.T) {
	pc := peer("poisson-log-offset-weights")
	f := pc.frame(t)
	m, err := pc.estimator().Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	gm := m.(*GeneralizedLinearRegressionModel)
	out, err := m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := out.Float64s("prediction")
	eta, _ := out.Float64s("eta")
	for i := range pc.rows {
		e := gm.Intercept + pc.offset[i] + dot(gm.Coefficients, pc.x[i*pc.cols:(i+1)*pc.cols])
		if math.Abs(eta[i]-e) > 1e-12*max(1, math.Abs(e)) || math.Abs(pred[i]-math.Exp(e)) > 1e-12*math.Exp(e) {
			t.Fatalf("row %d: eta %g prediction %g, want %g and %g", i+1, eta[i], pred[i], e, math.Exp(e))
		}
	}
	noOffset, _ := f.Drop("offset")
	if _, err := m.Transform(noOffset); err == nil || !strings.Contains(err.Error(), `no column "offset"`) {
		t.Fatalf("Transform without the offset column: %v", err)
	}
	narrow := frameOf(t, 1, []float64{1}, []float64{1})
	if _, err := m.Transform(narrow); err == nil || !strings.Contains(err.Error(), "1 elements, the model was fitted on 3") {
		t.Fatalf("Transform of a narrower vector: %v", err)
	}
}

// TestTweedieSpecialPowers: tweedie with variancePower 1 and the log link
// is the poisson model (Spark's Family.fromParams), except that its
// dispersion is estimated (the family is not named poisson).
func TestTweedieSpecialPowers(t *testing.T) {
	pc := peer("poisson-log")
	tw := pc.estimator()
	tw.Family, tw.Link, tw.VariancePower, tw.LinkPower = Tweedie, "", 1, ptr(0)
	a, err := tw.Fit(ml.Local(pc.frame(t)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := pc.estimator().Fit(ml.Local(pc.frame(t)))
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := a.(*GeneralizedLinearRegressionModel), b.(*GeneralizedLinearRegressionModel)
	for j := range ma.Coefficients {
		if math.Abs(ma.Coefficients[j]-mb.Coefficients[j]) > 1e-12 {
			t.Fatalf("coefficient %d: tweedie(1) %g, poisson %g", j, ma.Coefficients[j], mb.Coefficients[j])
		}
	}
	if ma.Summary.Deviance != mb.Summary.Deviance {
		t.Fatalf("deviance: tweedie(1) %g, poisson %g", ma.Summary.Deviance, mb.Summary.Deviance)
	}
	if ma.Summary.Dispersion == 1 {
		t.Fatal("tweedie's dispersion should be Pearson's, not 1")
	}
}

// TestSeparation: perfectly separated binomial data has no finite
// maximum-likelihood estimate: the fit stops at maxIter with a warning
// saying so, and finite numbers.
func TestSeparation(t *testing.T) {
	g := NewGeneralizedLinearRegression()
	g.Family = Binomial
	m, err := g.Fit(ml.Local(frameOf(t, 1, []float64{1, 2, 3, 4, 5, 6}, []float64{0, 0, 0, 1, 1, 1})))
	if err != nil {
		t.Fatal(err)
	}
	s := m.(*GeneralizedLinearRegressionModel).Summary
	if s.Converged || !strings.Contains(s.Warning, "perfectly separated") {
		t.Fatalf("converged %v, warning %q", s.Converged, s.Warning)
	}
}

// TestRankErrors: a rank with a bad label fails with its error naming the
// row, and the other ranks fail too instead of waiting for it.
func TestRankErrors(t *testing.T) {
	pc := peer("poisson-log")
	f := pc.frame(t)
	y := append([]float64(nil), pc.y[:20]...)
	y[4] = -2
	bad := frameOf(t, pc.cols, pc.x[:20*pc.cols], y)
	mltest.FailOnOneRank(t, func() ml.Estimator { return pc.estimator() }, 3, 1, func(r int) *data.Frame {
		if r == 1 {
			return bad
		}
		return f.Slice(20*r, 20*r+20)
	}, "row 5: label -2", "another rank")
}

// TestSingularIs: a singular design's error wraps ml.ErrSingular.
func TestSingularIs(t *testing.T) {
	_, err := NewGeneralizedLinearRegression().Fit(ml.Local(frameOf(t, 2, []float64{1, 2, 2, 4, 3, 6, 4, 8}, []float64{1, 2, 3, 5})))
	if !errors.Is(err, ml.ErrSingular) {
		t.Fatalf("collinear columns: %v, want ml.ErrSingular", err)
	}
}

// TestWeightsAreCounts: integer weights give the coefficients and the
// deviance of the rows repeated (the residual degrees of freedom, and so
// the standard errors of estimated-dispersion families, count rows).
func TestWeightsAreCounts(t *testing.T) {
	for _, name := range []string{"binomial-logit", "gamma-log", "poisson-identity"} {
		t.Run(name, func(t *testing.T) {
			pc := peer(name)
			w := make([]float64, pc.rows)
			var rx, ry []float64
			for i := range pc.rows {
				w[i] = float64(1 + i%3)
				for range int(w[i]) {
					rx = append(rx, pc.x[i*pc.cols:(i+1)*pc.cols]...)
					ry = append(ry, pc.y[i])
				}
			}
			weighted := pc
			weighted.w = w
			a, err := weighted.estimator().Fit(ml.Local(weighted.frame(t)))
			if err != nil {
				t.Fatal(err)
			}
			b, err := pc.estimator().Fit(ml.Local(frameOf(t, pc.cols, rx, ry)))
			if err != nil {
				t.Fatal(err)
			}
			ma, mb := a.(*GeneralizedLinearRegressionModel), b.(*GeneralizedLinearRegressionModel)
			for j := range ma.Coefficients {
				relClose(t, "coefficient", ma.Coefficients[j], mb.Coefficients[j], 1e-9)
			}
			relClose(t, "intercept", ma.Intercept, mb.Intercept, 1e-9)
			relClose(t, "deviance", ma.Summary.Deviance, mb.Summary.Deviance, 1e-9)
			if name == "binomial-logit" {
				relClose(t, "AIC", ma.Summary.AIC, mb.Summary.AIC, 1e-9)
				relClose(t, "standard error", ma.Summary.CoefficientStandardErrors[0], mb.Summary.CoefficientStandardErrors[0], 1e-9)
			}
		})
	}
}

// TestRegistered: configs build the estimator by name, with Spark's
// defaults, and a JSON config decodes over them.
func TestRegistered(t *testing.T) {
	s, err := ml.NewStage("GeneralizedLinearRegression")
	if err != nil {
		t.Fatal(err)
	}
	g := s.(*GeneralizedLinearRegression)
	if err := json.Unmarshal([]byte(`{"family": "tweedie", "variancePower": 1.5, "linkPower": 0}`), g); err != nil {
		t.Fatal(err)
	}
	if g.MaxIter != 25 || g.Tol != 1e-6 || !g.FitIntercept || g.Family != Tweedie || g.LinkPower == nil || *g.LinkPower != 0 {
		t.Fatalf("decoded over the defaults: %+v", g)
	}
}

// TestEmptyRank: a rank without rows joins the fit and gets the model.
func TestEmptyRank(t *testing.T) {
	pc := peer("gamma-log")
	emptyFirst := func(f *data.Frame, r, n int) *data.Frame {
		if r == 0 {
			return f.Slice(0, 0)
		}
		return mltest.SplitRows(f, r-1, n-1)
	}
	mltest.Check(t, func() ml.Estimator { return pc.estimator() }, pc.frame(t), mltest.Options{Ranks: []int{2, 3}, Split: emptyFirst})
}
