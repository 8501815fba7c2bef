package main

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/modelfile"
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

// TestImputeMeanSavedWithModel: a model trained with impute: mean fills
// missing values at predict and eval with its training means; without it
// the errors speak of the config key, not of package data's identifiers.
func TestImputeMeanSavedWithModel(t *testing.T) {
	dir := t.TempDir()
	csvText := "x1,x2,y\n1,2,3\n2,,4\n3,4,5\n4,1,2\n5,NA,6\n6,3,1\n7,2,2\n8,5,9\n9,1,3\n10,2,4\n"
	if err := os.WriteFile(filepath.Join(dir, "m.csv"), []byte(csvText), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without impute: mean the hint names the config key.
	cfg := writeLinearConfig(t, dir, "m.csv", "")
	err := runTrain(context.Background(), cfg, nil, true, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "impute: mean") || strings.Contains(err.Error(), "MissingMean") {
		t.Errorf("training without impute: %v, want a hint naming impute: mean", err)
	}
	cfg = writeLinearConfig(t, dir, "m.csv", ", impute: mean")
	if _, err := captureStdout(t, false, func() error { return runTrain(context.Background(), cfg, nil, true, io.Discard) }); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "run", "model.safetensors")
	m, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{5.5, 20.0 / 8}
	if len(m.Impute) != 2 || math.Abs(m.Impute[0]-want[0]) > 1e-6 || math.Abs(m.Impute[1]-want[1]) > 1e-6 {
		t.Fatalf("imputation means %v, want %v", m.Impute, want)
	}
	out := filepath.Join(dir, "pred.csv")
	if _, err := captureStdout(t, false, func() error { return runPredict(model, filepath.Join(dir, "m.csv"), out, 100, io.Discard, io.Discard) }); err != nil {
		t.Fatalf("predict on the training file: %v", err)
	}
	// Row 2 (x2 missing) predicts as x2 = the training mean.
	filled := &data.Table{Rows: 1, Cols: 2, X: []float32{2, float32(want[1])}, Columns: []string{"x1", "x2"}}
	p, err := m.Predict(filled, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := readCSVRecords(t, out)[2][0]; got != strconv.FormatFloat(float64(p.Values[0]), 'g', -1, 32) {
		t.Errorf("row with x2 missing predicts %s, with x2 = training mean %v", got, p.Values[0])
	}
	if _, err := captureStdout(t, false, func() error {
		return runEval(model, evalOptions{source: filepath.Join(dir, "m.csv"), batch: 100}, io.Discard, io.Discard)
	}); err != nil {
		t.Errorf("eval on the training file: %v", err)
	}
	// The same from Parquet, x2 null in its second row.
	pq := filepath.Join(dir, "m.parquet")
	writeNullableParquet(t, pq, []float64{1, 2, 3}, []float64{2, 0, 4}, []bool{true, false, true})
	pqOut := filepath.Join(dir, "pq.csv")
	if _, err := captureStdout(t, false, func() error { return runPredict(model, pq, pqOut, 100, io.Discard, io.Discard) }); err != nil {
		t.Fatalf("predict on Parquet with a null: %v", err)
	}
	if got := readCSVRecords(t, pqOut)[2][0]; got != strconv.FormatFloat(float64(p.Values[0]), 'g', -1, 32) {
		t.Errorf("Parquet row with x2 null predicts %s, with x2 = training mean %v", got, p.Values[0])
	}
	// A model trained without imputation says how to get it.
	lin := trainRegression(t, filepath.Join(dir, "lin"))
	err = runPredict(lin, filepath.Join(dir, "m.csv"), filepath.Join(dir, "p2.csv"), 100, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "impute: mean") || strings.Contains(err.Error(), "MissingMean") {
		t.Errorf("predict with missing values: %v, want a hint naming impute: mean", err)
	}
}

// TestInputColumnsChecked: the model file records its feature count and
// names; an input with many unused columns gives a warning, one without
// a needed column an error naming it.
func TestInputColumnsChecked(t *testing.T) {
	dir := t.TempDir()
	model := trainRegression(t, filepath.Join(dir, "run"))
	a, _, err := modelfile.ReadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	if a.Features != 2 || !slices.Equal(a.Columns, []string{"x1", "x2"}) {
		t.Errorf("model records %d features %v, want 2 [x1 x2]", a.Features, a.Columns)
	}
	wide := filepath.Join(dir, "wide.csv")
	if err := os.WriteFile(wide, []byte("a,b,x1,c,x2,d,e\n0,0,1,0,2,0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if _, err := captureStdout(t, false, func() error { return runPredict(model, wide, "", 100, io.Discard, &stderr) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "5 columns the model does not use (a, b, c, d, e)") {
		t.Errorf("stderr %q, want a warning about 5 unused columns", stderr.String())
	}
	narrow := filepath.Join(dir, "narrow.csv")
	if err := os.WriteFile(narrow, []byte("x1,z\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runPredict(model, narrow, "", 100, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"x2"`) {
		t.Errorf("input without x2: %v, want an error naming x2", err)
	}
}

// writeNullableParquet writes columns x1 and x2 (x2 valid where valid says)
// to a Parquet file.
func writeNullableParquet(t *testing.T, path string, x1, x2 []float64, valid []bool) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x1", Type: arrow.PrimitiveTypes.Float64},
		{Name: "x2", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Float64Builder).AppendValues(x1, nil)
	b.Field(1).(*array.Float64Builder).AppendValues(x2, valid)
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, 1024, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}
