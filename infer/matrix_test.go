package infer

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/cpufeat"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// matrixModel returns a classifier over w float32 features named by
// columns (nil: unnamed), with standardization.
func matrixModel(t *testing.T, w int, columns []string) *modelfile.Model {
	t.Helper()
	spec := nn.Spec{Input: []int{w}, Layers: []nn.LayerSpec{{Type: "linear", Out: 9}, {Type: "relu"}, {Type: "linear", Out: 3}}}
	net, _, err := spec.Build(tensor.NewRNG(5))
	if err != nil {
		t.Fatal(err)
	}
	net.Eval()
	sc := &data.Standardizer{Mean: make([]float64, w), Std: make([]float64, w)}
	for j := range w {
		sc.Mean[j], sc.Std[j] = float64(j)/10, 1+float64(j%3)
	}
	return &modelfile.Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: []string{"a", "b", "c"}, Columns: columns, Scaler: sc}
}

// matrixFrame returns n rows: an id and w float32 features, as scalar
// columns f0.. (with nulls and a NaN unless clean) or as one vector
// column "v" (with a null element when nullElem).
func matrixFrame(n, w int, vector, nullElem, clean bool) *data.Frame {
	id := make([]int64, n)
	x := make([]float32, n*w)
	for i := range n {
		id[i] = int64(1000 + i)
		for j := range w {
			x[i*w+j] = float32(math.Sin(float64(i*w+j))) * 3
		}
	}
	if !clean {
		x[77*w+5] = float32(math.NaN())
	}
	cols := []data.Column{data.NewColumn("id", id, nil)}
	if vector {
		var ev []bool
		if nullElem {
			ev = make([]bool, n*w)
			for k := range ev {
				ev[k] = k != 301*w+2
			}
		}
		return mustFrame(append(cols, data.NewVectorColumn32("v", w, x, nil, ev))...)
	}
	for j := range w {
		v := make([]float32, n)
		var valid []bool
		if j == 3 && !clean {
			valid = make([]bool, n)
		}
		for i := range n {
			v[i] = x[i*w+j]
			if valid != nil {
				valid[i] = i%97 != 13
			}
		}
		cols = append(cols, data.NewColumn("f"+strconv.Itoa(j), v, valid))
	}
	return mustFrame(cols...)
}

// gridFrame rounds f's float32 columns to multiples of 0.05, so that
// each holds at most 121 values (a narrow dictionary).
func gridFrame(t *testing.T, f *data.Frame) *data.Frame {
	t.Helper()
	var cols []data.Column
	for _, name := range f.Names() {
		v, err := f.Float32s(name)
		if err != nil {
			cols = append(cols, f.Col(name))
			continue
		}
		g := make([]float32, len(v))
		for i, x := range v {
			g[i] = float32(math.Round(float64(x)*20) / 20)
		}
		cols = append(cols, data.NewColumn(name, g, nil))
	}
	return mustFrame(cols...)
}

func mustFrame(cols ...data.Column) *data.Frame {
	f, err := data.NewFrame(cols...)
	if err != nil {
		panic(err)
	}
	return f
}

