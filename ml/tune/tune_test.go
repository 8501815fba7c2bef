package tune

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

var regs = []float64{1, 0.1, 0.01, 0.001, 0}

func grid() []ParamMap {
	return NewParamGridBuilder().AddGrid(Axis("regParam", setReg, regs...)).Build()
}

func TestBuildOrder(t *testing.T) {
	setA := func(e ml.Estimator, v int) error { return nil }
	setB := func(e ml.Estimator, v string) error { return nil }
	g := NewParamGridBuilder().
		AddGrid(Axis("a", setA, 1, 2)).
		AddGrid(Axis("b", setB, "x", "y", "z")).
		Build()
	var got []string
	for _, p := range g {
		got = append(got, p.String())
	}
	// Spark's order: the first axis varies fastest.
	want := []string{"a=1, b=x", "a=2, b=x", "a=1, b=y", "a=2, b=y", "a=1, b=z", "a=2, b=z"}
	if !slices.Equal(got, want) {
		t.Fatalf("grid %q, want %q", got, want)
	}
	if g := NewParamGridBuilder().Build(); len(g) != 1 || len(g[0]) != 0 {
		t.Fatalf("empty builder: %v, want one empty point", g)
	}
	if g := NewParamGridBuilder().AddGrid(Axis[int]("a", setA)).Build(); len(g) != 0 {
		t.Fatalf("an axis without values: %d points, want 0", len(g))
	}
	// A second axis of the same name replaces the first in its place.
	g = NewParamGridBuilder().AddGrid(Axis("a", setA, 1)).AddGrid(Axis("b", setB, "x")).AddGrid(Axis("a", setA, 7, 8)).Build()
	if len(g) != 2 || g[1].String() != "a=8, b=x" {
		t.Fatalf("replaced axis: %v", g)
	}
}

func TestApplyCopies(t *testing.T) {
	est := &ridge{RegParam: 5}
	g := grid()
	e, err := g[1].Apply(est)
	if err != nil {
		t.Fatal(err)
	}
	if e.(*ridge).RegParam != 0.1 || est.RegParam != 5 {
		t.Fatalf("Apply: copy has %g, original %g; want 0.1 and 5", e.(*ridge).RegParam, est.RegParam)
	}
	bad := NewParamGridBuilder().AddGrid(Axis("regParam", setReg, -1)).Build()
	if _, err := bad[0].Apply(est); err == nil || !strings.Contains(err.Error(), "regParam=-1") {
		t.Fatalf("Apply of a bad value: %v", err)
	}
}

// TestCrossValidatorByHand recomputes every fold's metric from the fold
// assignment with plain fits.
func TestCrossValidatorByHand(t *testing.T) {
	f := regression(90)
	cv := NewCrossValidator(&ridge{}, grid(), rmse{})
	cv.Seed = 7
	m, err := cv.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	vm := m.(*ValidatorModel)
	sizes := make([]int, 3)
	folds := make([][]int, 3)
	for i := range f.Len() {
		k := int(rowHash(7, i) % 3)
		sizes[k]++
		folds[k] = append(folds[k], i)
	}
	for k, s := range sizes {
		if s < 20 || s > 40 {
			t.Fatalf("fold %d has %d of 90 rows", k, s)
		}
	}
	for p, reg := range regs {
		sum := 0.0
		for k := range 3 {
			var train []int
			for j := range 3 {
				if j != k {
					train = append(train, folds[j]...)
				}
			}
			slices.Sort(train)
			mk, err := (&ridge{RegParam: reg}).Fit(ml.Local(f.Take(train)))
			if err != nil {
				t.Fatal(err)
			}
			out, err := mk.Transform(f.Take(folds[k]))
			if err != nil {
				t.Fatal(err)
			}
			s, _ := rmse{}.Evaluate(out, ml.Single)
			if s != vm.FoldMetrics[k][p] {
				t.Fatalf("fold %d, regParam %g: metric %g, by hand %g", k, reg, vm.FoldMetrics[k][p], s)
			}
			sum += s
		}
		if math.Abs(sum/3-vm.AvgMetrics[p]) > 1e-15 {
			t.Fatalf("regParam %g: avg %g, by hand %g", reg, vm.AvgMetrics[p], sum/3)
		}
	}
	// rmse: smaller is better; the data are linear, so little
	// regularization wins.
	want := bestIndex(vm.AvgMetrics, false)
	if vm.BestIndex != want || vm.BestIndex < 2 || vm.AvgMetrics[0] <= vm.AvgMetrics[vm.BestIndex] {
		t.Fatalf("best %d (metrics %v)", vm.BestIndex, vm.AvgMetrics)
	}
	refit, _ := (&ridge{RegParam: regs[vm.BestIndex]}).Fit(ml.Local(f))
	if d := mltest.DiffModels(refit, vm.BestModel, 0); d != "" {
		t.Fatalf("best model is not the best point refit on all rows: %s", d)
	}
	if vm.BestParams.String() != fmt.Sprintf("regParam=%v", regs[vm.BestIndex]) {
		t.Fatalf("BestParams %s", vm.BestParams)
	}
}

