package linear

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// clsFrame is cls.csv with a weight column (varied, deterministic).
func clsFrame(t *testing.T) *data.Frame {
	rows := readCSV(t, "cls.csv")
	for i, r := range rows {
		rows[i] = append(r, 0.5+float64(i%4)/2)
	}
	return frameOf(t, rows, seq(4), map[string]int{"label2": 4, "label3": 5, "weight": 6})
}

func TestConformance(t *testing.T) {
	reg := readCSV(t, "reg.csv")
	for i, r := range reg {
		reg[i] = append(r, 0.5+float64(i%3)/2)
	}
	rf := frameOf(t, reg, seq(4), map[string]int{"label": 4, "weight": 5})
	cf := clsFrame(t)
	for _, c := range []struct {
		name  string
		frame *data.Frame
		est   func() ml.Estimator
	}{
		{"LinearRegression normal", rf, func() ml.Estimator {
			e := NewLinearRegression()
			e.RegParam, e.WeightCol = 0.05, "weight"
			return e
		}},
		{"LinearRegression elastic net", rf, func() ml.Estimator {
			e := NewLinearRegression()
			e.RegParam, e.ElasticNetParam, e.WeightCol, e.Tol, e.MaxIter = 0.1, 0.7, "weight", 1e-13, 1000
			return e
		}},
		{"LinearRegression l-bfgs no intercept", rf, func() ml.Estimator {
			e := NewLinearRegression()
			e.Solver, e.FitIntercept, e.Tol, e.MaxIter = "l-bfgs", false, 1e-13, 1000
			return e
		}},
		{"LogisticRegression binomial", cf, func() ml.Estimator {
			e := NewLogisticRegression()
			e.LabelCol, e.WeightCol, e.RegParam, e.Tol, e.MaxIter = "label2", "weight", 0.02, 1e-13, 1000
			return e
		}},
		{"LogisticRegression multinomial elastic net", cf, func() ml.Estimator {
			e := NewLogisticRegression()
			e.LabelCol, e.RegParam, e.ElasticNetParam, e.Tol, e.MaxIter = "label3", 0.02, 0.5, 1e-13, 1000
			e.Thresholds = []float64{0.3, 0.5, 0.2}
			return e
		}},
		{"LinearSVC hinge", cf, func() ml.Estimator {
			e := NewLinearSVC()
			e.LabelCol, e.RegParam, e.Tol, e.MaxIter = "label2", 0.05, 1e-13, 1000
			return e
		}},
		{"LinearSVC squared hinge one-vs-rest", cf, func() ml.Estimator {
			e := NewLinearSVC()
			e.LabelCol, e.WeightCol, e.Loss, e.RegParam, e.Tol, e.MaxIter = "label3", "weight", "squared_hinge", 0.01, 1e-13, 1000
			return e
		}},
	} {
		t.Run(c.name, func(t *testing.T) { mltest.Check(t, c.est, c.frame, mltest.Options{}) })
	}
}

// A rank with no rows takes part in every all-reduce and gets the model.
func TestConformanceEmptyRank(t *testing.T) {
	cf := clsFrame(t)
	split := func(f *data.Frame, r, n int) *data.Frame {
		if r == 0 {
			return f.Slice(0, 0)
		}
		return mltest.SplitRows(f, r-1, n-1)
	}
	mltest.Check(t, func() ml.Estimator {
		e := NewLogisticRegression()
		e.LabelCol, e.WeightCol, e.RegParam, e.Tol, e.MaxIter = "label3", "weight", 0.01, 1e-13, 1000
		return e
	}, cf, mltest.Options{Split: split})
	mltest.Check(t, func() ml.Estimator {
		e := NewLinearRegression()
		e.LabelCol = "label3"
		return e
	}, cf, mltest.Options{Split: split})
}

// A rank that cannot read its rows fails with the reason; the others
// learn it and fail too, instead of waiting in a collective.
func TestBadRowOnOneRank(t *testing.T) {
	cf := clsFrame(t)
	x := append([]float64(nil), cf.Col("features").(*data.VectorColumn).Float64s()...)
	x[4*60+2] = math.NaN() // row 61: on rank 1 of 2
	bad, err := cf.With(data.NewVectorColumn("features", 4, x, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, est := range []ml.Estimator{NewLogisticRegression(), NewLinearSVC(), NewLinearRegression()} {
		gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for r, g := range gs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := est.Copy()
				switch e := e.(type) {
				case *LogisticRegression:
					e.LabelCol = "label3"
				case *LinearSVC:
					e.LabelCol = "label3"
				case *LinearRegression:
					e.LabelCol = "label3"
				}
				_, errs[r] = e.Fit(ml.Partitioned(mltest.SplitRows(bad, r, 2), ml.Group(g)))
			}()
		}
		wg.Wait()
		if !errors.Is(errs[0], ErrOtherRank) {
			t.Errorf("%s: rank 0: err = %v, want ErrOtherRank", est.Type(), errs[0])
		}
		if errs[1] == nil || !strings.Contains(errs[1].Error(), "row 16, element 3") {
			t.Errorf("%s: rank 1: err = %v, want the bad row named", est.Type(), errs[1])
		}
	}
}
