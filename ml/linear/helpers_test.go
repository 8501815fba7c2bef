package linear

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/fathom-ml/fathom/data"
)

// readCSV reads a headerless CSV of numbers in testdata.
func readCSV(t testing.TB, name string) [][]float64 {
	t.Helper()
	fh, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(recs))
	for i, r := range recs {
		for _, s := range r {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = append(out[i], v)
		}
	}
	return out
}

// frameOf builds a frame with a "features" vector column of the given
// columns of rows, and scalar columns named by extra (column index → name).
func frameOf(t testing.TB, rows [][]float64, feat []int, extra map[string]int) *data.Frame {
	t.Helper()
	x := make([]float64, 0, len(rows)*len(feat))
	for _, r := range rows {
		for _, j := range feat {
			x = append(x, r[j])
		}
	}
	cols := []data.Column{data.NewVectorColumn("features", len(feat), x, nil, nil)}
	for name, j := range extra {
		v := make([]float64, len(rows))
		for i, r := range rows {
			v[i] = r[j]
		}
		cols = append(cols, data.NewColumn(name, v, nil))
	}
	f, err := data.NewFrame(cols...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// close reports whether got is within rel relative tolerance of want
// (absolute below 1).
func closeTo(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*max(1, math.Abs(want))
}

func checkClose(t *testing.T, what string, got, want []float64, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !closeTo(got[i], want[i], rel) {
			t.Errorf("%s[%d] = %.10g, want %.10g", what, i, got[i], want[i])
		}
	}
}
