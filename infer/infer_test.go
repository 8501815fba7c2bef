package infer_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/infer"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/feature"
	"github.com/fathom-ml/fathom/ml/linear"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// testNet returns a small classifier over the columns x0..x3 (3 classes),
// saved and loaded back as fathom predict would get it.
func testNet(t *testing.T) *modelfile.Model {
	t.Helper()
	spec := nn.Spec{Input: []int{4}, Layers: []nn.LayerSpec{
		{Type: "linear", Out: 8}, {Type: "relu"}, {Type: "linear", Out: 5}, {Type: "tanh"}, {Type: "linear", Out: 3},
	}}
	net, _, err := spec.Build(tensor.NewRNG(7))
	if err != nil {
		t.Fatal(err)
	}
	m := &modelfile.Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: []string{"a", "b", "c"},
		Columns: []string{"x0", "x1", "x2", "x3"},
		Scaler:  &data.Standardizer{Mean: []float64{1, 0, -1, 0.5}, Std: []float64{2, 1, 0.5, 0}}}
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	m, err = modelfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// rowsFrame returns n rows: id (from start), x0..x3, and a label.
func rowsFrame(start, n int) *data.Frame {
	id := make([]int64, n)
	xs := make([][]float64, 4)
	for j := range xs {
		xs[j] = make([]float64, n)
	}
	for i := range n {
		id[i] = int64(start + i)
		for j := range xs {
			xs[j][i] = math.Sin(float64((start+i)*(j+3))) * float64(j+1)
		}
	}
	f, _ := data.NewFrame(data.NewColumn("id", id, nil), data.NewColumn("x0", xs[0], nil), data.NewColumn("x1", xs[1], nil),
		data.NewColumn("x2", xs[2], nil), data.NewColumn("x3", xs[3], nil))
	return f
}

