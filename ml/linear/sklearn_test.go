package linear

import (
	"testing"

	"github.com/fathom-ml/fathom/ml"
)

// The numbers below were printed by testdata/peer_sklearn.py (scikit-learn
// 1.2.1), which also wrote testdata/reg.csv (60 rows: 4 features, label)
// and testdata/cls.csv (90 rows: 4 features, a 2-class and a 3-class
// label). Tolerance: 1e-4 relative, as the issue asks.
const sklearnTol = 1e-4

func TestLinearRegressionMatchesSklearn(t *testing.T) {
	rows := readCSV(t, "reg.csv")
	f := frameOf(t, rows, seq(4), map[string]int{"label": 4})
	n := float64(len(rows))
	for _, c := range []struct {
		name    string
		reg, en float64
		solver  string
		coef    []float64
		icpt    float64
	}{
		// LinearRegression()
		{"ols normal", 0, 0, "normal", []float64{1.5126011433510014, -0.699386970568052, 1.8411042255791563, -0.04240479649071878}, 2.878868183604317},
		{"ols l-bfgs", 0, 0, "l-bfgs", []float64{1.5126011433510014, -0.699386970568052, 1.8411042255791563, -0.04240479649071878}, 2.878868183604317},
		// Ridge(alpha=6): λ = 6/n
		{"ridge normal", 6 / n, 0, "normal", []float64{1.3160102969266072, -0.6672361081031963, 1.2003900033401178, -0.027604999380851262}, 1.4575533583109959},
		{"ridge l-bfgs", 6 / n, 0, "l-bfgs", []float64{1.3160102969266072, -0.6672361081031963, 1.2003900033401178, -0.027604999380851262}, 1.4575533583109959},
		// ElasticNet(alpha=0.3, l1_ratio=0.5)
		{"enet", 0.3, 0.5, "auto", []float64{1.0633072022645884, -0.6164315841411541, 0.5577431088734589, 0}, -0.051976681262247526},
		// ElasticNet(alpha=0.5, l1_ratio=1): the lasso
		{"lasso", 0.5, 1, "auto", []float64{0.8117806710382296, -0.5591726420886327, 0, 0}, -1.2589666710059924},
	} {
		e := NewLinearRegression()
		e.RegParam, e.ElasticNetParam, e.Solver = c.reg, c.en, c.solver
		e.Standardization = false
		e.Tol, e.MaxIter = 1e-15, 1000
		m, err := e.Fit(ml.Local(f))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		lm := m.(*LinearRegressionModel)
		checkClose(t, c.name+" coefficients", lm.Coefficients, c.coef, sklearnTol)
		checkClose(t, c.name+" intercept", []float64{lm.Intercept}, []float64{c.icpt}, sklearnTol)
		for j, v := range c.coef {
			if v == 0 && lm.Coefficients[j] != 0 {
				t.Errorf("%s: coefficient %d = %g, want exactly 0", c.name, j, lm.Coefficients[j])
			}
		}
		if c.name == "ols normal" {
			// σ²(AᵀA)⁻¹ with A = [X, 1], and R² (the script's numbers).
			checkClose(t, "standard errors", append(lm.CoefficientStandardErrors, lm.InterceptStandardError),
				[]float64{0.11169081853293258, 0.0418654353348593, 0.22836975754382788, 0.04902842832697369, 0.5517861774075843}, 1e-9)
			if !closeTo(lm.R2, 0.8945740118346883, 1e-12) {
				t.Errorf("R² = %.15g", lm.R2)
			}
		}
	}
}

