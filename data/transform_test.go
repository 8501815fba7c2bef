package data

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

func TestStandardizer(t *testing.T) {
	iris, err := Iris()
	if err != nil {
		t.Fatal(err)
	}
	s := FitStandardizer(iris)
	// Population standard deviations of the Iris columns, as reported by
	// scikit-learn's StandardScaler (scale_) on the same data.
	wantMean := []float64{5.8433, 3.0573, 3.7580, 1.1993}
	wantStd := []float64{0.82530, 0.43441, 1.75940, 0.75969}
	for j := range wantMean {
		if math.Abs(s.Mean[j]-wantMean[j]) > 1e-4 || math.Abs(s.Std[j]-wantStd[j]) > 1e-5 {
			t.Errorf("column %d: mean %.5f std %.5f, want %.4f %.5f", j, s.Mean[j], s.Std[j], wantMean[j], wantStd[j])
		}
	}
	z := iris.Clone()
	if err := s.Apply(z); err != nil {
		t.Fatal(err)
	}
	again := FitStandardizer(z)
	for j := range again.Mean {
		if math.Abs(again.Mean[j]) > 1e-6 || math.Abs(again.Std[j]-1) > 1e-6 {
			t.Errorf("standardized column %d: mean %g std %g", j, again.Mean[j], again.Std[j])
		}
	}
	// A constant column is centred, not divided by zero.
	c := &Table{Rows: 3, Cols: 1, X: []float32{2, 2, 2}}
	sc := FitStandardizer(c)
	sc.Apply(c)
	if !reflect.DeepEqual(c.X, []float32{0, 0, 0}) {
		t.Errorf("constant column -> %v", c.X)
	}
	if err := s.Apply(c); err == nil {
		t.Error("Apply accepted a table with a different column count")
	}
}

func TestMinMax(t *testing.T) {
	iris, _ := Iris()
	m := FitMinMax(iris)
	if want := []float64{4.3, 2.0, 1.0, 0.1}; !floatsNear(m.Min, want, 1e-6) {
		t.Errorf("min %v, want %v", m.Min, want)
	}
	if want := []float64{7.9, 4.4, 6.9, 2.5}; !floatsNear(m.Max, want, 1e-6) {
		t.Errorf("max %v, want %v", m.Max, want)
	}
	m.Apply(iris)
	again := FitMinMax(iris)
	if !floatsNear(again.Min, []float64{0, 0, 0, 0}, 1e-6) || !floatsNear(again.Max, []float64{1, 1, 1, 1}, 1e-6) {
		t.Errorf("after scaling: %v %v", again.Min, again.Max)
	}
	c := &Table{Rows: 2, Cols: 1, X: []float32{5, 5}}
	FitMinMax(c).Apply(c)
	if !reflect.DeepEqual(c.X, []float32{0, 0}) {
		t.Errorf("constant column -> %v", c.X)
	}
}

func floatsNear(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

func TestPermutation(t *testing.T) {
	p := Permutation(100, 7)
	sorted := slices.Clone(p)
	slices.Sort(sorted)
	for i, v := range sorted {
		if v != i {
			t.Fatalf("not a permutation: %v", p)
		}
	}
	if !reflect.DeepEqual(p, Permutation(100, 7)) {
		t.Fatal("same seed, different permutations")
	}
	if reflect.DeepEqual(p, Permutation(100, 8)) {
		t.Fatal("different seeds, same permutation")
	}
	// Uniformity: each of the 6 orders of 3 items is about equally likely.
	// Chi-square with 5 degrees of freedom; 20.5 is the 0.999 quantile, and the
	// seeds are fixed, so this cannot flake.
	counts := map[[3]int]int{}
	const draws = 60000
	for s := uint64(0); s < draws; s++ {
		q := Permutation(3, s)
		counts[[3]int{q[0], q[1], q[2]}]++
	}
	if len(counts) != 6 {
		t.Fatalf("saw %d orders", len(counts))
	}
	var chi2 float64
	for _, c := range counts {
		d := float64(c) - draws/6
		chi2 += d * d / (draws / 6)
	}
	if chi2 > 20.5 {
		t.Errorf("chi-square %.1f over %v", chi2, counts)
	}
}

func TestShuffled(t *testing.T) {
	iris, _ := Iris()
	s := iris.Shuffled(3)
	if s.Rows != iris.Rows || reflect.DeepEqual(s.X, iris.X) {
		t.Fatal("Shuffled kept the order")
	}
	// Every row keeps its own label.
	p := Permutation(iris.Rows, 3)
	for k, i := range p {
		if !reflect.DeepEqual(s.Row(k), iris.Row(i)) || s.Labels[k] != iris.Labels[i] {
			t.Fatalf("row %d is not source row %d", k, i)
		}
	}
}

func TestSplit(t *testing.T) {
	iris, _ := Iris()
	for _, stratify := range []bool{false, true} {
		parts, err := Split(iris, SplitOptions{Train: 0.6, Validation: 0.2, Seed: 42, Stratify: stratify})
		if err != nil {
			t.Fatal(err)
		}
		if parts.Train.Rows != 90 || parts.Validation.Rows != 30 || parts.Test.Rows != 30 {
			t.Fatalf("stratify=%v: sizes %d/%d/%d", stratify, parts.Train.Rows, parts.Validation.Rows, parts.Test.Rows)
		}
		// The parts hold every row exactly once: compare the multisets of rows.
		key := func(tab *Table, i int) [5]float32 {
			r := tab.Row(i)
			return [5]float32{r[0], r[1], r[2], r[3], float32(tab.Labels[i])}
		}
		seen := map[[5]float32]int{}
		for i := 0; i < iris.Rows; i++ {
			seen[key(iris, i)]++
		}
		for _, part := range []*Table{parts.Train, parts.Validation, parts.Test} {
			for i := 0; i < part.Rows; i++ {
				seen[key(part, i)]--
			}
		}
		for k, v := range seen {
			if v != 0 {
				t.Fatalf("row %v count off by %d", k, v)
			}
		}
		if stratify {
			for name, part := range map[string]*Table{"train": parts.Train, "validation": parts.Validation, "test": parts.Test} {
				want := part.Rows / 3
				if c := part.ClassCounts(); !reflect.DeepEqual(c, []int{want, want, want}) {
					t.Errorf("stratified %s: class counts %v", name, c)
				}
			}
		}
		again, _ := Split(iris, SplitOptions{Train: 0.6, Validation: 0.2, Seed: 42, Stratify: stratify})
		if !reflect.DeepEqual(again.Test.X, parts.Test.X) {
			t.Error("same seed, different split")
		}
	}
	if _, err := Split(iris, SplitOptions{Train: 0.9, Validation: 0.2}); err == nil {
		t.Error("fractions over 1 accepted")
	}
	noLabels := &Table{Rows: 1, Cols: 1, X: []float32{1}}
	if _, err := Split(noLabels, SplitOptions{Train: 1, Stratify: true}); err == nil {
		t.Error("stratified split without labels accepted")
	}
}
