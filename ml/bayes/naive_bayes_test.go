package bayes

import (
	"encoding/json"
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

func TestBadInput(t *testing.T) {
	good := []float64{1, 0, 0, 1, 1, 1}
	for _, tc := range []struct {
		name string
		nb   func(*NaiveBayes)
		x, y []float64
		want string
	}{
		{"modelType", func(nb *NaiveBayes) { nb.ModelType = "poisson" }, good, []float64{0, 1, 1}, "modelType must be"},
		{"smoothing", func(nb *NaiveBayes) { nb.Smoothing = -1 }, good, []float64{0, 1, 1}, "smoothing must be ≥ 0, got -1"},
		{"thresholds", func(nb *NaiveBayes) { nb.Thresholds = []float64{0, 0} }, good, []float64{0, 1, 1}, "at most one"},
		{"thresholds count", func(nb *NaiveBayes) { nb.Thresholds = []float64{1, 1, 1} }, good, []float64{0, 1, 1}, "3 values for 2 classes"},
		{"label", nil, good, []float64{0, 1.5, 1}, `row 2: label 1.5`},
		{"negative count", nil, []float64{1, 0, 0, -1, 1, 1}, []float64{0, 1, 1}, `row 2, element 2: multinomial naive Bayes needs non-negative feature values, got -1`},
		{"complement negative", func(nb *NaiveBayes) { nb.ModelType = Complement }, []float64{1, 0, 0, 1, 1, -2}, []float64{0, 1, 1}, `row 3, element 2: complement`},
		{"bernoulli", func(nb *NaiveBayes) { nb.ModelType = Bernoulli }, []float64{1, 0, 0, 1, 2, 1}, []float64{0, 1, 1}, `row 3, element 1: bernoulli naive Bayes needs 0 or 1 feature values, got 2`},
		{"nan", func(nb *NaiveBayes) { nb.ModelType = Gaussian }, []float64{1, 0, math.NaN(), 1, 2, 1}, []float64{0, 1, 1}, `row 2, element 1: NaN is not a finite number`},
		{"gaussian empty class", func(nb *NaiveBayes) { nb.ModelType = Gaussian }, good, []float64{0, 2, 2}, "class 1 has no rows"},
		{"gaussian constant", func(nb *NaiveBayes) { nb.ModelType = Gaussian }, []float64{1, 1, 1, 1, 1, 1}, []float64{0, 1, 1}, "every feature is constant"},
		{"smoothing 0", func(nb *NaiveBayes) { nb.Smoothing = 0 }, good, []float64{0, 1, 1}, "use smoothing > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nb := NewNaiveBayes()
			if tc.nb != nil {
				tc.nb(nb)
			}
			m, err := nb.Fit(ml.Local(frameOf(t, 2, tc.x, tc.y)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fit: model %v, err %v; want an error containing %q", m, err, tc.want)
			}
		})
	}
}

func TestTransformChecks(t *testing.T) {
	nb := NewNaiveBayes()
	nb.ModelType = Bernoulli
	m, err := nb.Fit(ml.Local(frameOf(t, 2, []float64{1, 0, 0, 1, 1, 1}, []float64{0, 1, 1})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Transform(frameOf(t, 2, []float64{1, 0, 0, 0.5}, []float64{0, 1})); err == nil || !strings.Contains(err.Error(), "NaiveBayesModel: column \"features\", row 2, element 2: bernoulli") {
		t.Fatalf("Transform of a 0.5: %v", err)
	}
	if _, err := m.Transform(frameOf(t, 3, []float64{1, 0, 0}, []float64{0})); err == nil || !strings.Contains(err.Error(), "3 elements, the model was fitted on 2") {
		t.Fatalf("Transform of a wider vector: %v", err)
	}
}

// TestThresholds: Spark predicts the argmax of probability/threshold.
func TestThresholds(t *testing.T) {
	pc := peerCases[0]
	f := pc.frame(t)
	nb := pc.estimator()
	nb.Thresholds = []float64{1, 1, 0.01} // class 2 wins whenever it has ≥ 1% of the mass
	m, err := nb.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := out.Float64s("prediction")
	prob, _ := out.Vectors("probability")
	twos, argmaxTwos := 0, 0
	for i, p := range pred {
		want := 0
		best := math.Inf(-1)
		for c, th := range nb.Thresholds {
			if v := prob.At(i, c) / th; v > best {
				best, want = v, c
			}
		}
		if int(p) != want {
			t.Fatalf("row %d: prediction %g, want %d", i+1, p, want)
		}
		if p == 2 {
			twos++
		}
		if prob.At(i, 2) >= max(prob.At(i, 0), prob.At(i, 1)) {
			argmaxTwos++
		}
	}
	if twos <= argmaxTwos {
		t.Fatalf("%d predictions of class 2 with thresholds, %d without", twos, argmaxTwos)
	}
}

// TestFloat32Features: a float32 vector column gives the model of its
// float64 widening.
func TestFloat32Features(t *testing.T) {
	pc := peerCases[len(peerCases)-1] // gaussian
	x32 := make([]float32, len(pc.x))
	x64 := make([]float64, len(pc.x))
	for i, v := range pc.x {
		x32[i] = float32(v)
		x64[i] = float64(x32[i])
	}
	f32, err := data.NewFrame(data.NewVectorColumn32("features", pc.cols, x32, nil, nil), data.NewColumn("label", pc.y, nil))
	if err != nil {
		t.Fatal(err)
	}
	a, err := pc.estimator().Fit(ml.Local(f32))
	if err != nil {
		t.Fatal(err)
	}
	b, err := pc.estimator().Fit(ml.Local(frameOf(t, pc.cols, x64, pc.y)))
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := a.(*NaiveBayesModel), b.(*NaiveBayesModel)
	for i := range ma.Sigma {
		if ma.Sigma[i] != mb.Sigma[i] || ma.Theta[i] != mb.Theta[i] {
			t.Fatalf("float32 and float64 features differ at %d", i)
		}
	}
}

// TestRankErrors: a rank with bad data fails with its error and the
// others fail too instead of waiting for it.
func TestRankErrors(t *testing.T) {
	pc := peerCases[0]
	f := pc.frame(t)
	bad := frameOf(t, pc.cols, append([]float64{-1}, pc.x[1:pc.cols*10]...), pc.y[:10])
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := f.Slice(10, 30)
			if r == 1 {
				part = bad
			}
			_, errs[r] = pc.estimator().Fit(ml.Partitioned(part, ml.Group(g)))
		}()
	}
	wg.Wait()
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "another rank") {
		t.Fatalf("rank 0: %v", errs[0])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "row 1, element 1") {
		t.Fatalf("rank 1: %v", errs[1])
	}
}

