package data

import (
	"math"
	"reflect"
	"testing"
)

// TestIris checks the embedded data against published summary statistics of
// Fisher's Iris data (Fisher 1936; the per-class means are those tabulated in
// the UCI repository's iris.names and reproduced in most textbooks).
func TestIris(t *testing.T) {
	tab, err := Iris()
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Validate(); err != nil {
		t.Fatal(err)
	}
	if tab.Rows != 150 || tab.Cols != 4 {
		t.Fatalf("size %d×%d, want 150×4", tab.Rows, tab.Cols)
	}
	if want := []string{"sepal_length", "sepal_width", "petal_length", "petal_width"}; !reflect.DeepEqual(tab.Columns, want) {
		t.Fatalf("columns %v", tab.Columns)
	}
	if want := []string{"setosa", "versicolor", "virginica"}; !reflect.DeepEqual(tab.Classes, want) || tab.LabelName != "species" {
		t.Fatalf("classes %v label %q", tab.Classes, tab.LabelName)
	}
	if counts := tab.ClassCounts(); !reflect.DeepEqual(counts, []int{50, 50, 50}) {
		t.Fatalf("class counts %v", counts)
	}
	// Column sums (exact in tenths) and means.
	wantSums := []float64{876.5, 458.6, 563.7, 179.9}
	wantMeans := []float64{5.843, 3.057, 3.758, 1.199}
	sums := make([]float64, 4)
	classMeans := make([][]float64, 3)
	for c := range classMeans {
		classMeans[c] = make([]float64, 4)
	}
	for i := 0; i < tab.Rows; i++ {
		for j, v := range tab.Row(i) {
			sums[j] += float64(v)
			classMeans[tab.Labels[i]][j] += float64(v) / 50
		}
	}
	for j := range sums {
		if math.Abs(sums[j]-wantSums[j]) > 1e-3 {
			t.Errorf("column %s sums to %.4f, want %.1f", tab.Columns[j], sums[j], wantSums[j])
		}
		if math.Abs(sums[j]/150-wantMeans[j]) > 5e-4 {
			t.Errorf("column %s mean %.4f, want %.3f", tab.Columns[j], sums[j]/150, wantMeans[j])
		}
	}
	wantClassMeans := [][]float64{
		{5.006, 3.428, 1.462, 0.246},
		{5.936, 2.770, 4.260, 1.326},
		{6.588, 2.974, 5.552, 2.026},
	}
	for c := range wantClassMeans {
		for j := range wantClassMeans[c] {
			if math.Abs(classMeans[c][j]-wantClassMeans[c][j]) > 5e-4 {
				t.Errorf("%s %s mean %.4f, want %.3f", tab.Classes[c], tab.Columns[j], classMeans[c][j], wantClassMeans[c][j])
			}
		}
	}
	// Rows 35 and 38 as Fisher published them (some copies have them wrong).
	if got := tab.Row(34); !reflect.DeepEqual(got, []float32{4.9, 3.1, 1.5, 0.2}) {
		t.Errorf("row 35 = %v", got)
	}
	if got := tab.Row(37); !reflect.DeepEqual(got, []float32{4.9, 3.6, 1.4, 0.1}) {
		t.Errorf("row 38 = %v", got)
	}
	// Callers get their own copy of the CSV text.
	b := IrisCSV()
	b[0] = 'X'
	if IrisCSV()[0] != 's' {
		t.Error("IrisCSV shares its buffer")
	}
}
