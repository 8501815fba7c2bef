package metrics

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestAccumulator(t *testing.T) {
	for _, test := range []struct {
		name string
		add  func(a *Accumulator)
		want Metrics
	}{
		{"classification", func(a *Accumulator) {
			// Rows 0, 2 and 3 are right (row 2 ties: the first maximum wins).
			a.AddLoss(0.5, 3)
			a.AddLogits([]float32{2, 1, 0, 1, 3, 3}, 2, []int64{0, 0, 0})
			a.AddLoss(1.5, 1)
			a.AddLogits([]float32{0, 1}, 2, []int64{1})
		}, Metrics{Loss: (1.5 + 1.5) / 4, Accuracy: 0.75, RMSE: math.NaN(), Samples: 4}},
		{"regression", func(a *Accumulator) {
			a.Task = Regression
			a.AddLoss(2, 2)
			a.AddValues([]float32{1, 2}, []float32{0, 4})
		}, Metrics{Loss: 2, Accuracy: math.NaN(), RMSE: math.Sqrt(5.0 / 2), Samples: 2}},
		{"empty", func(*Accumulator) {}, Metrics{Loss: math.NaN(), Accuracy: math.NaN(), RMSE: math.NaN()}},
	} {
		var a Accumulator
		test.add(&a)
		got := a.Metrics()
		same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
		if !same(got.Loss, test.want.Loss) || !same(got.Accuracy, test.want.Accuracy) || !same(got.RMSE, test.want.RMSE) || got.Samples != test.want.Samples {
			t.Errorf("%s: %+v, want %+v", test.name, got, test.want)
		}
	}
	// Merging shards equals one pass.
	var a, b, all Accumulator
	a.AddLoss(1, 2)
	a.AddLogits([]float32{1, 0, 0, 1}, 2, []int64{0, 0})
	b.AddLoss(3, 1)
	b.AddLogits([]float32{0, 1}, 2, []int64{1})
	all.AddLoss(1, 2)
	all.AddLogits([]float32{1, 0, 0, 1}, 2, []int64{0, 0})
	all.AddLoss(3, 1)
	all.AddLogits([]float32{0, 1}, 2, []int64{1})
	a.Merge(b)
	if a != all {
		t.Errorf("merged %+v, want %+v", a, all)
	}
}

func TestMetricsJSON(t *testing.T) {
	m := Metrics{Loss: 0.25, Accuracy: math.NaN(), RMSE: 1.5, Samples: 3}
	b, err := json.Marshal(m)
	if err != nil || string(b) != `{"loss":0.25,"rmse":1.5,"samples":3}` {
		t.Fatalf("%s %v", b, err)
	}
	var back Metrics
	if err := json.Unmarshal(b, &back); err != nil || back.Loss != 0.25 || !math.IsNaN(back.Accuracy) || back.RMSE != 1.5 || back.Samples != 3 {
		t.Fatalf("%+v %v", back, err)
	}
	if v, ok := m.Get("rmse"); !ok || v != 1.5 {
		t.Fatal("Get rmse")
	}
	if _, ok := m.Get("f1"); ok {
		t.Fatal("Get f1 succeeded")
	}
}

func TestTask(t *testing.T) {
	for _, test := range []struct {
		in   string
		want Task
	}{{"classification", Classification}, {"Regression", Regression}, {"class", Classification}} {
		got, err := ParseTask(test.in)
		if err != nil || got != test.want || (got.String() != "classification" && got.String() != "regression") {
			t.Errorf("ParseTask(%q) = %v, %v", test.in, got, err)
		}
	}
	if _, err := ParseTask("ranking"); err == nil {
		t.Error("ParseTask(ranking) succeeded")
	}
	if Classification.Headline() != "accuracy" || Regression.Headline() != "rmse" {
		t.Error("Headline")
	}
}

// The classification example of the tests below and scikit-learn's
// numbers for it (python3 -c 'from sklearn.metrics import f1_score, ...').
var (
	clsTruth = []int64{0, 1, 2, 2, 1, 0, 2, 1, 1, 0}
	clsPred  = []int64{0, 2, 2, 2, 1, 0, 1, 1, 0, 0}
)