// TestWeightsAreCounts: an integer weight is the row repeated that many
// times, for every model type.
func TestWeightsAreCounts(t *testing.T) {
	for _, pc := range peerCases {
		if pc.w != nil {
			continue
		}
		t.Run(pc.modelType, func(t *testing.T) {
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
			ma, mb := a.(*NaiveBayesModel), b.(*NaiveBayesModel)
			for name, pair := range map[string][2][]float64{"pi": {ma.Pi, mb.Pi}, "theta": {ma.Theta, mb.Theta}, "sigma": {ma.Sigma, mb.Sigma}} {
				for i := range pair[0] {
					if d := math.Abs(pair[0][i] - pair[1][i]); d > 1e-12*max(1, math.Abs(pair[1][i])) {
						t.Fatalf("%s[%d]: weighted %.17g, repeated rows %.17g", name, i, pair[0][i], pair[1][i])
					}
				}
			}
		})
	}
}

// TestGaussianLargeMean: variances of features with a large mean beside
// their spread are accurate (a plain Σx² − n·mean² would lose them), on one
// rank and on several.
func TestGaussianLargeMean(t *testing.T) {
	pc := peerCases[len(peerCases)-1] // gaussian
	shifted := pc
	shifted.x = make([]float64, len(pc.x))
	for i, v := range pc.x {
		shifted.x[i] = v + 1e7
	}
	a, err := pc.estimator().Fit(ml.Local(pc.frame(t)))
	if err != nil {
		t.Fatal(err)
	}
	check := func(m ml.Model) {
		t.Helper()
		ma, mb := a.(*NaiveBayesModel), m.(*NaiveBayesModel)
		for i := range ma.Sigma {
			if d := math.Abs(ma.Sigma[i] - mb.Sigma[i]); d > 1e-8*ma.Sigma[i] {
				t.Fatalf("sigma[%d]: %.17g with the mean shifted by 1e7, %.17g without", i, mb.Sigma[i], ma.Sigma[i])
			}
		}
	}
	b, err := shifted.estimator().Fit(ml.Local(shifted.frame(t)))
	if err != nil {
		t.Fatal(err)
	}
	check(b)
	for _, m := range mltest.FitOnRanks(t, func() ml.Estimator { return shifted.estimator() }, shifted.frame(t), 3, nil) {
		check(m)
	}
}

// TestRegistered: configs build the estimator by name, with Spark's
// defaults, and a JSON config decodes over them.
func TestRegistered(t *testing.T) {
	s, err := ml.NewStage("NaiveBayes")
	if err != nil {
		t.Fatal(err)
	}
	nb := s.(*NaiveBayes)
	if err := json.Unmarshal([]byte(`{"modelType": "gaussian"}`), nb); err != nil {
		t.Fatal(err)
	}
	if nb.Smoothing != 1 || nb.ModelType != Gaussian || nb.ProbabilityCol != "probability" {
		t.Fatalf("decoded over the defaults: %+v", nb)
	}
}

// TestEmptyRank: a rank without rows joins the fit and gets the model.
func TestEmptyRank(t *testing.T) {
	emptyFirst := func(f *data.Frame, r, n int) *data.Frame {
		if r == 0 {
			return f.Slice(0, 0)
		}
		return mltest.SplitRows(f, r-1, n-1)
	}
	for _, pc := range peerCases {
		t.Run(pc.name(), func(t *testing.T) {
			mltest.Check(t, func() ml.Estimator { return pc.estimator() }, pc.frame(t), mltest.Options{Ranks: []int{2, 3}, Split: emptyFirst})
		})
	}
}