func writeParquet(t *testing.T, path string, f *data.Frame) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := data.NewParquetFrameWriter(fh, f, data.ParquetWriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Two row groups, to cross batch and row-group boundaries.
	h := f.Len() / 2
	if err := w.Write(f.Slice(0, h)); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(f.Slice(h, f.Len())); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// wantProbs is the model's own prediction (modelfile.Predict) of f's rows.
func wantProbs(t *testing.T, m *modelfile.Model, f *data.Frame) *modelfile.Predictions {
	t.Helper()
	tb, err := f.Table(data.TableOptions{Features: m.Columns})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Predict(tb, 64)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readOut(t *testing.T, path string) *data.Frame {
	t.Helper()
	f, err := data.ReadParquetFrame(path, data.ParquetFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestHivePartitionsParquet: a Spark-style layout (key=value directories,
// _SUCCESS and a _temporary directory to skip) predicted in small batches:
// every row once, its id and key columns kept, the probabilities those of
// modelfile's Predict.
func TestHivePartitionsParquet(t *testing.T) {
	m := testNet(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	type part struct {
		rel        string
		start, n   int
		day, shard string
	}
	parts := []part{
		{"day=2024-01-01/shard=1/part-0.parquet", 0, 37, "2024-01-01", "1"},
		{"day=2024-01-01/shard=2/part-0.parquet", 37, 5, "2024-01-01", "2"},
		{"day=2024-01-02/shard=1/part-0.parquet", 42, 64, "2024-01-02", "1"},
	}
	for _, p := range parts {
		writeParquet(t, filepath.Join(in, p.rel), rowsFrame(p.start, p.n))
	}
	os.WriteFile(filepath.Join(in, "_SUCCESS"), nil, 0o644)
	writeParquet(t, filepath.Join(in, "_temporary", "x.parquet"), rowsFrame(1000, 3))

	ps, err := infer.ListPartitions([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(parts) {
		t.Fatalf("%d partitions, want %d: %+v", len(ps), len(parts), ps)
	}
	// A glob keeps the key=value directories below its leading
	// directories.
	globbed, err := infer.ListPartitions([]string{filepath.Join(in, "day=*", "shard=1", "*.parquet")})
	if err != nil {
		t.Fatal(err)
	}
	if len(globbed) != 2 || globbed[1].Rel != parts[2].rel || len(globbed[1].Keys) != 2 || globbed[1].Keys[0].Value != "2024-01-02" {
		t.Fatalf("globbed partitions %+v", globbed)
	}
	pred, err := infer.NewNet(m, "")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := infer.Run(context.Background(), pred, ps, infer.Options{Out: out, Keep: []string{"id", "day", "shard"}, BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != 106 || sum.Errors != 0 || sum.Partitions != 3 {
		t.Fatalf("summary %+v", sum)
	}
	for _, p := range parts {
		f := readOut(t, filepath.Join(out, p.rel))
		wantCols := []string{"id", "day", "shard", "prediction", "prob_a", "prob_b", "prob_c"}
		if !slices.Equal(f.Names(), wantCols) {
			t.Fatalf("%s: columns %v, want %v", p.rel, f.Names(), wantCols)
		}
		if f.Len() != p.n {
			t.Fatalf("%s: %d rows, want %d", p.rel, f.Len(), p.n)
		}
		ids, _ := f.Int64s("id")
		days, _ := f.Strings("day")
		shards, _ := f.Int64s("shard") // an integer key is an integer column
		preds, _ := f.Strings("prediction")
		probB, _ := f.Float32s("prob_b")
		want := wantProbs(t, m, rowsFrame(p.start, p.n))
		for i := range p.n {
			if ids[i] != int64(p.start+i) || days[i] != p.day || fmt.Sprint(shards[i]) != p.shard {
				t.Fatalf("%s row %d: id %d day %s shard %d", p.rel, i, ids[i], days[i], shards[i])
			}
			if preds[i] != m.Classes[want.Class[i]] || math.Abs(float64(probB[i]-want.Probs[i*3+1])) > 1e-6 {
				t.Fatalf("%s row %d: %s %v, want %s %v", p.rel, i, preds[i], probB[i], m.Classes[want.Class[i]], want.Probs[i*3+1])
			}
		}
	}
}

// TestCSVBadRows: CSV partitions with a cell that is not a number, a
// record with a missing field and an empty feature: those rows go to the
// error file with partition, row and reason; the others are scored.
func TestCSVBadRows(t *testing.T) {
	m := testNet(t)
	dir := t.TempDir()
	csvText := "id,x0,x1,x2,x3\n1,0.5,1,2,3\n2,oops,1,2,3\n3,1,2\n4,1,,2,3\n5,0,0,0,0\n6,1\"2,0,0,0\n7,0,0,0,1\n"
	p1 := filepath.Join(dir, "a.csv")
	os.WriteFile(p1, []byte(csvText), 0o644)
	out := filepath.Join(dir, "out")
	ps, err := infer.ListPartitions([]string{filepath.Join(dir, "*.csv")})
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := infer.NewNet(m, "")
	sum, err := infer.Run(context.Background(), pred, ps, infer.Options{Out: out, Keep: []string{"id"}, MaxErrors: 10, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != 3 || sum.Errors != 4 {
		t.Fatalf("summary %+v, want 3 rows and 4 errors", sum)
	}
	f := readOut(t, filepath.Join(out, "a.parquet"))
	ids, _ := f.Float64s("id") // a CSV column of numbers is read as float64
	if !slices.Equal(ids, []float64{1, 5, 7}) {
		t.Fatalf("ids %v, want [1 5 7]", ids)
	}
	errFile, err := infer.MergeErrors(out, ps)
	if err != nil {
		t.Fatal(err)
	}
	fh, _ := os.Open(errFile)
	recs, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"partition", "row", "reason"},
		{p1, "2", `column "x0": cannot parse "oops" as a number`},
		{p1, "3", "3 fields, the header has 5"},
		{p1, "4", `column "x1" is missing (the model was trained without impute: mean)`},
		{p1, "6", `bare " in non-quoted-field`}}
	if !slices.EqualFunc(recs, want, slices.Equal) {
		t.Fatalf("errors file:\n%q\nwant\n%q", recs, want)
	}
}

// TestMaxErrors: more failed rows than --max-errors allows is a clear
// failure, and no output is written for the partition (a re-run redoes it).
func TestMaxErrors(t *testing.T) {
	m := testNet(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.csv"), []byte("x0,x1,x2,x3\n1,2,3,4\nx,1,1,1\ny,1,1,1\n"), 0o644)
	ps, _ := infer.ListPartitions([]string{dir})
	pred, _ := infer.NewNet(m, "")
	out := filepath.Join(dir, "out")
	_, err := infer.Run(context.Background(), pred, ps, infer.Options{Out: out, MaxErrors: 1})
	if !errors.Is(err, infer.ErrTooManyErrors) || !strings.Contains(err.Error(), "more than --max-errors 1") {
		t.Fatalf("err = %v, want ErrTooManyErrors", err)
	}
	if _, err := os.Stat(filepath.Join(out, "a.parquet")); err == nil {
		t.Fatal("an output was written for a partition over the error bound")
	}
	if _, err := os.Stat(infer.ErrorsPath(out, ps[0])); err != nil {
		t.Fatalf("the failed rows were not kept: %v", err)
	}
	// Unbounded, the same data passes.
	if _, err := infer.Run(context.Background(), pred, ps, infer.Options{Out: out, MaxErrors: -1}); err != nil {
		t.Fatal(err)
	}
}

// TestResume: a re-run skips the partitions whose output is complete and
// redoes the missing one; the outputs are those of the first run.
func TestResume(t *testing.T) {
	m := testNet(t)
	dir := t.TempDir()
	for k := range 4 {
		writeParquet(t, filepath.Join(dir, "in", fmt.Sprintf("p%d.parquet", k)), rowsFrame(k*10, 10))
	}
	ps, _ := infer.ListPartitions([]string{filepath.Join(dir, "in")})
	pred, _ := infer.NewNet(m, "")
	out := filepath.Join(dir, "out")
	opts := infer.Options{Out: out, Keep: []string{"id"}}
	if _, err := infer.Run(context.Background(), pred, ps, opts); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, "p2.parquet"))
	os.Remove(filepath.Join(out, "p2.parquet"))
	sum, err := infer.Run(context.Background(), pred, ps, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Partitions != 1 || sum.Skipped != 3 || sum.Rows != 10 {
		t.Fatalf("re-run summary %+v, want 1 partition done, 3 skipped, 10 rows", sum)
	}
	after, _ := os.ReadFile(filepath.Join(out, "p2.parquet"))
	if !slices.Equal(before, after) {
		t.Fatal("the redone partition differs from the first run's")
	}
	// Outputs under the input directory would be read back on a re-run.
	nested := filepath.Join(dir, "in", "preds")
	if _, err := infer.Run(context.Background(), pred, ps, opts); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(nested, 0o755)
	writeParquet(t, filepath.Join(nested, "p9.parquet"), rowsFrame(0, 1))
	ps2, _ := infer.ListPartitions([]string{filepath.Join(dir, "in")})
	if _, err := infer.Run(context.Background(), pred, ps2, infer.Options{Out: nested}); err == nil || !strings.Contains(err.Error(), "inside the output directory") {
		t.Fatalf("output inside the input: err = %v", err)
	}
}

// TestPipelineModel: a fitted ml pipeline (assembler + logistic
// regression) goes through the same path, its predictions those of
// Transform on the whole data.
func TestPipelineModel(t *testing.T) {
	f := rowsFrame(0, 60)
	x0, _ := f.Float64s("x0")
	label := make([]float64, f.Len())
	for i, v := range x0 {
		if v > 0 {
			label[i] = 1
		}
	}
	train, _ := f.With(data.NewColumn("label", label, nil))
	p := ml.NewPipeline(feature.NewVectorAssembler("x0", "x1", "x2", "x3"), linear.NewLogisticRegression())
	model, err := p.Fit(ml.Local(train))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pipe.safetensors")
	if err := ml.SaveModel(path, model); err != nil {
		t.Fatal(err)
	}
	pred, err := infer.Load(path, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "in", "a.parquet"), f)
	ps, _ := infer.ListPartitions([]string{filepath.Join(dir, "in")})
	out := filepath.Join(dir, "out")
	sum, err := infer.Run(context.Background(), pred, ps, infer.Options{Out: out, Keep: []string{"id"}, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != 60 {
		t.Fatalf("summary %+v", sum)
	}
	got := readOut(t, filepath.Join(out, "a.parquet"))
	if !slices.Equal(got.Names(), []string{"id", ml.PredictionCol, ml.ProbabilityCol}) {
		t.Fatalf("columns %v", got.Names())
	}
	want, err := model.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	wp, _ := want.Float64s(ml.PredictionCol)
	gp, _ := got.Float64s(ml.PredictionCol)
	if !slices.Equal(wp, gp) {
		t.Fatalf("predictions %v, want %v", gp, wp)
	}
	if _, err := infer.Load(path, "1"); err == nil {
		t.Fatal("a pipeline accepted --output-layer")
	}
}

// TestOutputLayer: the activations of a named layer, as a vector column
// of that layer's width, equal to the network's prefix run by hand.
func TestOutputLayer(t *testing.T) {
	m := testNet(t)
	dir := t.TempDir()
	f := rowsFrame(0, 9)
	writeParquet(t, filepath.Join(dir, "in.parquet"), f)
	ps, _ := infer.ListPartitions([]string{filepath.Join(dir, "in.parquet")})
	for _, test := range []struct {
		layer string
		width int
		upto  int // layers run by hand
	}{
		{"0", 8, 1}, {"1", 8, 2}, {"3", 5, 4}, {"-2", 5, 4}, {"-1", 3, 5},
	} {
		pred, err := infer.NewNet(m, test.layer)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out"+test.layer)
		if _, err := infer.Run(context.Background(), pred, ps, infer.Options{Out: out, Keep: []string{"id"}}); err != nil {
			t.Fatal(err)
		}
		got := readOut(t, filepath.Join(out, "in.parquet"))
		v, err := got.Vectors(infer.FeaturesCol)
		if err != nil {
			t.Fatal(err)
		}
		if v.Width() != test.width || v.Len() != 9 {
			t.Fatalf("layer %s: %d×%d activations, want 9×%d", test.layer, v.Len(), v.Width(), test.width)
		}
		tb, _ := f.Table(data.TableOptions{Features: m.Columns})
		in, _ := m.PrepareInput(tb)
		x := tensor.FromFloat32(in.X, in.Rows, 4).NoGrad()
		for _, l := range m.Net.Layers()[:test.upto] {
			x = l.Forward(x)
		}
		want := x.Float32s()
		for i, w := range want {
			if d := math.Abs(float64(v.Float32s()[i] - w)); d > 1e-5 {
				t.Fatalf("layer %s: activation %d = %v, want %v", test.layer, i, v.Float32s()[i], w)
			}
		}
	}
	for _, bad := range []string{"5", "-6", "fc"} {
		if _, err := infer.NewNet(m, bad); err == nil || !strings.Contains(err.Error(), "0 linear, 1 relu") {
			t.Errorf("output layer %q: err = %v, want one listing the layers", bad, err)
		}
	}
}

// slowPredictor delays every batch: a slow worker.
type slowPredictor struct {
	infer.Predictor
	delay time.Duration
}

func (s slowPredictor) Predict(f *data.Frame) (infer.Result, error) {
	time.Sleep(s.delay)
	return s.Predictor.Predict(f)
}

// TestSharedQueue: two workers over one loopback store, one slow:
// every partition is done once, the fast worker takes most of them, and
// the gathered summary counts every row.
func TestSharedQueue(t *testing.T) {
	m := testNet(t)
	dir := t.TempDir()
	const nparts = 12
	for k := range nparts {
		writeParquet(t, filepath.Join(dir, "in", fmt.Sprintf("p%02d.parquet", k)), rowsFrame(k*20, 20))
	}
	ps, _ := infer.ListPartitions([]string{filepath.Join(dir, "in")})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	token := []byte("test-token")
	srv := store.Serve(ln, token, nil)
	defer srv.Close()
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sums := make([]infer.Summary, 2)
	errs := make([]error, 2)
	var total infer.Summary
	var gatherErr error
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := store.Dial(ctx, ln.Addr().String(), token, r)
			if err != nil {
				errs[r] = err
				return
			}
			defer c.Close()
			base, _ := infer.NewNet(m, "")
			var pred infer.Predictor = base
			if r == 1 {
				pred = slowPredictor{base, 30 * time.Millisecond}
			}
			q := infer.NewShared(c, out, len(ps), r, 2)
			if err := q.Agree(ctx, ps); err != nil {
				errs[r] = err
				return
			}
			sums[r], errs[r] = infer.Run(ctx, pred, ps, infer.Options{Out: out, Keep: []string{"id"}, Queue: q.Queue()})
			if err := q.Finish(ctx, sums[r], errs[r]); err != nil {
				errs[r] = err
			}
			if r == 0 {
				total, gatherErr = q.Gather(ctx)
			}
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || gatherErr != nil {
		t.Fatal(errs, gatherErr)
	}
	if sums[0].Partitions+sums[1].Partitions != nparts || sums[0].Partitions <= sums[1].Partitions {
		t.Fatalf("partitions done: fast %d, slow %d (want %d in all, most by the fast worker)", sums[0].Partitions, sums[1].Partitions, nparts)
	}
	if total.Rows != nparts*20 || total.Workers != 2 {
		t.Fatalf("gathered summary %+v", total)
	}
	seen := map[int64]int{}
	for _, p := range ps {
		ids, _ := readOut(t, infer.OutputPath(out, p)).Int64s("id")
		for _, id := range ids {
			seen[id]++
		}
	}
	for id := range int64(nparts * 20) {
		if seen[id] != 1 {
			t.Fatalf("row %d scored %d times", id, seen[id])
		}
	}
}

// TestFloat32Columns: many float32 columns (the gathered fast path, with
// a remainder after blocks of eight and more rows than one tile) give the
// predictions of modelfile's Predict.
func TestFloat32Columns(t *testing.T) {
	const w, n = 19, 600
	spec := nn.Spec{Input: []int{w}, Layers: []nn.LayerSpec{{Type: "linear", Out: 6}, {Type: "relu"}, {Type: "linear", Out: 2}}}
	net, _, err := spec.Build(tensor.NewRNG(3))
	if err != nil {
		t.Fatal(err)
	}
	net.Eval()
	m := &modelfile.Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: []string{"no", "yes"}}
	cols := make([]data.Column, w)
	x := make([]float32, n*w)
	for j := range cols {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.Cos(float64(i*w + j)))
			x[i*w+j] = v[i]
		}
		cols[j] = data.NewColumn(fmt.Sprintf("f%d", j), v, nil)
	}
	f, _ := data.NewFrame(cols...)
	p, _ := infer.NewNet(m, "")
	res, err := p.Predict(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.PredictRows(x, n)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.Out.Float32s("prob_yes")
	for i := range n {
		if d := math.Abs(float64(got[i] - want.Probs[i*2+1])); d > 1e-6 {
			t.Fatalf("row %d: %v, want %v", i, got[i], want.Probs[i*2+1])
		}
	}
}

// TestSharedAgree: a worker that lists other partitions than rank 0
// is refused (the queue hands out indices into the listing).
func TestSharedAgree(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	token := []byte("test-token")
	srv := store.Serve(ln, token, nil)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ps := []infer.Partition{{Path: "a.parquet"}, {Path: "b.parquet"}}
	for r, mine := range [][]infer.Partition{ps, ps[:1]} {
		c, err := store.Dial(ctx, ln.Addr().String(), token, r)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		err = infer.NewShared(c, "out", len(mine), r, 2).Agree(ctx, mine)
		if r == 0 && err != nil {
			t.Fatal(err)
		}
		if r == 1 && (err == nil || !strings.Contains(err.Error(), "rank 1 lists 1 partitions, rank 0 lists 2")) {
			t.Fatalf("rank 1 with another listing: err = %v", err)
		}
	}
}

// TestSeveralInputs: the same file names in two input directories go
// under each directory's name; a file named twice is listed once.
func TestSeveralInputs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"train", "test"} {
		writeParquet(t, filepath.Join(dir, d, "part-0.parquet"), rowsFrame(0, 2))
	}
	ps, err := infer.ListPartitions([]string{filepath.Join(dir, "train"), filepath.Join(dir, "test"), filepath.Join(dir, "test", "part-0.parquet")})
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, p := range ps {
		rels = append(rels, p.Rel)
	}
	if want := []string{filepath.Join("train", "part-0.parquet"), filepath.Join("test", "part-0.parquet")}; !slices.Equal(rels, want) {
		t.Fatalf("rels %v, want %v", rels, want)
	}
}
