package runlog

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/metrics"
)

func testHistory() []Epoch {
	return []Epoch{
		{Epoch: 1, Train: metrics.Metrics{Loss: 1, Accuracy: 0.5, RMSE: math.NaN(), Samples: 10},
			Eval: &metrics.Metrics{Loss: 0.9, Accuracy: 0.6, RMSE: math.NaN(), Samples: 5}, LR: 0.1, Seconds: 2, Steps: 3},
		{Epoch: 2, Train: metrics.Metrics{Loss: 0.5, Accuracy: 0.75, RMSE: math.NaN(), Samples: 10}, LR: 0.05, Seconds: 1.5, Steps: 6},
	}
}

func TestMonitored(t *testing.T) {
	h := testHistory()
	for _, test := range []struct {
		name string
		r    Epoch
		want float64
		err  string
	}{
		{"val_loss", h[0], 0.9, ""},
		{"train_accuracy", h[0], 0.5, ""},
		{"eval_acc", h[0], 0.6, ""},
		{"val_loss", h[1], 0, "no evaluation data"},
		{"train_f1", h[0], 0, "unknown metric"},
		{"loss", h[0], 0, "want train_<metric>"},
	} {
		got, err := test.r.Monitored(test.name)
		if test.err != "" {
			if err == nil || !strings.Contains(err.Error(), test.err) {
				t.Errorf("%s: error %v, want %q", test.name, err, test.err)
			}
			continue
		}
		if err != nil || got != test.want {
			t.Errorf("%s = %v, %v, want %v", test.name, got, err, test.want)
		}
	}
	if !HigherIsBetter("val_accuracy") || HigherIsBetter("val_loss") || !IsTrainMetric("train_loss") || IsTrainMetric("val_loss") {
		t.Error("metric helpers")
	}
	if CheckMonitor("val_rmse") != nil || CheckMonitor("val_f1") == nil {
		t.Error("CheckMonitor")
	}
}

func TestWriteMetricsCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.csv")
	if err := WriteMetricsCSV(path, metrics.Classification, testHistory()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "epoch,train_loss,train_accuracy,val_loss,val_accuracy,lr,seconds,eval_seconds\n" +
		"1,1,0.5,0.9,0.6,0.1,2,0\n" +
		"2,0.5,0.75,,,0.05,1.5,0\n"
	if string(b) != want {
		t.Fatalf("metrics.csv:\n%s\nwant\n%s", b, want)
	}
}

func TestJSONLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	for _, r := range testHistory() {
		if err := AppendJSONLine(path, r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"epoch":1,"train":{"loss":1,"accuracy":0.5,"samples":10},"eval":{`) || bytes.Count(b, []byte("\n")) != 2 {
		t.Fatalf("log:\n%s", b)
	}
	back, err := ReadJSONLines(bytes.NewReader(b))
	if err != nil || len(back) != 2 || back[1].Eval != nil || back[0].Eval.Accuracy != 0.6 || !math.IsNaN(back[0].Train.RMSE) {
		t.Fatalf("read back %+v %v", back, err)
	}
}