func TestParallelismSameResult(t *testing.T) {
	f := regression(120)
	fit := func(par int, tvs bool) *ValidatorModel {
		var est ml.Estimator
		if tvs {
			v := NewTrainValidationSplit(&ridge{}, grid(), rmse{})
			v.Parallelism, v.CollectSubModels = par, true
			est = v
		} else {
			v := NewCrossValidator(&ridge{}, grid(), rmse{})
			v.Parallelism, v.CollectSubModels, v.NumFolds = par, true, 4
			est = v
		}
		m, err := est.Fit(ml.Local(f))
		if err != nil {
			t.Fatal(err)
		}
		return m.(*ValidatorModel)
	}
	for _, tvs := range []bool{false, true} {
		a, b := fit(1, tvs), fit(4, tvs)
		if !slices.Equal(a.AvgMetrics, b.AvgMetrics) || a.BestIndex != b.BestIndex {
			t.Fatalf("tvs=%v: parallelism 1: %v (best %d); 4: %v (best %d)", tvs, a.AvgMetrics, a.BestIndex, b.AvgMetrics, b.BestIndex)
		}
		if d := mltest.DiffModels(a.BestModel, b.BestModel, 0); d != "" {
			t.Fatalf("tvs=%v: best models differ: %s", tvs, d)
		}
		for k := range a.SubModels {
			for p := range a.SubModels[k] {
				if d := mltest.DiffModels(a.SubModels[k][p], b.SubModels[k][p], 0); d != "" {
					t.Fatalf("tvs=%v: sub-model %d,%d differs: %s", tvs, k, p, d)
				}
			}
		}
	}
}

func TestTrainValidationSplitRatio(t *testing.T) {
	f := regression(400)
	tv := NewTrainValidationSplit(&ridge{}, grid(), rmse{})
	tv.Seed = 3
	m, err := tv.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	vm := m.(*ValidatorModel)
	train := 0
	var trainRows, validRows []int
	for i := range f.Len() {
		if unitHash(3, i) < 0.75 {
			train++
			trainRows = append(trainRows, i)
		} else {
			validRows = append(validRows, i)
		}
	}
	if train < 270 || train > 330 {
		t.Fatalf("%d of 400 rows in the training split", train)
	}
	mk, _ := (&ridge{RegParam: regs[2]}).Fit(ml.Local(f.Take(trainRows)))
	out, _ := mk.Transform(f.Take(validRows))
	s, _ := rmse{}.Evaluate(out, ml.Single)
	if len(vm.FoldMetrics) != 1 || vm.AvgMetrics[2] != s {
		t.Fatalf("validation metric %v, by hand %g", vm.AvgMetrics, s)
	}
	if vm.Type() != "TrainValidationSplitModel" {
		t.Fatalf("type %s", vm.Type())
	}
}

// fitOnRanks fits est on n ranks of a loopback group; split gives rank r
// its rows.
func fitOnRanks(t *testing.T, newEst func() ml.Estimator, n int, split func(r int) *data.Frame) []*ValidatorModel {
	t.Helper()
	gs := commtest.Groups(t, n, comm.TransportTCP, nil)
	out := make([]*ValidatorModel, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := newEst().Fit(ml.Partitioned(split(r), ml.Group(g)))
			errs[r] = err
			if err == nil {
				out[r] = m.(*ValidatorModel)
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%d ranks: rank %d: %v", n, r, err)
		}
	}
	return out
}

