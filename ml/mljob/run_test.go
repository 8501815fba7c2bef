package mljob

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/comm/join"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/glm"
	"github.com/fathom-ml/fathom/ml/linear"
	"github.com/fathom-ml/fathom/ml/mlp"
	"github.com/fathom-ml/fathom/ml/mltest"
	"github.com/fathom-ml/fathom/ml/tune"
)

// writeRegressionCSV writes n rows x1,x2,x3,label (a noisy linear
// label), generated deterministically, and returns the path.
func writeRegressionCSV(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("x1,x2,x3,label\n")
	state := uint64(99)
	next := func() float64 {
		state = state*6364136223846793005 + 1442695040888963407
		return float64(state>>11)/(1<<53) - 0.5
	}
	for range n {
		x1, x2, x3 := next()*4, next()*4, next()*4
		fmt.Fprintf(&b, "%.6f,%.6f,%.6f,%.6f\n", x1, x2, x3, 3*x1-x2+0.5*x3+next())
	}
	path := filepath.Join(dir, "train.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadTestConfig(t *testing.T, dir string, extra string, set ...string) *Config {
	t.Helper()
	path := filepath.Join(dir, "job.yaml")
	text := baseConfig + extra
	if strings.HasPrefix(extra, "evaluator:") {
		text = strings.Replace(baseConfig, "evaluator:", "#", 1) + extra
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, append([]string{"output.dir=" + filepath.Join(dir, "out")}, set...))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRunByHand checks a fit against the same steps done by hand: the
// held-out rows are those whose row hash falls under testFraction.
func TestRunByHand(t *testing.T) {
	dir := t.TempDir()
	csv := writeRegressionCSV(t, dir, 200)
	c := loadTestConfig(t, dir, "evaluator:\n  - {type: mljobTestRegressionEvaluator}\n  - {type: mljobTestRegressionEvaluator, params: {metricName: r2}}\n")
	res, err := Run(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := data.ReadCSVFrame(csv, data.CSVFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tr, te []int
	for i := range f.Len() {
		if tune.RowUniform(3, i) < 0.25 {
			te = append(te, i)
		} else {
			tr = append(tr, i)
		}
	}
	p := ml.NewPipeline(&assembler{InputCols: []string{"x1", "x2", "x3"}, OutputCol: "features"}, &ridge{RegParam: 0.01, MaxIter: 100, FeaturesCol: "features", LabelCol: "label"})
	m, err := p.Fit(ml.Local(f.Take(tr)))
	if err != nil {
		t.Fatal(err)
	}
	if d := mltest.DiffModels(m, res.Model, 0); d != "" {
		t.Fatalf("model differs from the one fit by hand: %s", d)
	}
	out, _ := m.Transform(f.Take(te))
	want, _ := (&rmseEval{MetricName: "rmse", LabelCol: "label"}).Evaluate(out, ml.Single)
	if res.Metrics["rmse"] != want || res.MetricsSplit != "test" || res.TestRows != len(te) || res.TrainRows != len(tr) {
		t.Fatalf("result %+v; want rmse %g on %d test rows", res, want, len(te))
	}
	if _, ok := res.Metrics["r2"]; !ok || res.Iterations != 100 {
		t.Fatalf("metrics %v, iterations %d", res.Metrics, res.Iterations)
	}
	// The files: the model loads back to the same model; metrics.json
	// holds the result.
	back, err := ml.LoadModel(res.ModelPath)
	if err != nil {
		t.Fatal(err)
	}
	if d := mltest.DiffModels(m, back, 0); d != "" {
		t.Fatalf("saved model: %s", d)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got Result
	if err := json.Unmarshal(b, &got); err != nil || got.Metrics["rmse"] != want || got.ModelPath != res.ModelPath {
		t.Fatalf("metrics.json %s (%v)", b, err)
	}
}

func TestRunTuning(t *testing.T) {
	dir := t.TempDir()
	writeRegressionCSV(t, dir, 150)
	for _, method := range []string{"crossValidator: {numFolds: 4, parallelism: 3, seed: 2}", "trainValidationSplit: {trainRatio: 0.6, seed: 2}"} {
		c := loadTestConfig(t, dir, "tuning:\n  "+method+"\n  grid:\n    ridge.regParam: [10, 1, 0.001]\n    ridge.maxIter: [5, 6]\n")
		res, err := Run(c, Options{NoSave: true})
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Tuning
		if tr == nil || len(tr.Grid) != 6 || len(tr.AvgMetrics) != 6 {
			t.Fatalf("%s: tuning %+v", method, tr)
		}
		// Spark's order: regParam varies fastest.
		if g, _ := json.Marshal(tr.Grid[1]); string(g) != `{"ridge.maxIter":5,"ridge.regParam":1}` {
			t.Fatalf("grid point 1: %s", g)
		}
		if tr.Best["ridge.regParam"] != 0.001 {
			t.Fatalf("%s: best %v (metrics %v)", method, tr.Best, tr.AvgMetrics)
		}
		// The saved model is the best point refit on all training rows.
		train, _, _ := c.readData(ml.Single, false)
		p, _ := c.NewPipeline()
		p.Stages[1].(*ridge).RegParam = 0.001
		p.Stages[1].(*ridge).MaxIter = tr.Best["ridge.maxIter"].(int)
		m, _ := p.Fit(ml.Local(train))
		if d := mltest.DiffModels(m, res.Model, 0); d != "" {
			t.Fatalf("%s: best model: %s", method, d)
		}
	}
}

// runOnRanks runs the config on n ranks of a loopback group.
func runOnRanks(t *testing.T, c *Config, n int) []*Result {
	t.Helper()
	gs := commtest.Groups(t, n, comm.TransportTCP, nil)
	out := make([]*Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r], errs[r] = Run(c, Options{Comm: ml.Group(g)})
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

func TestRunDistributed(t *testing.T) {
	dir := t.TempDir()
	writeRegressionCSV(t, dir, 161)
	for _, tuning := range []string{"", "crossValidator: {numFolds: 3, parallelism: 2}", "crossValidator: {numFolds: 3, parallelism: 2, distribution: spread}"} {
		extra := ""
		if tuning != "" {
			extra = "tuning:\n  " + tuning + "\n  grid: {ridge.regParam: [1, 0.1, 0.001]}\n"
		}
		c := loadTestConfig(t, dir, extra)
		single, err := Run(c, Options{NoSave: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{2, 3} {
			os.RemoveAll(filepath.Join(dir, "out"))
			rs := runOnRanks(t, c, n)
			for r, res := range rs {
				if res.TrainRows != single.TrainRows || res.TestRows != single.TestRows || res.Ranks != n {
					t.Fatalf("%q, %d ranks, rank %d: rows %d/%d, single %d/%d", tuning, n, r, res.TrainRows, res.TestRows, single.TrainRows, single.TestRows)
				}
				if d := mltest.DiffModels(single.Model, res.Model, 1e-9); d != "" {
					t.Fatalf("%q, %d ranks, rank %d: model: %s", tuning, n, r, d)
				}
				if a, b := single.Metrics["rmse"], res.Metrics["rmse"]; math.Abs(a-b) > 1e-9*a {
					t.Fatalf("%q, %d ranks, rank %d: rmse %.17g, single %.17g", tuning, n, r, b, a)
				}
				if tuning != "" && res.Tuning.BestIndex != single.Tuning.BestIndex {
					t.Fatalf("%q, %d ranks, rank %d: best %d, single %d", tuning, n, r, res.Tuning.BestIndex, single.Tuning.BestIndex)
				}
			}
			// Rank 0 wrote the model.
			back, err := ml.LoadModel(rs[0].ModelPath)
			if err != nil {
				t.Fatal(err)
			}
			if d := mltest.DiffModels(rs[0].Model, back, 0); d != "" {
				t.Fatal(d)
			}
		}
	}
}

func writeParts(t *testing.T, dir string, f *data.Frame, parts int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := f.Len()
	for i := range parts {
		p := f.Slice(n*i/parts, n*(i+1)/parts)
		if err := WritePredictions(filepath.Join(dir, fmt.Sprintf("part-%02d.parquet", i)), p, p.Names()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadFrameShares(t *testing.T) {
	dir := t.TempDir()
	csv := writeRegressionCSV(t, dir, 37)
	whole, err := data.ReadCSVFrame(csv, data.CSVFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(dir, "pq")
	writeParts(t, pq, whole, 5)
	for _, path := range []string{csv, pq} {
		for _, n := range []int{1, 2, 3, 5, 7} {
			var shares []*data.Frame
			for r := range n {
				f, err := ReadFrame([]string{path}, ReadOptions{Columns: []string{"label", "x2"}}, r, n)
				if err != nil {
					t.Fatal(err)
				}
				shares = append(shares, f)
			}
			all, err := Concat(shares...)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := whole.Select("label", "x2")
			if d := mltest.DiffFrames(want, all, 0); d != "" {
				t.Fatalf("%s over %d ranks: the shares in rank order differ from the file: %s", path, n, d)
			}
		}
	}
	// Two paths are read one after the other.
	f, err := ReadFrame([]string{csv, pq}, ReadOptions{}, 0, 1)
	if err != nil || f.Len() != 74 {
		t.Fatalf("two paths: %v rows, %v", f.Len(), err)
	}
	if _, err := ReadFrame([]string{filepath.Join(dir, "job.json")}, ReadOptions{}, 0, 1); err == nil {
		t.Fatal("a missing file: no error")
	}
	os.WriteFile(filepath.Join(dir, "x.json"), []byte("{}"), 0o644)
	if _, err := ReadFrame([]string{filepath.Join(dir, "x.json")}, ReadOptions{}, 0, 1); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Fatalf("a JSON file: %v", err)
	}
}

func TestConcat(t *testing.T) {
	a, _ := data.NewFrame(data.NewColumn("s", []string{"a", "b"}, nil), data.NewColumn("x", []float64{1, 2}, []bool{true, false}),
		data.NewVectorColumn32("v", 2, []float32{1, 2, 3, 4}, nil, nil))
	b, _ := data.NewFrame(data.NewColumn("s", []string{"c"}, nil), data.NewColumn("x", []float64{3}, nil),
		data.NewVectorColumn32("v", 2, []float32{5, 6}, nil, nil))
	f, err := Concat(a, b)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := f.Strings("s")
	x := f.Col("x")
	v, _ := f.Vectors("v")
	if !slices.Equal(s, []string{"a", "b", "c"}) || !x.IsNull(1) || x.IsNull(2) || !slices.Equal(v.Float32s(), []float32{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("concat: %v", f)
	}
	c, _ := data.NewFrame(data.NewColumn("s", []float64{1}, nil), data.NewColumn("x", []float64{3}, nil), data.NewVectorColumn32("v", 2, []float32{5, 6}, nil, nil))
	if _, err := Concat(a, c); err == nil {
		t.Fatal("different kinds: no error")
	}
}

func TestWritePredictions(t *testing.T) {
	dir := t.TempDir()
	f, _ := data.NewFrame(data.NewColumn("prediction", []float64{1, 0.1 + 0.2}, nil),
		data.NewVectorColumn("probability", 2, []float64{0.25, 0.75, 1.0 / 3, 2.0 / 3}, nil, nil),
		data.NewColumn("predictedLabel", []string{"b", "a"}, nil))
	in, _ := data.NewFrame(data.NewColumn("x", []float64{0, 0}, nil))
	names, err := PredictionColumns(in, f)
	if err != nil || !slices.Equal(names, []string{"prediction", "probability", "predictedLabel"}) {
		t.Fatalf("columns %v, %v", names, err)
	}
	for _, name := range []string{"p.csv", "p.parquet"} {
		path := filepath.Join(dir, name)
		if err := WritePredictions(path, f, names); err != nil {
			t.Fatal(err)
		}
		back, err := ReadAll([]string{path}, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.Names(), []string{"prediction", "probability_0", "probability_1", "predictedLabel"}) {
			t.Fatalf("%s: columns %v", name, back.Names())
		}
		p1, _ := back.Float64s("probability_0")
		pr, _ := back.Float64s("prediction")
		if p1[1] != 1.0/3 || pr[1] != 0.1+0.2 {
			t.Fatalf("%s: values not kept exactly: %v %v", name, p1, pr)
		}
	}
	if err := WritePredictions(filepath.Join(dir, "p.txt"), f, names); err == nil {
		t.Fatal("unknown extension: no error")
	}
}

func TestResultJSONNaN(t *testing.T) {
	r := Result{Metrics: map[string]float64{"auc": math.NaN(), "rmse": 2}, FitSeconds: 1,
		Tuning: &TuningResult{Method: "crossValidator", AvgMetrics: []float64{1, math.Inf(1)}, Best: map[string]any{"a": 1}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	m := back["metrics"].(map[string]any)
	tu := back["tuning"].(map[string]any)
	if m["auc"] != nil || m["rmse"] != 2.0 || back["fit_seconds"] != 1.0 || tu["method"] != "crossValidator" ||
		!slices.Equal(tu["avg_metrics"].([]any), []any{1.0, nil}) {
		t.Fatalf("JSON %s", b)
	}
}

func TestBalancedBounds(t *testing.T) {
	cumOf := func(rows ...int64) []int64 {
		c := []int64{0}
		for _, r := range rows {
			c = append(c, c[len(c)-1]+r)
		}
		return c
	}
	for _, tc := range []struct {
		rows []int64
		size int
		want []int // the boundaries
	}{
		{[]int64{10, 10, 10, 10}, 2, []int{0, 2, 4}},
		{[]int64{10, 10, 10, 10}, 4, []int{0, 1, 2, 3, 4}},
		{[]int64{100, 1, 1, 1, 1}, 2, []int{0, 1, 5}},        // one big part: rank 0 alone
		{[]int64{1, 1, 1, 1, 100}, 2, []int{0, 4, 5}},        // the big part last
		{[]int64{0, 0, 0}, 3, []int{0, 1, 2, 3}},             // empty parts: one each
		{[]int64{5, 5, 5, 5, 5, 5, 5}, 3, []int{0, 2, 5, 7}}, // 35/3: 11.7 → 10, 23.3 → 25
	} {
		cum := cumOf(tc.rows...)
		var got []int
		for r := range tc.size {
			lo, hi, err := balancedBounds(cum, r, tc.size)
			if err != nil {
				t.Fatal(err)
			}
			if r == 0 {
				got = append(got, lo)
			}
			if lo != got[len(got)-1] || hi <= lo {
				t.Fatalf("%v over %d: rank %d gets [%d, %d)", tc.rows, tc.size, r, lo, hi)
			}
			got = append(got, hi)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v over %d ranks: boundaries %v, want %v", tc.rows, tc.size, got, tc.want)
		}
	}
	if _, _, err := balancedBounds(cumOf(1, 2), 0, 3); err == nil {
		t.Error("2 parts for 3 ranks: no error")
	}
}

// TestRunTestPathAndCSVOptions: a separate test file, a semicolon CSV
// without a header, and only some columns read.
func TestRunTestPathAndCSVOptions(t *testing.T) {
	dir := t.TempDir()
	var tr, te strings.Builder
	for i := range 60 {
		x := float64(i) / 10
		line := fmt.Sprintf("%g;%g;%g;skip%d\n", x, x*x, 2*x+1-0.5*x*x, i)
		if i%5 == 0 {
			te.WriteString(line)
		} else {
			tr.WriteString(line)
		}
	}
	os.WriteFile(filepath.Join(dir, "train.csv"), []byte(tr.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "test.csv"), []byte(te.String()), 0o644)
	path := filepath.Join(dir, "job.yaml")
	os.WriteFile(path, []byte(`data:
  train: train.csv
  test: test.csv
  columns: [c1, c2, c3]
  csv: {delimiter: ";", noHeader: true}
pipeline:
  - {type: mljobTestAssembler, params: {inputCols: [c1, c2]}}
  - {type: mljobTestRidge, params: {labelCol: c3}}
evaluator: {type: mljobTestRegressionEvaluator, params: {labelCol: c3}}
`), 0o644)
	c, err := Load(path, []string{"output.dir=" + filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// c3 = 2·c1 − 0.5·c2 + 1: without an intercept the fit is not exact,
	// but the rows are read as written.
	if res.TrainRows != 48 || res.TestRows != 12 || res.MetricsSplit != "test" || !(res.Metrics["rmse"] < 1) {
		t.Fatalf("result %+v", res)
	}
	train, test, err := c.readData(ml.Single, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(train.Names(), []string{"c1", "c2", "c3"}) || test.Len() != 12 {
		t.Fatalf("columns %v, %d test rows", train.Names(), test.Len())
	}
}

func TestCommSingle(t *testing.T) {
	t.Setenv("WORLD_SIZE", "1")
	j, err := join.FromEnv(context.Background(), join.Options{Group: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := Comm(j); c.Size() != 1 || c.Rank() != 0 {
		t.Fatalf("Comm of a single process: %v", c)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// The iterative models report their iteration counts through ml.Iterative.
func TestIterativeModels(t *testing.T) {
	for _, m := range []ml.Iterative{&linear.LinearRegressionModel{Iterations: 3}, &linear.LogisticRegressionModel{Iterations: 4},
		&linear.LinearSVCModel{Iterations: 5}, &mlp.MultilayerPerceptronClassificationModel{Iterations: 6},
		&glm.GeneralizedLinearRegressionModel{Summary: &glm.Summary{NumIterations: 7}}, &glm.GeneralizedLinearRegressionModel{}} {
		if got := Iterations(m.(ml.Model)); got != m.NumIterations() {
			t.Errorf("%T: Iterations %d, NumIterations %d", m, got, m.NumIterations())
		}
	}
	if got := Iterations(&ml.PipelineModel{Stages: []ml.Model{&linear.LinearSVCModel{Iterations: 9}}}); got != 9 {
		t.Errorf("a pipeline's last stage: %d", got)
	}
}
