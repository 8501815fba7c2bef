package main

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/train/job"
)

// trainRegression trains examples/linear-regression.yaml into dir with
// extra overrides and returns the model path.
func trainRegression(t *testing.T, dir string, sets ...string) string {
	t.Helper()
	sets = append([]string{"output.dir=" + dir, "epochs=20"}, sets...)
	if _, err := captureStdout(t, false, func() error {
		return runTrain(context.Background(), "../../examples/linear-regression.yaml", sets, true, io.Discard)
	}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "model.safetensors")
}

// readCSVRecords reads a whole CSV file.
func readCSVRecords(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestPredictRegression predicts with a regression model from CSV and
// Parquet input, with and without the label column.
func TestPredictRegression(t *testing.T) {
	dir := t.TempDir()
	model := trainRegression(t, filepath.Join(dir, "run"))
	full, err := data.ReadCSV("../../examples/data/linear.csv", data.CSVOptions{Label: "y", LabelKind: data.LabelNumeric})
	if err != nil {
		t.Fatal(err)
	}
	noLabel := &data.Table{Rows: full.Rows, Cols: full.Cols, X: full.X, Columns: full.Columns}
	noLabelCSV := filepath.Join(dir, "nolabel.csv")
	var b strings.Builder
	b.WriteString("x1,x2\n")
	for i := range full.Rows {
		r := full.Row(i)
		b.WriteString(strings.Join([]string{ftoa(r[0]), ftoa(r[1])}, ",") + "\n")
	}
	if err := os.WriteFile(noLabelCSV, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	withPQ, noPQ := filepath.Join(dir, "with.parquet"), filepath.Join(dir, "without.parquet")
	if err := data.WriteParquet(withPQ, full); err != nil {
		t.Fatal(err)
	}
	if err := data.WriteParquet(noPQ, noLabel); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"../../examples/data/linear.csv", noLabelCSV, withPQ, noPQ} {
		out := filepath.Join(dir, filepath.Base(in)+".pred.csv")
		if _, err := captureStdout(t, false, func() error { return runPredict(model, in, out, 64, io.Discard, io.Discard) }); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		recs := readCSVRecords(t, out)
		if len(recs) != full.Rows+1 {
			t.Errorf("%s: %d prediction rows, want %d", in, len(recs)-1, full.Rows)
		}
	}
}

func ftoa(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// TestHeaderOnlyInput: eval and predict of a file with a header and no
// rows are errors naming the file, not NaN metrics or "0 predictions".
func TestHeaderOnlyInput(t *testing.T) {
	dir := t.TempDir()
	model := trainRegression(t, filepath.Join(dir, "run"))
	empty := filepath.Join(dir, "empty.csv")
	if err := os.WriteFile(empty, []byte("x1,x2,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := captureStdout(t, false, func() error { return runEval(model, evalOptions{source: empty, batch: 100}, io.Discard, io.Discard) })
	if err == nil || !strings.Contains(err.Error(), empty+" has no data rows") {
		t.Errorf("eval: %v, want %q has no data rows", err, empty)
	}
	_, err = captureStdout(t, false, func() error {
		return runPredict(model, empty, filepath.Join(dir, "p.csv"), 100, io.Discard, io.Discard)
	})
	if err == nil || !strings.Contains(err.Error(), empty+" has no data rows") {
		t.Errorf("predict: %v, want %q has no data rows", err, empty)
	}
}

// TestPredictOutCreatesDir: --out into a directory that does not exist
// creates it; the file gets mode 0644 (less the umask).
func TestPredictOutCreatesDir(t *testing.T) {
	dir := t.TempDir()
	model := trainRegression(t, filepath.Join(dir, "run"))
	out := filepath.Join(dir, "new", "sub", "pred.csv")
	if _, err := captureStdout(t, false, func() error {
		return runPredict(model, "../../examples/data/linear.csv", out, 100, io.Discard, io.Discard)
	}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{out, model, filepath.Join(dir, "run", "metrics.csv")} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o044 == 0 {
			t.Errorf("%s: mode %o, want readable by others (0644 less umask)", p, st.Mode().Perm())
		}
	}
}

// TestEvalUsesRecordedSplit: a model trained with another split seed
// (--set) is scored by `eval --data CONFIG` on the rows it held out, not
// on the config file's own split.
func TestEvalUsesRecordedSplit(t *testing.T) {
	dir := t.TempDir()
	var res *job.Result
	cfg, err := job.Load("../../examples/iris.yaml", []string{"data.split_seed=7", "epochs=10", "output.dir=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	if res, err = job.Run(context.Background(), cfg, job.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	out, err := captureStdout(t, true, func() error {
		return runEval(res.ModelPath, evalOptions{source: "../../examples/iris.yaml", batch: 100}, io.Discard, &stderr)
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := lastJSON(t, out)
	if loss, _ := ev["loss"].(float64); math.Abs(loss-res.Test.Loss) > 1e-5 || int(ev["rows"].(float64)) != res.Test.Samples {
		t.Errorf("eval %v, training's test split gave loss %v on %d rows", ev, res.Test.Loss, res.Test.Samples)
	}
	if !strings.Contains(stderr.String(), "data.split_seed 7 (the config says 1)") {
		t.Errorf("stderr %q does not say the model's split is used", stderr.String())
	}
	// --set applies to eval too.
	if _, err := captureStdout(t, true, func() error {
		return runEval(res.ModelPath, evalOptions{source: "../../examples/iris.yaml", batch: 100, sets: []string{"data.split_seed=7"}}, io.Discard, io.Discard)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestEvalRefusesChangedData: when the config's data file no longer holds
// the model's training rows, eval refuses, naming what differs, unless
// --allow-data-change.
func TestEvalRefusesChangedData(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "linear.csv")
	orig, err := os.ReadFile("../../examples/data/linear.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvPath, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "lin.yaml")
	if err := os.WriteFile(cfgPath, []byte(`
data: {source: csv, train: linear.csv, label: y, test_fraction: 0.2}
model: [{type: linear, out: 1}]
loss: mse
optimizer: {type: sgd, lr: 0.1}
epochs: 5
batch_size: 1000
seed: 1
output: {dir: `+filepath.Join(dir, "run")+`}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := captureStdout(t, false, func() error { return runTrain(context.Background(), cfgPath, nil, true, io.Discard) }); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "run", "model.safetensors")
	eval := func(allow bool) error {
		_, err := captureStdout(t, false, func() error {
			return runEval(model, evalOptions{source: cfgPath, batch: 100, allowDataChange: allow}, io.Discard, io.Discard)
		})
		return err
	}
	if err := eval(false); err != nil {
		t.Fatalf("unchanged data: %v", err)
	}
	// Drop the last 50 rows.
	lines := strings.SplitAfter(string(orig), "\n")
	if err := os.WriteFile(csvPath, []byte(strings.Join(lines[:len(lines)-51], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	err = eval(false)
	if !errors.Is(err, job.ErrDataChanged) || !strings.Contains(err.Error(), "training rows: trained on 160, now 120") ||
		!strings.Contains(err.Error(), "--allow-data-change") {
		t.Errorf("changed data: %v, want ErrDataChanged naming the row counts and the flag", err)
	}
	if err := eval(true); err != nil {
		t.Errorf("--allow-data-change: %v", err)
	}
}

// writeLinearConfig writes a regression config over csvName (in dir) and
// returns its path.
func writeLinearConfig(t *testing.T, dir, csvName, extra string) string {
	t.Helper()
	p := filepath.Join(dir, "lin.yaml")
	if err := os.WriteFile(p, []byte(`
data: {source: csv, train: `+csvName+`, label: y, test_fraction: 0.2`+extra+`}
model: [{type: linear, out: 1}]
loss: mse
optimizer: {type: sgd, lr: 0.1}
epochs: 5
batch_size: 1000
seed: 1
output: {dir: `+filepath.Join(dir, "run")+`}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