func TestDistributed(t *testing.T) {
	f := regression(101)
	for _, tvs := range []bool{false, true} {
		for _, mode := range []Distribution{DataParallel, Spread} {
			newEst := func() ml.Estimator {
				if tvs {
					v := NewTrainValidationSplit(&ridge{}, grid(), rmse{})
					v.Seed, v.Distribution, v.Parallelism = 5, mode, 2
					return v
				}
				v := NewCrossValidator(&ridge{}, grid(), rmse{})
				v.Seed, v.Distribution, v.Parallelism = 5, mode, 2
				return v
			}
			m, err := newEst().Fit(ml.Local(f))
			if err != nil {
				t.Fatal(err)
			}
			single := m.(*ValidatorModel)
			for _, n := range []int{2, 3} {
				split := func(r int) *data.Frame { return mltest.SplitRows(f, r, n) }
				if mode == Spread {
					split = func(int) *data.Frame { return f }
				}
				ms := fitOnRanks(t, newEst, n, split)
				for r, mr := range ms {
					if mr.BestIndex != single.BestIndex {
						t.Fatalf("tvs=%v %s, %d ranks, rank %d: best %d, single process %d", tvs, mode, n, r, mr.BestIndex, single.BestIndex)
					}
					for p := range single.AvgMetrics {
						a, b := single.AvgMetrics[p], mr.AvgMetrics[p]
						if mode == Spread && a != b || math.Abs(a-b) > 1e-9*math.Abs(a) {
							t.Fatalf("tvs=%v %s, %d ranks, rank %d: metric %d: %.17g, single process %.17g", tvs, mode, n, r, p, b, a)
						}
					}
					if d := mltest.DiffModels(single.BestModel, mr.BestModel, 1e-9); d != "" {
						t.Fatalf("tvs=%v %s, %d ranks, rank %d: best model: %s", tvs, mode, n, r, d)
					}
					if d := mltest.DiffModels(ms[0].BestModel, mr.BestModel, 0); d != "" {
						t.Fatalf("tvs=%v %s, %d ranks, rank %d differs from rank 0: %s", tvs, mode, n, r, d)
					}
				}
			}
		}
	}
}

func TestSpreadNeedsAllRows(t *testing.T) {
	f := regression(41)
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cv := NewCrossValidator(&ridge{}, grid(), rmse{})
			cv.Distribution = Spread
			_, errs[r] = cv.Fit(ml.Partitioned(mltest.SplitRows(f, r, 2), ml.Group(g)))
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "every rank to hold all the rows") {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
}

// TestSpreadFailure: a fit failing on one rank fails every rank instead
// of leaving the others waiting.
func TestSpreadFailure(t *testing.T) {
	f := regression(40)
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Grid point 0 (regParam 1) fails; with 2 ranks its fits
			// (tasks 0, 5, 10) fall on ranks 0, 1, 0.
			cv := NewCrossValidator(&ridge{FailAbove: 0.5}, grid(), rmse{})
			cv.Distribution = Spread
			_, errs[r] = cv.Fit(ml.Partitioned(f, ml.Group(g)))
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "too large") {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
}

func TestErrors(t *testing.T) {
	f := regression(30)
	for _, tc := range []struct {
		est  ml.Estimator
		want string
	}{
		{&CrossValidator{Estimator: &ridge{}, Grid: grid(), Evaluator: rmse{}, NumFolds: 1, Parallelism: 1}, "numFolds must be ≥ 2"},
		{NewCrossValidator(&ridge{}, nil, rmse{}), "grid is empty"},
		{NewCrossValidator(&ridge{}, grid(), nil), "no evaluator"},
		{&CrossValidator{Estimator: &ridge{}, Grid: grid(), Evaluator: rmse{}, NumFolds: 3}, "parallelism must be ≥ 1"},
		{&TrainValidationSplit{Estimator: &ridge{}, Grid: grid(), Evaluator: rmse{}, TrainRatio: 1, Parallelism: 1}, "trainRatio must be in (0, 1)"},
		{NewCrossValidator(&ridge{FailAbove: 0.5}, grid(), rmse{}), "fold 1, grid point 1 (regParam=1): fit: ridge: regParam 1 too large"},
	} {
		_, err := tc.est.Fit(ml.Local(f))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%T: error %v, want %q", tc.est, err, tc.want)
		}
	}
}

func TestSaveLoad(t *testing.T) {
	f := regression(60)
	m, err := NewCrossValidator(&ridge{}, grid(), rmse{}).Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cv.safetensors")
	if err := ml.SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := ml.LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	vm, bm := m.(*ValidatorModel), back.(*ValidatorModel)
	if bm.Type() != "CrossValidatorModel" || bm.BestIndex != vm.BestIndex || !slices.Equal(bm.AvgMetrics, vm.AvgMetrics) || !slices.Equal(bm.Grid, vm.Grid) {
		t.Fatalf("loaded %+v, saved %+v", bm, vm)
	}
	for f := range vm.FoldMetrics {
		if !slices.Equal(bm.FoldMetrics[f], vm.FoldMetrics[f]) {
			t.Fatalf("fold %d metrics: loaded %v, saved %v", f, bm.FoldMetrics[f], vm.FoldMetrics[f])
		}
	}
	// A NaN metric (a fold an evaluator cannot score) survives the file.
	vm.FoldMetrics[1][2] = math.NaN()
	if err := ml.SaveModel(path, vm); err != nil {
		t.Fatal(err)
	}
	if back, err = ml.LoadModel(path); err != nil || !math.IsNaN(back.(*ValidatorModel).FoldMetrics[1][2]) {
		t.Fatalf("NaN metric: %v, %v", back, err)
	}
	a, _ := m.Transform(f)
	b, _ := back.Transform(f)
	if d := mltest.DiffFrames(a, b, 0); d != "" {
		t.Fatal(d)
	}
}
