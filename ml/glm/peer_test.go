package glm

import (
	"math"
	"strconv"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// peerCase is one data set with statsmodels' GLM results on it
// (peer_values_test.go, written by testdata/peer_statsmodels.py).
type peerCase struct {
	name            string
	family, link    string
	variancePower   float64
	linkPower       *float64
	fitIntercept    bool
	rows, cols      int
	x, y, w, offset []float64
	coefficients    []float64
	intercept       float64
	stdErrors       []float64 // coefficients, then the intercept
	pValues         []float64 // two-sided, as Spark (see the script)
	deviance        float64
	nullDeviance    float64 // −1: not comparable (no intercept)
	dispersion, aic float64 // aic −1: none (tweedie)
	dfResid         float64
}

func ptr(v float64) *float64 { return &v }

func (pc peerCase) frame(t testing.TB) *data.Frame {
	t.Helper()
	cols := []data.Column{
		data.NewVectorColumn("features", pc.cols, pc.x, nil, nil),
		data.NewColumn("label", pc.y, nil),
	}
	if pc.w != nil {
		cols = append(cols, data.NewColumn("weight", pc.w, nil))
	}
	if pc.offset != nil {
		cols = append(cols, data.NewColumn("offset", pc.offset, nil))
	}
	f, err := data.NewFrame(cols...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// estimator returns the estimator for the case; tight convergence, so
// that the comparison measures the model and not the stopping rule
// (statsmodels ran with tol 1e-14).
func (pc peerCase) estimator() *GeneralizedLinearRegression {
	g := NewGeneralizedLinearRegression()
	g.Family = pc.family
	if pc.family != Tweedie {
		g.Link = pc.link
	}
	g.VariancePower = pc.variancePower
	g.LinkPower = pc.linkPower
	g.FitIntercept = pc.fitIntercept
	g.Tol = 1e-12
	g.MaxIter = 100
	g.LinkPredictionCol = "eta"
	if pc.w != nil {
		g.WeightCol = "weight"
	}
	if pc.offset != nil {
		g.OffsetCol = "offset"
	}
	return g
}

func relClose(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol*max(math.Abs(want), 1e-300) {
		t.Errorf("%s = %.15g, statsmodels %.15g (relative difference %.2g)", what, got, want, math.Abs(got-want)/math.Abs(want))
	}
}

// TestAgainstStatsmodels pins coefficients, standard errors, p-values,
// deviance,
// null deviance, dispersion, residual degrees of freedom and AIC (Spark's
// definition, computed by the script with scipy) within 1e-6 relative.
func TestAgainstStatsmodels(t *testing.T) {
	for _, pc := range peerCases {
		t.Run(pc.name, func(t *testing.T) {
			m, err := pc.estimator().Fit(ml.Local(pc.frame(t)))
			if err != nil {
				t.Fatal(err)
			}
			gm := m.(*GeneralizedLinearRegressionModel)
			s := gm.Summary
			if !s.Converged {
				t.Fatalf("not converged: %s", s.Warning)
			}
			const tol = 1e-6
			for j, c := range pc.coefficients {
				relClose(t, "coefficient "+strconv.Itoa(j), gm.Coefficients[j], c, tol)
			}
			if pc.fitIntercept {
				relClose(t, "intercept", gm.Intercept, pc.intercept, tol)
			}
			for j, se := range pc.stdErrors {
				relClose(t, "standard error "+strconv.Itoa(j), s.CoefficientStandardErrors[j], se, tol)
			}
			relClose(t, "deviance", s.Deviance, pc.deviance, tol)
			if pc.nullDeviance >= 0 {
				relClose(t, "null deviance", s.NullDeviance, pc.nullDeviance, tol)
			}
			relClose(t, "dispersion", s.Dispersion, pc.dispersion, tol)
			if float64(s.ResidualDegreeOfFreedom) != pc.dfResid {
				t.Errorf("residual degrees of freedom %d, statsmodels %g", s.ResidualDegreeOfFreedom, pc.dfResid)
			}
			if pc.aic == -1 {
				if !math.IsNaN(s.AIC) {
					t.Errorf("AIC %g, want NaN (none for tweedie)", s.AIC)
				}
			} else {
				relClose(t, "AIC", s.AIC, pc.aic, tol)
			}
			for j := range pc.stdErrors {
				want := s.CoefficientStandardErrors[j]
				est := gm.Intercept
				if j < len(gm.Coefficients) {
					est = gm.Coefficients[j]
				}
				if got := s.TValues[j]; math.Abs(got-est/want) > 1e-12*math.Abs(got) {
					t.Errorf("t value %d = %g, want %g", j, got, est/want)
				}
				relClose(t, "p-value "+strconv.Itoa(j), s.PValues[j], pc.pValues[j], tol)
			}
		})
	}
}

// TestConformance runs mltest.Check (save/load, 1..4 ranks) on every
// peer case (the summary's arrays are compared too).
func TestConformance(t *testing.T) {
	for _, pc := range peerCases {
		t.Run(pc.name, func(t *testing.T) {
			mltest.Check(t, func() ml.Estimator { return pc.estimator() }, pc.frame(t), mltest.Options{})
		})
	}
}
