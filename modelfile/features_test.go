package modelfile

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/nn"
)

// vectorModel reads a vector column v (elements 0 and 2) and a scalar s,
// standardized, with mean imputation.
func vectorModel() *Model {
	return &Model{Spec: nn.Spec{Input: []int{3}}, Columns: []string{"v[0]", "s", "v[2]"},
		Impute: []float64{7, 8, 9}, Scaler: &data.Standardizer{Mean: []float64{0.1, 0.2, 0.3}, Std: []float64{3, 0, 0.7}}}
}

func TestFeaturesFrameVectorColumns(t *testing.T) {
	f := vectorModel().Features()
	if !slices.Equal(f.Inputs, []string{"v", "s"}) || f.Width != 3 {
		t.Fatalf("inputs %v, width %d", f.Inputs, f.Width)
	}
	if cols, ok := f.MatrixColumns(); ok || cols != nil {
		t.Errorf("MatrixColumns = %v, %v; a vector and a scalar do not make a matrix", cols, ok)
	}
	// Row 1 misses v[2] (an element) and row 2 misses s (a row).
	v := data.NewVectorColumn("v", 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, nil,
		[]bool{true, true, true, true, true, false, true, true, true})
	s := data.NewColumn("s", []float64{10, 11, 12}, []bool{true, true, false})
	fr, err := data.NewFrame(s, v)
	if err != nil {
		t.Fatal(err)
	}
	x, rows, bad, err := f.Frame(fr, nil)
	if err != nil || !slices.Equal(rows, []int{0, 1, 2}) || bad != nil {
		t.Fatalf("rows %v, bad %v, err %v", rows, bad, err)
	}
	// The same rows as a Table, the missing cells imputed, in another
	// column order.
	tab := &data.Table{Rows: 3, Cols: 3, Columns: []string{"v[2]", "v[0]", "s"},
		X: []float32{3, 1, 10, 9, 4, 11, 9, 7, 8}}
	in, err := f.Table(tab)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, in.X) {
		t.Errorf("frame features %v, table features %v", x, in.X)
	}
	if want := float32((9 - 0.3) * (1 / 0.7)); in.X[5] != want {
		t.Errorf("imputed, standardized v[2] of row 1 = %v, want %v", in.X[5], want)
	}
	if tab.X[0] != 3 {
		t.Error("Table standardized its input in place")
	}
}

func TestFeaturesRowsReportsBadRows(t *testing.T) {
	m := vectorModel()
	m.Impute = nil
	f := m.Features()
	x := []float32{1, 2, 3, 4, float32(math.Inf(1)), 6, 7, 8, 9, 10, 11, 12}
	name := func(j int) string { return m.Columns[j] }
	got, rows, bad, err := f.Rows(x, 4, []data.NullCell{{Row: 2, Col: 1}}, name, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows, []int{0, 3}) || len(bad) != 2 || bad[0].Row != 1 || bad[1].Row != 2 {
		t.Fatalf("rows %v, bad %+v", rows, bad)
	}
	if !strings.Contains(bad[0].Reason, `feature 1 (s) is +Inf`) || !strings.Contains(bad[1].Reason, `column "s" is missing`) {
		t.Errorf("reasons %q, %q", bad[0].Reason, bad[1].Reason)
	}
	want := []float32{1, 2, 3, 10, 11, 12}
	f.Standardize(want, 2)
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if _, _, _, err := f.Rows(x[:5], 2, nil, name, false); err == nil {
		t.Error("5 values for 2 rows of 3: no error")
	}
}

func TestFeaturesFrameErrors(t *testing.T) {
	f := vectorModel().Features()
	for _, test := range []struct {
		cols []data.Column
		want string
	}{
		{[]data.Column{data.NewColumn("s", []float64{1}, nil)}, `no column "v"`},
		{[]data.Column{data.NewColumn("s", []float64{1}, nil), data.NewColumn("v", []float64{1}, nil)}, `reads it as a vector`},
		{[]data.Column{data.NewColumn("s", []float64{1}, nil), data.NewVectorColumn("v", 2, []float64{1, 2}, nil, nil)}, `has 2 elements, the model reads element 2`},
		{[]data.Column{data.NewColumn("s", []bool{true}, nil), data.NewVectorColumn("v", 3, []float64{1, 2, 3}, nil, nil)}, `features must be numbers`},
	} {
		fr, err := data.NewFrame(test.cols...)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := f.Frame(fr, nil); err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%v: err = %v, want %q", fr.Names(), err, test.want)
		}
	}
}
