package bayes

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// peerCase is one data set with scikit-learn's results on it
// (peer_values_test.go, written by testdata/peer_sklearn.py).
type peerCase struct {
	modelType   string
	smoothing   float64
	rows, cols  int
	x, y, w     []float64
	probability []float64 // rows × K, predict_proba on the training rows
	theta       []float64 // K × cols: feature_log_prob_ (theta_ for gaussian)
}

func (pc peerCase) frame(t testing.TB) *data.Frame {
	t.Helper()
	cols := []data.Column{
		data.NewVectorColumn("features", pc.cols, pc.x, nil, nil),
		data.NewColumn("label", pc.y, nil),
	}
	if pc.w != nil {
		cols = append(cols, data.NewColumn("weight", pc.w, nil))
	}
	f, err := data.NewFrame(cols...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (pc peerCase) estimator() *NaiveBayes {
	nb := NewNaiveBayes()
	nb.ModelType = pc.modelType
	nb.Smoothing = pc.smoothing
	if pc.w != nil {
		nb.WeightCol = "weight"
	}
	return nb
}

func (pc peerCase) name() string {
	if pc.w != nil {
		return pc.modelType + "-weighted"
	}
	return pc.modelType
}

// TestAgainstScikitLearn pins probabilities and fitted parameters against
// scikit-learn within 1e-9 (testdata/peer_sklearn.py).
func TestAgainstScikitLearn(t *testing.T) {
	for _, pc := range peerCases {
		t.Run(pc.name(), func(t *testing.T) {
			f := pc.frame(t)
			m, err := pc.estimator().Fit(ml.Local(f))
			if err != nil {
				t.Fatal(err)
			}
			nbm := m.(*NaiveBayesModel)
			close := func(what string, got, want []float64, tol float64) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
				}
				for i := range got {
					if d := math.Abs(got[i] - want[i]); d > tol*max(1, math.Abs(want[i])) || math.IsNaN(got[i]) {
						t.Fatalf("%s[%d] = %.17g, scikit-learn %.17g (diff %.3g)", what, i, got[i], want[i], d)
					}
				}
			}
			close("theta", nbm.Theta, pc.theta, 1e-12)
			out, err := m.Transform(f)
			if err != nil {
				t.Fatal(err)
			}
			prob, _ := out.Vectors("probability")
			close("probability", prob.Float64s(), pc.probability, 1e-9)
			// rawPrediction is the log-posterior up to a constant per row:
			// its differences are the log-ratios of the probabilities.
			raw, _ := out.Vectors("rawPrediction")
			k := nbm.NumClasses
			var diffs, want []float64
			for i := range pc.rows {
				for c := 1; c < k; c++ {
					diffs = append(diffs, raw.At(i, c)-raw.At(i, 0))
					want = append(want, math.Log(pc.probability[i*k+c]/pc.probability[i*k]))
				}
			}
			close("rawPrediction differences", diffs, want, 1e-9)
			pred, _ := out.Float64s("prediction")
			for i, p := range pred {
				best := 0
				for c := range k {
					if pc.probability[i*k+c] > pc.probability[i*k+best] {
						best = c
					}
				}
				if int(p) != best {
					t.Fatalf("row %d: prediction %g, scikit-learn %d", i+1, p, best)
				}
			}
		})
	}
}

// TestConformance runs mltest.Check (save/load, 1..4 ranks) on every
// model type.
func TestConformance(t *testing.T) {
	for _, pc := range peerCases {
		t.Run(pc.name(), func(t *testing.T) {
			mltest.Check(t, func() ml.Estimator { return pc.estimator() }, pc.frame(t), mltest.Options{})
		})
	}
}
