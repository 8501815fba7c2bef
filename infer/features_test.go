package infer

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// TestFeaturesSameForEveryUser gives the same rows, with missing values,
// to a model with standardization and mean imputation through every
// path that turns rows into model input: a CSV file and a Parquet file
// (ReadInput and PrepareInput, as eval and predict read them), a Frame
// (Net.Predict, as batch predict scores it) and raw rows (an OIP request
// through PredictRows, a Parquet matrix through Features.Rows). Every
// path gives the same feature matrix and the same predictions, bit for
// bit.
func TestFeaturesSameForEveryUser(t *testing.T) {
	spec := nn.Spec{Input: []int{3}, Layers: []nn.LayerSpec{{Type: "linear", Out: 6}, {Type: "tanh"}, {Type: "linear", Out: 2}}}
	net, _, err := spec.Build(tensor.NewRNG(11))
	if err != nil {
		t.Fatal(err)
	}
	m := &modelfile.Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: []string{"no", "yes"},
		Columns: []string{"a", "b", "c"}, Label: "y", Impute: []float64{0.3, -1.1, 2.7},
		Scaler: &data.Standardizer{Mean: []float64{0.1, -0.3, 1.7}, Std: []float64{0.7, 1.3, 0}}}
	dir := t.TempDir()
	if err := m.Save(filepath.Join(dir, "m.safetensors")); err != nil {
		t.Fatal(err)
	}
	if m, err = modelfile.Load(filepath.Join(dir, "m.safetensors")); err != nil {
		t.Fatal(err)
	}
	// Values exact in float32 (multiples of 1/8), so that every reader
	// parses them alike; rows 2 and 5 miss b, row 4 misses c.
	const n = 7
	vals := make([][]float64, 3)
	valid := make([][]bool, 3)
	for j := range vals {
		for i := range n {
			vals[j] = append(vals[j], float64((i*5+j*3)%11-5)/8)
			valid[j] = append(valid[j], !(j == 1 && (i == 2 || i == 5) || j == 2 && i == 4))
		}
	}
	var nulls []data.NullCell
	raw := make([]float32, n*3)
	var csv strings.Builder
	csv.WriteString("c,a,extra,b\n") // another order and a column the model does not read
	for i := range n {
		cell := func(j int) string {
			if !valid[j][i] {
				return ""
			}
			return fmt.Sprint(vals[j][i])
		}
		fmt.Fprintf(&csv, "%s,%s,x,%s\n", cell(2), cell(0), cell(1))
		for j := range 3 {
			raw[i*3+j] = float32(vals[j][i])
			if !valid[j][i] {
				nulls = append(nulls, data.NullCell{Row: i, Col: j})
				raw[i*3+j] = 99 // overwritten by the imputation
			}
		}
	}
	frame, err := data.NewFrame(data.NewColumn("b", vals[1], valid[1]), data.NewColumn("a", vals[0], valid[0]),
		data.NewColumn("c", vals[2], valid[2]))
	if err != nil {
		t.Fatal(err)
	}
	csvPath, pqPath := filepath.Join(dir, "in.csv"), filepath.Join(dir, "in.parquet")
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFrame(t, pqPath, frame)

	type got struct {
		x     []float32
		probs []float32
	}
	results := map[string]got{}
	for _, path := range []string{csvPath, pqPath} {
		tab, err := m.ReadInput(path, false)
		if err != nil {
			t.Fatal(err)
		}
		in, err := m.PrepareInput(tab)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Predict(tab, n)
		if err != nil {
			t.Fatal(err)
		}
		results[filepath.Ext(path)] = got{in.X, p.Probs}
	}
	p, err := NewNet(m, "")
	if err != nil {
		t.Fatal(err)
	}
	x, rows, bad, err := p.feat.Frame(frame, nil)
	if err != nil || len(rows) != n || bad != nil {
		t.Fatalf("frame: %d rows, bad %v, err %v", len(rows), bad, err)
	}
	res, err := p.Predict(frame)
	if err != nil {
		t.Fatal(err)
	}
	results["frame"] = got{slices.Clone(x), netProbs(t, res.Out, n)}

	name := func(j int) string { return m.Columns[j] }
	x, rows, bad, err = p.feat.Rows(slices.Clone(raw), n, nulls, name, false)
	if err != nil || len(rows) != n || bad != nil {
		t.Fatalf("raw rows: %d rows, bad %v, err %v", len(rows), bad, err)
	}
	res, err = p.predictMatrix(slices.Clone(raw), n, 0, nulls, m.Columns, false)
	if err != nil {
		t.Fatal(err)
	}
	results["matrix"] = got{x, netProbs(t, res.Out, n)}
	// An OIP request carries no missing values: it sends the imputed
	// ones.
	oip := slices.Clone(raw)
	for _, c := range nulls {
		oip[c.Row*3+c.Col] = float32(m.Impute[c.Col])
	}
	pr, err := m.PredictRows(oip, n)
	if err != nil {
		t.Fatal(err)
	}
	oipX, err := m.PrepareInput(&data.Table{Rows: n, Cols: 3, X: oip})
	if err != nil {
		t.Fatal(err)
	}
	results["oip"] = got{oipX.X, pr.Probs}

	// The reference: imputed and standardized as training does.
	want := slices.Clone(oip)
	if err := m.Scaler.Apply(&data.Table{Rows: n, Cols: 3, X: want}); err != nil {
		t.Fatal(err)
	}
	ref := results[".csv"]
	for k, g := range results {
		if !slices.Equal(g.x, want) {
			t.Errorf("%s: features\n%v\nwant\n%v", k, g.x, want)
		}
		if len(g.probs) != n*2 || !slices.Equal(g.probs, ref.probs) {
			t.Errorf("%s: probabilities\n%v\nwant (csv)\n%v", k, g.probs, ref.probs)
		}
	}
	// The standardization is not the identity and not float32's: the
	// paths agree on a value that float32 arithmetic misses.
	differs := false
	for i, v := range oip {
		j := i % 3
		f32 := (v - float32(m.Scaler.Mean[j])) * float32(1/max(m.Scaler.Std[j], 1e-300))
		if m.Scaler.Std[j] == 0 {
			f32 = v - float32(m.Scaler.Mean[j])
		}
		if math.Float32bits(f32) != math.Float32bits(want[i]) {
			differs = true
		}
	}
	if !differs {
		t.Error("float32 standardization agrees on these rows too: they do not tell the methods apart")
	}
}

// netProbs returns the class probabilities of a Net's output, row-major.
func netProbs(t *testing.T, out *data.Frame, n int) []float32 {
	t.Helper()
	no, err := out.Float32s("prob_no")
	if err != nil {
		t.Fatal(err)
	}
	yes, err := out.Float32s("prob_yes")
	if err != nil {
		t.Fatal(err)
	}
	probs := make([]float32, 0, 2*n)
	for i := range no {
		probs = append(probs, no[i], yes[i])
	}
	return probs
}

func writeFrame(t *testing.T, path string, f *data.Frame) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := data.NewParquetFrameWriter(fh, f, data.ParquetWriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(f); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil { // closes fh too
		t.Fatal(err)
	}
}