func TestLogisticRegressionMatchesSklearn(t *testing.T) {
	rows := readCSV(t, "cls.csv")
	n := float64(len(rows))
	for _, c := range []struct {
		name  string
		label int
		C, l1 float64 // sklearn's C and l1_ratio
		coef  []float64
		icpt  []float64
	}{
		{"binomial", 4, 0.5, 0, []float64{0.9711388071132538, -0.7492603629182985, 1.2217878234993802, 0.43163151776305336}, []float64{0.008373829277866235}},
		{"multinomial", 5, 0.5, 0, []float64{
			0.8484501269529944, 0.21347345016142483, -0.9529550788798882, -0.06430346918996487,
			-1.2874579623765228, 0.6232397351871323, 0.30186076958504476, 0.3597401807824164,
			0.43900783542352817, -0.8367131853485571, 0.6510943092948436, -0.29543671159245133,
		}, []float64{-0.1820288227880789, 0.016710157278363506, 0.16531866550971502}},
		// penalty="elasticnet", solver="saga"
		{"binomial elastic net", 4, 0.5, 0.6, []float64{0.965555178617107, -0.7373765468726254, 1.2482736744747334, 0.4067342183199239}, []float64{0.009962215134938127}},
		{"multinomial elastic net", 5, 0.1, 0.6, []float64{
			0.22681796137505716, 0.0, -0.2942146652446919, 0.0,
			-0.6895662069710369, 0.14627262738928598, 0.0, 0.021120381968943374,
			0.0, -0.6913585349627139, 0.03985993933929111, -0.08004843572948267,
		}, []float64{-0.11298499529838096, 0.012807832572215195, 0.1001771627261731}},
	} {
		f := frameOf(t, rows, seq(4), map[string]int{"label": c.label})
		e := NewLogisticRegression()
		e.RegParam, e.ElasticNetParam = 1/(c.C*n), c.l1
		e.Standardization = false
		e.Tol, e.MaxIter = 1e-15, 1000
		m, err := e.Fit(ml.Local(f))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		lm := m.(*LogisticRegressionModel)
		checkClose(t, c.name+" coefficients", lm.Coefficients, c.coef, sklearnTol)
		// The softmax does not see a common shift of the intercepts:
		// compare them centred.
		icpt := append([]float64(nil), c.icpt...)
		if len(icpt) > 1 {
			centre(icpt, len(icpt), 1)
		}
		checkClose(t, c.name+" intercepts", lm.Intercepts, icpt, sklearnTol)
		for j, v := range c.coef {
			if v == 0 && lm.Coefficients[j] != 0 {
				t.Errorf("%s: coefficient %d = %g, want exactly 0", c.name, j, lm.Coefficients[j])
			}
		}
	}
}

func TestLinearSVCMatchesSklearn(t *testing.T) {
	rows := readCSV(t, "cls.csv")
	// A column of ones: liblinear's (penalized) intercept.
	withOnes := make([][]float64, len(rows))
	for i, r := range rows {
		withOnes[i] = append(append([]float64(nil), r[:4]...), 1, r[4], r[5])
	}
	n := float64(len(rows))
	for _, c := range []struct {
		name  string
		label int
		coef  []float64
	}{
		{"binary", 5, []float64{0.46896157704622776, -0.3269823520957645, 0.6583916480781437, 0.2110569560942574, 0.008258529858839547}},
		{"one-vs-rest", 6, []float64{
			0.5174574292769445, 0.18464344469192076, -0.6325550396495048, 0.029859377600060556, -0.649223280805819,
			-0.9267051461962376, 0.4446680167612189, 0.24026275893664403, 0.2967992874869792, -0.4433912260969794,
			0.18986142739715983, -0.4400272678284206, 0.47309392972242176, -0.13511804829832433, -0.32209159120252634,
		}},
	} {
		f := frameOf(t, withOnes, seq(5), map[string]int{"label": c.label})
		e := NewLinearSVC()
		e.Loss = "squared_hinge"
		e.RegParam = 1 / (0.5 * n) // C = 0.5
		e.Standardization, e.FitIntercept = false, false
		e.Tol, e.MaxIter = 1e-15, 2000
		m, err := e.Fit(ml.Local(f))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sm := m.(*LinearSVCModel)
		checkClose(t, c.name+" coefficients", sm.Coefficients, c.coef, sklearnTol)
		for _, b := range sm.Intercepts {
			if b != 0 {
				t.Errorf("%s: intercept %g without fitIntercept", c.name, b)
			}
		}
	}
}
