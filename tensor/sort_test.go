package tensor_test

import (
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

func TestSortKnown(t *testing.T) {
	nan := math.NaN()
	x := tensor.FromFloat64([]float64{3, 1, nan, 2, 1, 3, 0, nan, 5}, 3, 3)
	for _, c := range []struct {
		name       string
		dim        int
		desc       bool
		vals, idxs []float64
	}{
		{"rows/asc", 1, false, []float64{1, 3, nan, 1, 2, 3, 0, 5, nan}, []float64{1, 0, 2, 1, 0, 2, 0, 2, 1}},
		{"rows/desc", -1, true, []float64{nan, 3, 1, 3, 2, 1, nan, 5, 0}, []float64{2, 0, 1, 2, 0, 1, 1, 2, 0}},
		{"cols/asc", 0, false, []float64{0, 1, 3, 2, 1, 5, 3, nan, nan}, []float64{2, 0, 1, 1, 1, 2, 0, 2, 0}},
	} {
		v, i := x.Sort(c.dim, c.desc)
		if !sameNaN(v.Values(), c.vals) || !slices.Equal(i.Values(), c.idxs) {
			t.Errorf("%s: got %v %v, want %v %v", c.name, v.Values(), i.Values(), c.vals, c.idxs)
		}
	}
}

func sameNaN(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// TestSortRandom compares Sort, Argsort and TopK with sort.SliceStable on
// rows of random values with many ties, for several dtypes and dims.
func TestSortRandom(t *testing.T) {
	rng := tensor.NewRNG(7)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int64, tensor.Int32, tensor.BFloat16} {
		x := rng.RandInt(tensor.Int64, -5, 6, 4, 37, 3).To(dt)
		for _, desc := range []bool{false, true} {
			v, idx := x.Sort(1, desc)
			arg := x.Argsort(1, desc)
			tv, ti := x.TopK(5, 1, desc, true)
			xs, vs, is, as := x.Values(), v.Values(), idx.Values(), arg.Values()
			tvs, tis := tv.Values(), ti.Values()
			for a := 0; a < 4; a++ {
				for c := 0; c < 3; c++ {
					perm := make([]int, 37)
					for i := range perm {
						perm[i] = i
					}
					at := func(i int) float64 { return xs[(a*37+i)*3+c] }
					sort.SliceStable(perm, func(p, q int) bool {
						if desc {
							return at(perm[p]) > at(perm[q])
						}
						return at(perm[p]) < at(perm[q])
					})
					for j, p := range perm {
						k := (a*37+j)*3 + c
						if int(is[k]) != p || int(as[k]) != p || vs[k] != at(p) {
							t.Fatalf("%v desc=%v: row (%d,%d) position %d: index %v/%v value %v, want %d (%v)", dt, desc, a, c, j, is[k], as[k], vs[k], p, at(p))
						}
						if j < 5 {
							k5 := (a*5+j)*3 + c
							if int(tis[k5]) != p || tvs[k5] != at(p) {
								t.Fatalf("%v TopK largest=%v: row (%d,%d) position %d: %v (%v), want %d", dt, desc, a, c, j, tis[k5], tvs[k5], p)
							}
						}
					}
				}
			}
		}
	}
}

func TestUnique(t *testing.T) {
	x := tensor.FromInt64([]int64{3, 1, 3, 2, 1, 3}, 2, 3)
	v, inv, cnt := x.Unique(true)
	wantValues(t, "values", v, []int{3}, []float64{1, 2, 3})
	wantValues(t, "inverse", inv, []int{2, 3}, []float64{2, 0, 2, 1, 0, 2})
	wantValues(t, "counts", cnt, []int{3}, []float64{2, 1, 3})
	v, inv, cnt = x.Unique(false)
	wantValues(t, "values/unsorted", v, []int{3}, []float64{3, 1, 2})
	wantValues(t, "inverse/unsorted", inv, []int{2, 3}, []float64{0, 1, 0, 2, 1, 0})
	wantValues(t, "counts/unsorted", cnt, []int{3}, []float64{3, 2, 1})
	if v.DType() != tensor.Int64 {
		t.Errorf("values dtype %v", v.DType())
	}
	f := tensor.FromFloat32([]float32{0.5, float32(math.NaN()), -1, 0.5, float32(math.NaN())}, 5)
	v, _, cnt = f.Unique(true)
	if got := v.Values(); len(got) != 4 || got[0] != -1 || got[1] != 0.5 || !math.IsNaN(got[2]) || !math.IsNaN(got[3]) {
		t.Errorf("float unique: %v", got)
	}
	wantValues(t, "float counts", cnt, []int{4}, []float64{1, 2, 1, 1})
	// Round trip: values[inverse] == x.
	r := tensor.NewRNG(3).RandInt(tensor.Int32, 0, 20, 50)
	v, inv, _ = r.Unique(true)
	if !slices.Equal(v.IndexSelect(0, inv).Values(), r.Values()) {
		t.Error("values[inverse] differs from the input")
	}
}

func TestSortGradients(t *testing.T) {
	// Distinct values so the sort order is stable under the ± eps steps.
	x := func(seed uint64) *tensor.Tensor {
		p := tensor.NewRNG(seed).Perm(24)
		v := make([]float64, 24)
		for i, j := range p {
			v[i] = float64(j) * 0.1
		}
		return tensor.FromFloat64(v, 4, 3, 2).Transpose(0, 2).SetRequiresGrad(true) // [2, 3, 4], non-contiguous
	}
	checkGrad(t, func(in []*tensor.Tensor) *tensor.Tensor { v, _ := in[0].Sort(2, false); return v }, x(1))
	checkGrad(t, func(in []*tensor.Tensor) *tensor.Tensor { v, _ := in[0].Sort(0, true); return v }, x(2))
	checkGrad(t, func(in []*tensor.Tensor) *tensor.Tensor { v, _ := in[0].TopK(2, -1, true, true); return v }, x(3))
	checkGrad(t, func(in []*tensor.Tensor) *tensor.Tensor { v, _ := in[0].TopK(3, 1, false, false); return v }, x(4))
}