// TestMatrixPath: networks over float32 columns, named or not, and over a
// vector column (regular, or with a null element that sends the partition
// back to record batches) predicted by Run in batches that cross row
// groups: the outputs and failed rows those of Predict on the whole
// frame (the record batch path), and the matrix reader used where the
// layout allows.
func TestMatrixPath(t *testing.T) {
	const w, n = 37, 700
	names := make([]string, w)
	vnames := make([]string, w)
	for j := range w {
		names[j], vnames[j] = "f"+strconv.Itoa(j), fmt.Sprintf("v[%d]", j)
	}
	for _, tc := range []struct {
		name             string
		columns          []string
		vector, nullElem bool
		clean            bool // no nulls or NaN: no batch leaves the column-major path
		matrix           bool
		dict             bool // values on a grid of 121, written dictionary-encoded
	}{
		{"named", names, false, false, false, true, false},
		{"unnamed", nil, false, false, false, true, false},
		{"named, clean", names, false, false, true, true, false},
		{"vector", vnames, true, false, false, true, false},
		{"vector with a null element", vnames, true, true, false, true, false},
		{"narrow dictionaries", names, false, false, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := matrixFrame(n, w, tc.vector, tc.nullElem, tc.clean)
			if tc.dict {
				f = gridFrame(t, f)
			}
			path := filepath.Join(dir, "in", "k=3", "part.parquet")
			os.MkdirAll(filepath.Dir(path), 0o755)
			fh, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			pw, _ := data.NewParquetFrameWriter(fh, f, data.ParquetWriteOptions{Dictionary: tc.dict})
			for _, r := range [][2]int{{0, 250}, {250, 500}, {500, n}} {
				if err := pw.Write(f.Slice(r[0], r[1])); err != nil {
					t.Fatal(err)
				}
			}
			if err := pw.Close(); err != nil {
				t.Fatal(err)
			}
			m := matrixModel(t, w, tc.columns)
			p, err := NewNet(m, "")
			if err != nil {
				t.Fatal(err)
			}
			parts, err := ListPartitions([]string{filepath.Join(dir, "in")})
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Out: filepath.Join(dir, "out"), Keep: []string{"id", "k"}, BatchSize: 128, MaxErrors: -1}
			r := &runner{pred: p, opts: opts}
			if ms := r.openMatrix(parts[0]); (ms != nil) != tc.matrix {
				t.Fatalf("matrix reader used: %v, want %v", ms != nil, tc.matrix)
			} else if ms != nil {
				// A Linear first layer reads scalar columns column-major,
				// or rows when they are narrow dictionaries and the
				// vector gather makes rows cheap.
				want := !tc.vector && !(tc.dict && cpufeat.Has(cpufeat.AVX512))
				if colMajor := ms.ld > 0; colMajor != want {
					t.Fatalf("column-major batches: %v, want %v", colMajor, want)
				}
				ms.close()
			}
			sum, err := Run(context.Background(), p, parts, opts)
			if err != nil {
				t.Fatal(err)
			}
			// The record batch path over the whole frame.
			want, err := p.Predict(mustSelect(t, f, tc.vector))
			if err != nil {
				t.Fatal(err)
			}
			if sum.Rows != int64(len(want.Rows)) || sum.Errors != int64(len(want.Errors)) || (len(want.Errors) == 0) != tc.clean {
				t.Fatalf("%d rows and %d errors, want %d and %d (none only when clean)", sum.Rows, sum.Errors, len(want.Rows), len(want.Errors))
			}
			out, err := data.ReadParquetFrame(OutputPath(opts.Out, parts[0]), data.ParquetFrameOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ids, _ := out.Int64s("id")
			keys, _ := out.Int64s("k")
			for i, row := range want.Rows {
				if ids[i] != int64(1000+row) || keys[i] != 3 {
					t.Fatalf("output row %d: id %d k %d, want %d and 3", i, ids[i], keys[i], 1000+row)
				}
			}
			for _, c := range []string{"prob_a", "prob_b", "prob_c"} {
				got, _ := out.Float32s(c)
				exp, _ := want.Out.Float32s(c)
				if !slices.Equal(got, exp) {
					t.Fatalf("%s differs from the record batch path's", c)
				}
			}
			if tc.clean {
				if _, err := os.Stat(ErrorsPath(opts.Out, parts[0])); !os.IsNotExist(err) {
					t.Fatalf("an error file for a partition without errors (%v)", err)
				}
				return
			}
			recs := readCSV(t, ErrorsPath(opts.Out, parts[0]))
			for k, e := range want.Errors {
				if recs[k+1][1] != strconv.Itoa(e.Row+1) || recs[k+1][2] != e.Reason {
					t.Fatalf("error %d: %v, want row %d: %s", k, recs[k+1], e.Row+1, e.Reason)
				}
			}
		})
	}
}

// mustSelect returns the feature columns of f.
func mustSelect(t *testing.T, f *data.Frame, vector bool) *data.Frame {
	t.Helper()
	var names []string
	for _, n := range f.Names() {
		if n != "id" {
			names = append(names, n)
		}
	}
	g, err := f.Select(names...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestOutputGroupRows: output row groups of up to 65,536 rows, fewer for
// wide feature vectors (about 32 MB of values), never below a batch.
func TestOutputGroupRows(t *testing.T) {
	narrow, _ := data.NewFrame(data.NewColumn("prediction", []string{"a"}, nil), data.NewColumn("prob_a", []float32{1}, nil))
	wide, _ := data.NewFrame(data.NewVectorColumn32(FeaturesCol, 2048, make([]float32, 2048), nil, nil))
	for _, c := range []struct {
		f           *data.Frame
		batch, want int
	}{{narrow, 2048, 65536}, {wide, 1024, 2048}, {wide, 4096, 4096}} {
		if got := outputGroupRows(c.f, c.batch); got != c.want {
			t.Errorf("%v columns, batch %d: %d rows a row group, want %d", c.f.Names(), c.batch, got, c.want)
		}
	}
}
