package trials

import (
	"context"
	"math"
	"slices"
	"testing"
)

func TestRungEpochs(t *testing.T) {
	for _, test := range []struct {
		min, eta, max int
		want          []int
	}{
		{1, 3, 60, []int{1, 3, 9, 27}},
		{1, 3, 27, []int{1, 3, 9}},
		{2, 2, 20, []int{2, 4, 8, 16}},
		{5, 3, 5, nil},
	} {
		a := ASHA{MinEpochs: test.min, Eta: test.eta, MaxEpochs: test.max}
		if got := a.RungEpochs(); !slices.Equal(got, test.want) {
			t.Errorf("min %d eta %d max %d: rungs %v, want %v", test.min, test.eta, test.max, got, test.want)
		}
	}
}

func TestPromote(t *testing.T) {
	for _, test := range []struct {
		vals   []float64
		v      float64
		eta    int
		larger bool
		want   bool
	}{
		{[]float64{0.5}, 0.5, 3, true, true}, // the first at a rung goes on
		// Quantile 2/3 of {1,2,3,4}: position 2 → 3.
		{[]float64{1, 2, 3, 4}, 3, 3, true, true},
		{[]float64{1, 2, 3, 4}, 2, 3, true, false},
		// Smaller is better: quantile 1/3 of {1,2,3,4} → 2.
		{[]float64{1, 2, 3, 4}, 2, 3, false, true},
		{[]float64{1, 2, 3, 4}, 3, 3, false, false},
		// Interpolated: eta 2 over {1,2}: median 1.5.
		{[]float64{1, 2}, 1, 2, true, false},
		{[]float64{1, 2}, 2, 2, true, true},
		{[]float64{math.Inf(-1), 1}, math.Inf(-1), 2, true, false},
	} {
		if got := Promote(test.vals, test.v, test.eta, test.larger); got != test.want {
			t.Errorf("Promote(%v, %v, eta %d, larger %v) = %v, want %v", test.vals, test.v, test.eta, test.larger, got, test.want)
		}
	}
}

// TestASHASequence drives the rule through a fixed order of reports: the
// decisions follow from the records so far alone.
func TestASHASequence(t *testing.T) {
	a := &ASHA{MinEpochs: 1, Eta: 2, MaxEpochs: 8, LargerBetter: true}
	ctx := context.Background()
	steps := []struct {
		epoch int
		v     float64
		want  bool
	}{
		{1, 0.5, true},  // alone: best so far
		{1, 0.3, false}, // {0.5, 0.3}: median 0.4
		{1, 0.9, true},  // {0.5, 0.3, 0.9}: median 0.5
		{2, 0.6, true},  // rung 2 starts empty
		{3, 0.1, true},  // not a rung
		{1, math.NaN(), false},
		{4, 0.7, true},
		{2, 0.95, true},
		{2, 0.61, true}, // {0.6, 0.95, 0.61}: the median is 0.61 itself, at the bar
		{2, 0.2, false},
	}
	for i, s := range steps {
		got, err := a.Continue(ctx, s.epoch, s.v)
		if err != nil || got != s.want {
			t.Errorf("step %d (epoch %d, %v): continue %v, %v; want %v", i, s.epoch, s.v, got, err, s.want)
		}
	}
}
