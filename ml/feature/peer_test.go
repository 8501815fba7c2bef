package feature

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// The numbers in this file were printed by testdata/peer_sklearn.py
// (scikit-learn 1.2.1, numpy 1.24.2) on the same data.

var peerX = []float64{
	1.5, -2.0, 10.0,
	2.25, 0.5, 12.0,
	-0.75, 3.0, 9.0,
	4.0, 1.25, 15.0,
	0.5, -1.5, 11.0,
	3.0, 2.75, 8.0,
	1.0, 0.0, 13.5,
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*max(1, math.Abs(b)) }

func checkNear(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !near(got[i], want[i], tol) {
			t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}

func fitTransform(t *testing.T, e ml.Estimator, f *data.Frame, out string) (ml.Model, []float64) {
	t.Helper()
	m, err := e.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	vc, err := g.Vectors(out)
	if err != nil {
		t.Fatal(err)
	}
	return m, vc.Float64s()
}

func TestPeerScalers(t *testing.T) {
	f := frame(t, ml.VectorOut("features", 3, peerX))

	s := NewStandardScaler()
	s.WithMean = true
	m, z := fitTransform(t, s, f, ScaledFeaturesCol)
	sm := m.(*StandardScalerModel)
	checkNear(t, "mean", sm.Mean, []float64{1.6428571428571428, 0.5714285714285714, 11.214285714285714}, 1e-14)
	// Spark's std is the sample one: numpy's std(ddof=1). scikit-learn's
	// scale_ is the population one, 1.475134030575956, ...: they differ by
	// sqrt(n/(n−1)).
	checkNear(t, "std", sm.Std, []float64{1.5933268579266704, 1.9295632370342999, 2.4808792604159327}, 1e-14)
	pop := []float64{1.475134030575956, 1.7864284286285428, 2.2968478844019327}
	for j := range pop {
		if !near(sm.Std[j]*math.Sqrt(6.0/7), pop[j], 1e-14) {
			t.Fatalf("std[%d]·sqrt(6/7) = %.17g, scikit-learn's population std %.17g", j, sm.Std[j]*math.Sqrt(6.0/7), pop[j])
		}
	}
	// scikit-learn's transform of rows 0 and 3, rescaled from its
	// population std to Spark's sample std.
	sk := []float64{-0.09684350024883176, -1.439424345369761, -0.5286748515354541, 1.5979177541057248, 0.37984809113924256, 1.6482215959634758}
	for i, v := range sk {
		sk[i] = v * math.Sqrt(6.0/7)
	}
	checkNear(t, "standardized rows 0, 3", append(z[0:3:3], z[9:12]...), sk, 1e-13)

	mm := NewMinMaxScaler()
	mm.Min, mm.Max = -1, 2
	_, y := fitTransform(t, mm, f, ScaledFeaturesCol)
	checkNear(t, "MinMaxScaler(-1, 2)", y, []float64{
		0.42105263157894723, -1., -0.14285714285714324,
		0.894736842105263, 0.49999999999999994, 0.7142857142857135,
		-1., 1.9999999999999998, -0.5714285714285721,
		1.9999999999999998, 0.95, 1.9999999999999991,
		-0.21052631578947378, -0.7, 0.2857142857142856,
		1.3684210526315788, 1.8499999999999999, -1.0000000000000004,
		0.10526315789473673, 0.19999999999999996, 1.3571428571428568,
	}, 1e-14)

	_, a := fitTransform(t, NewMaxAbsScaler(), f, ScaledFeaturesCol)
	checkNear(t, "MaxAbsScaler", a, []float64{
		0.375, -0.6666666666666666, 0.6666666666666666,
		0.5625, 0.16666666666666666, 0.8,
		-0.1875, 1., 0.6,
		1., 0.4166666666666667, 1.,
		0.125, -0.5, 0.7333333333333333,
		0.75, 0.9166666666666666, 0.5333333333333333,
		0.25, 0., 0.9,
	}, 1e-15)

	// A constant column: Spark's rules, not scikit-learn's (which gives
	// min for MinMaxScaler and divides by 1 for StandardScaler).
	c := frame(t, ml.VectorOut("features", 1, []float64{4, 4, 4}))
	_, y = fitTransform(t, mm, c, ScaledFeaturesCol)
	checkNear(t, "MinMaxScaler of a constant", y, []float64{0.5, 0.5, 0.5}, 0)
	_, z = fitTransform(t, s, c, ScaledFeaturesCol)
	checkNear(t, "StandardScaler of a constant", z, []float64{0, 0, 0}, 0)
}

func TestPeerOneHotEncoder(t *testing.T) {
	f := frame(t, data.NewColumn("c", []float64{0, 2, 1, 2, 0, 3, 2}, nil))
	// OneHotEncoder(sparse_output=False).fit_transform: dropLast false.
	want := []float64{
		1, 0, 0, 0,
		0, 0, 1, 0,
		0, 1, 0, 0,
		0, 0, 1, 0,
		1, 0, 0, 0,
		0, 0, 0, 1,
		0, 0, 1, 0,
	}
	o := NewOneHotEncoder()
	o.InputCol, o.OutputCol, o.DropLast = "c", "v", false
	_, v := fitTransform(t, o, f, "v")
	checkNear(t, "one-hot", v, want, 0)
	// dropLast: scikit-learn's columns without the last.
	o.DropLast = true
	_, v = fitTransform(t, o, f, "v")
	var dropped []float64
	for i := range 7 {
		dropped = append(dropped, want[4*i:4*i+3]...)
	}
	checkNear(t, "one-hot, dropLast", v, dropped, 0)
}

func TestPeerImputer(t *testing.T) {
	nan := math.NaN()
	f := frame(t, data.NewColumn("x", []float64{2, nan, 7, 3, nan, 3, 10, 1, nan, 5, 4, 6}, nil))
	// SimpleImputer(strategy=...).statistics_; the median of an odd count
	// of values, where Spark's rule and scikit-learn's agree.
	for _, tc := range []struct {
		strategy string
		want     float64
	}{
		{StrategyMean, 4.555555555555555},
		{StrategyMedian, 4},
		{StrategyMode, 3}, // most_frequent
	} {
		p := NewImputer()
		p.InputCol, p.OutputCol, p.Strategy = "x", "y", tc.strategy
		m, err := p.Fit(ml.Local(f))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.(*ImputerModel).Surrogates[0]; !near(got, tc.want, 1e-15) {
			t.Errorf("%s: %.17g, scikit-learn %.17g", tc.strategy, got, tc.want)
		}
	}
}
