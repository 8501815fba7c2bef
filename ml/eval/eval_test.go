package eval

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// The scikit-learn numbers in this file were printed by
// testdata/peer_sklearn.py (scikit-learn 1.2.1, numpy 1.24.2) on the same
// data.

func frame(t *testing.T, cols ...data.Column) *data.Frame {
	t.Helper()
	f, err := data.NewFrame(cols...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func evaluate(t *testing.T, e ml.Evaluator, f *data.Frame) float64 {
	t.Helper()
	v, err := e.Evaluate(f, nil)
	if err != nil {
		t.Fatalf("%s: %v", e.Metric(), err)
	}
	return v
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*max(1, math.Abs(b)) }

var (
	binScore  = []float64{0.9, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.4, 0.3, 0.3, 0.2, 0.1}
	binLabel  = []float64{1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0}
	binWeight = []float64{1.0, 2.0, 0.5, 1.0, 1.5, 1.0, 3.0, 1.0, 0.25, 1.0, 2.0, 1.0}
)

// binaryFrame holds the scores both as a scalar column and as element 1
// of a rawPrediction vector.
func binaryFrame(t *testing.T) *data.Frame {
	raw := make([]float64, 2*len(binScore))
	for i, s := range binScore {
		raw[2*i], raw[2*i+1] = -s, s
	}
	return frame(t,
		data.NewColumn("score", binScore, nil),
		ml.VectorOut(ml.RawPredictionCol, 2, raw),
		data.NewColumn(ml.LabelCol, binLabel, nil),
		data.NewColumn("w", binWeight, nil),
	)
}

func TestBinary(t *testing.T) {
	f := binaryFrame(t)
	for _, tc := range []struct {
		metric, scoreCol, weightCol string
		want                        float64
	}{
		{AreaUnderROC, ml.RawPredictionCol, "", 0.7714285714285715}, // roc_auc_score
		{AreaUnderROC, "score", "", 0.7714285714285715},
		{AreaUnderROC, "score", "w", 0.8976190476190475}, // roc_auc_score(sample_weight)
		// Spark's area under PR, computed in the script from
		// precision_recall_curve's points (see spark_pr there); scikit-learn's
		// average_precision_score is another number, 0.6976190476190477.
		{AreaUnderPR, ml.RawPredictionCol, "", 0.7404761904761904},
		{AreaUnderPR, "score", "w", 0.8638081495224352},
	} {
		e := NewBinaryClassificationEvaluator()
		e.MetricName, e.RawPredictionCol, e.WeightCol = tc.metric, tc.scoreCol, tc.weightCol
		if got := evaluate(t, e, f); !near(got, tc.want, 1e-12) {
			t.Errorf("%s of %s weighted by %q: %.17g, want %.17g", tc.metric, tc.scoreCol, tc.weightCol, got, tc.want)
		}
	}
	// metrics.ROCAUC (unweighted, ties grouped) agrees.
	pos := make([]bool, len(binLabel))
	for i, l := range binLabel {
		pos[i] = l == 1
	}
	auc, err := metrics.ROCAUC(binScore, pos)
	if err != nil || !near(auc, 0.7714285714285715, 1e-12) {
		t.Errorf("metrics.ROCAUC = %v, %v", auc, err)
	}
}

// TestAreaUnderPRByHand: scores 0.9, 0.8, 0.7, 0.6 with labels 1, 0, 1, 0
// give the PR points (recall, precision) (½, 1), (½, ½), (1, ⅔), (1, ½);
// Spark puts (0, 1) first and sums trapezoids: ½·1 + 0 + ½·(½+⅔)/2 + 0 =
// 19/24. scikit-learn's average precision is ½·1 + ½·⅔ = 5/6.
func TestAreaUnderPRByHand(t *testing.T) {
	f := frame(t, data.NewColumn("s", []float64{0.9, 0.8, 0.7, 0.6}, nil), data.NewColumn("label", []int64{1, 0, 1, 0}, nil))
	e := NewBinaryClassificationEvaluator()
	e.RawPredictionCol, e.MetricName = "s", AreaUnderPR
	if got := evaluate(t, e, f); !near(got, 19.0/24, 1e-15) {
		t.Fatalf("areaUnderPR = %.17g, want 19/24 = %.17g", got, 19.0/24)
	}
	e.MetricName = AreaUnderROC
	if got := evaluate(t, e, f); !near(got, 0.75, 1e-15) {
		t.Fatalf("areaUnderROC = %.17g, want 3/4", got)
	}
}

// TestNumBins: with 2·numBins distinct scores or more, Spark keeps every
// ⌊distinct/numBins⌋-th point of the curve.
func TestNumBins(t *testing.T) {
	// Ten distinct scores, numBins 5: keep points 2, 4, ..., 10 (1-based).
	s := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	l := []float64{1, 0, 0, 1, 1, 0, 1, 0, 0, 0}
	f := frame(t, data.NewColumn("s", s, nil), data.NewColumn("label", l, nil))
	e := NewBinaryClassificationEvaluator()
	e.RawPredictionCol, e.NumBins = "s", 5
	// Cumulative (fp, tp) after rows 2, 4, 6, 8, 10: (1,1) (2,2) (3,3) (4,4) (6,4);
	// P = 4, N = 6: the points (1/6,1/4) (2/6,2/4) (3/6,3/4) (4/6,1) (1,1).
	want := 0.0
	x0, y0 := 0.0, 0.0
	for _, p := range [][2]float64{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {6, 4}} {
		x, y := p[0]/6, p[1]/4
		want += (x - x0) * (y + y0) / 2
		x0, y0 = x, y
	}
	if got := evaluate(t, e, f); !near(got, want, 1e-15) {
		t.Fatalf("numBins 5: %.17g, want %.17g", got, want)
	}
	e.NumBins = 0
	if got := evaluate(t, e, f); !near(got, 17.0/24, 1e-15) {
		t.Fatalf("numBins 0: %.17g, want the exact 17/24", got)
	}
	e.NumBins = 6 // 10/6 = 1 < 2: no down-sampling
	if got := evaluate(t, e, f); !near(got, 17.0/24, 1e-15) {
		t.Fatalf("numBins 6: %.17g, want the exact 17/24", got)
	}
}

var (
	mcLabel  = []float64{0, 1, 2, 2, 1, 0, 0, 2, 1, 1, 2, 0, 2, 1}
	mcPred   = []float64{0, 2, 2, 1, 1, 0, 1, 2, 1, 3, 2, 0, 0, 1}
	mcWeight = []float64{1.0, 0.5, 2.0, 1.0, 1.0, 3.0, 1.0, 1.0, 0.25, 1.0, 1.5, 1.0, 1.0, 2.0}
	mcProb   = []float64{
		0.7, 0.2, 0.1, 0.1, 0.3, 0.6, 0.2, 0.2, 0.6, 0.25, 0.5, 0.25,
		0.0, 1.0, 0.0,
		0.0, 0.5, 0.5,
		0.4, 0.45, 0.15, 0.05, 0.15, 0.8, 0.3, 0.6, 0.1, 0.2, 0.3, 0.5,
		0.1, 0.1, 0.8, 0.9, 0.05, 0.05, 0.5, 0.1, 0.4, 0.15, 0.7, 0.15,
	}
)

func multiclassFrame(t *testing.T) *data.Frame {
	return frame(t,
		data.NewColumn(ml.LabelCol, mcLabel, nil),
		data.NewColumn(ml.PredictionCol, mcPred, nil),
		data.NewColumn("w", mcWeight, nil),
		ml.VectorOut(ml.ProbabilityCol, 3, mcProb),
	)
}

func TestMulticlass(t *testing.T) {
	f := multiclassFrame(t)
	for _, tc := range []struct {
		metric    string
		weightCol string
		label     float64
		beta      float64
		want      float64
	}{
		{F1, "", 0, 1, 0.6666666666666666},                // f1_score(average="weighted")
		{F1, "w", 0, 1, 0.7637366099558917},               // with sample_weight
		{Accuracy, "", 0, 1, 0.6428571428571429},          // accuracy_score
		{Accuracy, "w", 0, 1, 0.7391304347826086},         // with sample_weight
		{WeightedPrecision, "", 0, 1, 0.6964285714285714}, // precision_score(average="weighted", zero_division=0)
		{WeightedRecall, "", 0, 1, 0.6428571428571429},
		{WeightedTruePositiveRate, "", 0, 1, 0.6428571428571429},
		{WeightedFMeasure, "", 0, 0.5, 0.6836734693877551}, // fbeta_score(beta=0.5, average="weighted")
		{PrecisionByLabel, "", 2, 1, 0.75},
		{RecallByLabel, "", 2, 1, 0.6},
		{TruePositiveRateByLabel, "", 2, 1, 0.6},
		{FMeasureByLabel, "", 2, 1, 2.0 / 3},
		{HammingLoss, "", 0, 1, 0.35714285714285715},
		{LogLoss, "", 0, 1, 3.032303327294746}, // log_loss(eps=1e-15)
		{LogLoss, "w", 0, 1, 6.465145860598389},
		// By hand: class 2 is predicted wrongly for one label-1 row of
		// the 9 rows whose label is not 2: FPR 1/9.
		{FalsePositiveRateByLabel, "", 2, 1, 1.0 / 9},
	} {
		e := NewMulticlassClassificationEvaluator()
		e.MetricName, e.WeightCol, e.MetricLabel, e.Beta = tc.metric, tc.weightCol, tc.label, tc.beta
		if got := evaluate(t, e, f); !near(got, tc.want, 1e-12) {
			t.Errorf("%s (weights %q, label %g, beta %g): %.17g, want %.17g", tc.metric, tc.weightCol, tc.label, tc.beta, got, tc.want)
		}
	}
	// weightedFalsePositiveRate by hand: per class FP/(negatives), weighted
	// by the label counts 4, 5, 5 of 14. Class 0: predicted 0 for one
	// label-2 row: 1/10. Class 1: predicted 1 for label 0 and 2 once
	// each: 2/9. Class 2: 1/9.
	e := NewMulticlassClassificationEvaluator()
	e.MetricName = WeightedFalsePositiveRate
	want := (4*(1.0/10) + 5*(2.0/9) + 5*(1.0/9)) / 14
	if got := evaluate(t, e, f); !near(got, want, 1e-15) {
		t.Errorf("weightedFalsePositiveRate: %.17g, want %.17g", got, want)
	}
}

var (
	regLabel  = []float64{3.0, -0.5, 2.0, 7.0, 4.5, 1.0, 0.0, 5.5}
	regPred   = []float64{2.5, 0.0, 2.0, 8.0, 4.0, 1.5, -1.0, 5.0}
	regWeight = []float64{1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 1.0, 0.25}
)

func regressionFrame(t *testing.T) *data.Frame {
	return frame(t,
		data.NewColumn(ml.LabelCol, regLabel, nil),
		data.NewColumn(ml.PredictionCol, regPred, nil),
		data.NewColumn("w", regWeight, nil),
	)
}

func TestRegression(t *testing.T) {
	f := regressionFrame(t)
	// Spark's weighted r2 by its formula: SStot = variance·(W−1), the
	// variance Σw(y−ȳ)²/(W − Σw²/W); W = 9.75.
	var W, W2, sy, se float64
	for i, w := range regWeight {
		W += w
		W2 += w * w
		sy += w * regLabel[i]
		r := regLabel[i] - regPred[i]
		se += w * r * r
	}
	mean, m2 := sy/W, 0.0
	for i, w := range regWeight {
		m2 += w * (regLabel[i] - mean) * (regLabel[i] - mean)
	}
	sparkR2 := 1 - se/(m2/(W-W2/W)*(W-1))
	var sy2 float64
	for _, y := range regLabel {
		sy2 += y * y
	}
	for _, tc := range []struct {
		metric, weightCol string
		origin            bool
		want              float64
	}{
		{RMSE, "", false, 0.6373774391990981}, // sqrt(mean_squared_error)
		{MSE, "", false, 0.40625},
		{MAE, "", false, 0.5625},
		{R2, "", false, 0.9356037151702786}, // r2_score
		{Var, "", false, 7.25390625},        // mean((q − mean(t))²)
		{MSE, "w", false, 0.391025641025641},
		{MAE, "w", false, 0.5769230769230769},
		{R2, "w", false, sparkR2},
		{R2, "", true, 1 - 0.40625*8/sy2},
	} {
		e := NewRegressionEvaluator()
		e.MetricName, e.WeightCol, e.ThroughOrigin = tc.metric, tc.weightCol, tc.origin
		if got := evaluate(t, e, f); !near(got, tc.want, 1e-12) {
			t.Errorf("%s (weights %q, throughOrigin %v): %.17g, want %.17g", tc.metric, tc.weightCol, tc.origin, got, tc.want)
		}
	}
}

func TestLargerBetter(t *testing.T) {
	for _, tc := range []struct {
		e    ml.Evaluator
		want bool
	}{
		{NewBinaryClassificationEvaluator(), true},
		{NewMulticlassClassificationEvaluator(), true},
		{&MulticlassClassificationEvaluator{MetricName: LogLoss}, false},
		{&MulticlassClassificationEvaluator{MetricName: HammingLoss}, false},
		{NewRegressionEvaluator(), false},
		{&RegressionEvaluator{MetricName: R2}, true},
	} {
		if got := tc.e.LargerBetter(); got != tc.want {
			t.Errorf("%s: LargerBetter %v, want %v", tc.e.Metric(), got, tc.want)
		}
	}
	for _, typ := range []string{"BinaryClassificationEvaluator", "MulticlassClassificationEvaluator", "RegressionEvaluator"} {
		if _, err := ml.NewEvaluator(typ); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ml.NewEvaluator("Nope"); err == nil || !strings.Contains(err.Error(), "RegressionEvaluator") {
		t.Fatalf("New(Nope): %v", err)
	}
}

func TestErrors(t *testing.T) {
	bin := binaryFrame(t)
	mc := multiclassFrame(t)
	reg := regressionFrame(t)
	str := frame(t, data.NewColumn(ml.LabelCol, []string{"a"}, nil), data.NewColumn(ml.PredictionCol, []float64{1}, nil))
	for _, tc := range []struct {
		e    ml.Evaluator
		f    *data.Frame
		want string
	}{
		{&BinaryClassificationEvaluator{RawPredictionCol: "score", LabelCol: "w", MetricName: AreaUnderROC}, bin, `column "w", row 2: label 2 is not 0 or 1`},
		{&BinaryClassificationEvaluator{RawPredictionCol: "score", LabelCol: "label", MetricName: "auc"}, bin, `metricName must be one of "areaUnderROC", "areaUnderPR", got "auc"`},
		{&BinaryClassificationEvaluator{RawPredictionCol: "nope", LabelCol: "label", MetricName: AreaUnderROC}, bin, `no column "nope"`},
		{&BinaryClassificationEvaluator{RawPredictionCol: "score", LabelCol: "label", MetricName: AreaUnderROC}, bin.Slice(0, 2), "needs both positive and negative"},
		{&MulticlassClassificationEvaluator{PredictionCol: "prediction", LabelCol: "w", MetricName: F1, Beta: 1, Eps: 1e-15}, mc, `column "w", row 2: 0.5 is not a class index`},
		{&MulticlassClassificationEvaluator{PredictionCol: "prediction", LabelCol: "label", ProbabilityCol: "nope", MetricName: LogLoss, Beta: 1, Eps: 1e-15}, mc, `logLoss needs the probabilities: no column "nope"`},
		{&MulticlassClassificationEvaluator{PredictionCol: "prediction", LabelCol: "label", MetricName: F1, Beta: 1, Eps: 1e-15}, str, `column "label" is string, not numeric`},
		{&MulticlassClassificationEvaluator{MetricName: "f2", Beta: 1, Eps: 1e-15}, mc, `metricName must be one of`},
		{&RegressionEvaluator{PredictionCol: "prediction", LabelCol: "label", MetricName: R2}, reg.Slice(2, 3), "r2 needs labels that vary"},
		{&RegressionEvaluator{PredictionCol: "prediction", LabelCol: "label", MetricName: RMSE}, reg.Slice(0, 0), "no rows"},
		{&RegressionEvaluator{PredictionCol: "prediction", LabelCol: "label", MetricName: RMSE}, str, `column "label" is string, not numeric`},
	} {
		_, err := tc.e.Evaluate(tc.f, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.e.Metric(), err, tc.want)
		}
	}
	e := NewBinaryClassificationEvaluator()
	e.RawPredictionCol = "score"
	if _, err := e.Evaluate(bin.Slice(0, 2), nil); !errors.Is(err, metrics.ErrOneClass) {
		t.Errorf("one class: %v is not metrics.ErrOneClass", err)
	}
}

// evaluateOnRanks evaluates f split over n ranks of a TCP group and
// returns every rank's score.
func evaluateOnRanks(t *testing.T, e ml.Evaluator, f *data.Frame, n int) []float64 {
	t.Helper()
	gs := commtest.Groups(t, n, comm.TransportTCP, nil)
	out := make([]float64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r], errs[r] = e.Evaluate(mltest.SplitRows(f, r, n), ml.Group(g))
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
	bin, mc, reg := binaryFrame(t), multiclassFrame(t), regressionFrame(t)
	type named struct {
		e ml.Evaluator
		f *data.Frame
	}
	var cases []named
	for _, m := range []string{AreaUnderROC, AreaUnderPR} {
		e := NewBinaryClassificationEvaluator()
		e.MetricName, e.WeightCol = m, "w"
		cases = append(cases, named{e, bin})
	}
	for _, m := range multiclassMetrics {
		e := NewMulticlassClassificationEvaluator()
		e.MetricName, e.WeightCol, e.MetricLabel = m, "w", 1
		cases = append(cases, named{e, mc})
	}
	for _, m := range []string{RMSE, MSE, R2, MAE, Var} {
		e := NewRegressionEvaluator()
		e.MetricName, e.WeightCol = m, "w"
		cases = append(cases, named{e, reg})
	}
	for _, c := range cases {
		want := evaluate(t, c.e, c.f)
		for _, n := range []int{1, 2, 3, 4} {
			for r, got := range evaluateOnRanks(t, c.e, c.f, n) {
				if !near(got, want, 1e-12) {
					t.Errorf("%s on %d ranks, rank %d: %.17g, single process %.17g", c.e.Metric(), n, r, got, want)
				}
			}
		}
	}
}