func TestClassification(t *testing.T) {
	if got := Accuracy(clsPred, clsTruth); got != 0.7 {
		t.Errorf("accuracy %v, want 0.7", got)
	}
	cm, err := ConfusionMatrix(clsPred, clsTruth, 3)
	if err != nil {
		t.Fatal(err)
	}
	// sklearn.metrics.confusion_matrix
	want := [][]int{{3, 0, 0}, {1, 2, 1}, {0, 1, 2}}
	for i := range want {
		if !slices.Equal(cm[i], want[i]) {
			t.Fatalf("confusion %v, want %v", cm, want)
		}
	}
	per := PerClass(cm)
	for _, test := range []struct {
		name      string
		got, want float64
	}{
		// By hand: class 0 precision 3/4, recall 1, F1 6/7; class 1
		// precision 2/3, recall 2/4; class 2 precision 2/3, recall 2/3.
		{"precision[0]", per[0].Precision, 0.75},
		{"recall[1]", per[1].Recall, 0.5},
		{"f1[2]", per[2].F1, 2.0 / 3},
		// scikit-learn: f1_score(average=None)
		{"f1[0]", per[0].F1, 0.8571428571428571},
		{"f1[1]", per[1].F1, 0.5714285714285715},
		// scikit-learn: average="macro"
		{"macro f1", Macro(per).F1, 0.6984126984126985},
		{"macro precision", Macro(per).Precision, 0.6944444444444443},
		{"macro recall", Macro(per).Recall, 0.7222222222222222},
	} {
		if !near(test.got, test.want) {
			t.Errorf("%s = %v, want %v", test.name, test.got, test.want)
		}
	}
	if per[1].Support != 4 || Macro(per).Support != 10 {
		t.Errorf("support %d, %d", per[1].Support, Macro(per).Support)
	}
	// A class never predicted has precision 0 (zero_division=0).
	if s := PerClass([][]int{{1, 0}, {1, 0}}); s[1].Precision != 0 || s[1].F1 != 0 {
		t.Errorf("unpredicted class: %+v", s[1])
	}
	if _, err := ConfusionMatrix([]int64{3}, []int64{0}, 3); err == nil {
		t.Error("class out of range accepted")
	}
}

func TestLogLoss(t *testing.T) {
	probs := []float64{0.7, 0.2, 0.1, 0.1, 0.5, 0.4, 0.2, 0.2, 0.6, 0.3, 0.3, 0.4}
	for _, test := range []struct {
		name   string
		labels []int64
		want   float64
	}{
		// scikit-learn: log_loss([0, 1, 2, 0], probs)
		{"sklearn", []int64{0, 1, 2, 0}, 0.6911551381476511},
		// By hand: −(ln 0.7 + ln 0.5 + ln 0.6 + ln 0.3)/4.
		{"hand", []int64{0, 1, 2, 0}, -(math.Log(0.7) + math.Log(0.5) + math.Log(0.6) + math.Log(0.3)) / 4},
	} {
		got, err := LogLoss(probs, 3, test.labels)
		if err != nil || !near(got, test.want) {
			t.Errorf("%s: %v %v, want %v", test.name, got, err, test.want)
		}
	}
	if got, _ := LogLoss([]float64{0, 1}, 2, []int64{0}); math.IsInf(got, 0) || got < 30 {
		t.Errorf("zero probability: %v, want a large finite loss", got)
	}
}

func TestROCAUC(t *testing.T) {
	for _, test := range []struct {
		name   string
		scores []float64
		labels []bool
		want   float64
	}{
		{"perfect", []float64{0.1, 0.2, 0.8, 0.9}, []bool{false, false, true, true}, 1},
		{"reversed", []float64{0.9, 0.8, 0.2, 0.1}, []bool{false, false, true, true}, 0},
		{"all tied", []float64{0.5, 0.5, 0.5}, []bool{true, false, false}, 0.5},
		// scikit-learn: roc_auc_score([0,0,1,1,1,0,1,0], scores) = 0.8125;
		// by hand, 13 of the 16 positive-negative pairs are ordered
		// right, the two ties at 0.4 counting one half each.
		{"ties", []float64{0.1, 0.4, 0.35, 0.8, 0.4, 0.4, 0.9, 0.2},
			[]bool{false, false, true, true, true, false, true, false}, 0.8125},
	} {
		got, err := ROCAUC(test.scores, test.labels)
		if err != nil || !near(got, test.want) {
			t.Errorf("%s: %v %v, want %v", test.name, got, err, test.want)
		}
	}
	if _, err := ROCAUC([]float64{1, 2}, []bool{true, true}); !errors.Is(err, ErrOneClass) {
		t.Errorf("one class: %v", err)
	}
}

func TestRegression(t *testing.T) {
	truth := []float64{3, -0.5, 2, 7}
	pred := []float64{2.5, 0, 2, 8}
	for _, test := range []struct {
		name      string
		got, want float64
	}{
		// scikit-learn: r2_score, mean_absolute_error, mean_squared_error**0.5
		{"r2", R2(pred, truth), 0.9486081370449679},
		{"mae", MAE(pred, truth), 0.5},
		{"rmse", RMSE(pred, truth), 0.6123724356957945},
		// By hand: squared errors 0.25, 0.25, 0, 1.
		{"rmse by hand", RMSE(pred, truth), math.Sqrt(1.5 / 4)},
		{"r2 of the mean", R2([]float64{2, 2, 2}, []float64{1, 2, 3}), 0},
		{"r2 constant exact", R2([]float64{1, 1}, []float64{1, 1}), 1},
	} {
		if !near(test.got, test.want) {
			t.Errorf("%s = %v, want %v", test.name, test.got, test.want)
		}
	}
	if !math.IsNaN(RMSE(nil, nil)) || !math.IsNaN(Accuracy(nil, nil)) {
		t.Error("empty inputs are not NaN")
	}
}
