package tensor_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

// leaf64 returns a float64 leaf of uniform values in [-1, 1) that requires grad.
func leaf64(seed uint64, shape ...int) *tensor.Tensor {
	return tensor.NewRNG(seed).Uniform(tensor.Float64, -1, 1, shape...).SetRequiresGrad(true)
}

// permuted64 returns a non-contiguous float64 leaf of the given shape: a
// contiguous tensor with its first and last dims swapped, transposed back.
func permuted64(seed uint64, shape ...int) *tensor.Tensor {
	s := slices.Clone(shape)
	last := len(s) - 1
	s[0], s[last] = s[last], s[0]
	return tensor.NewRNG(seed).Uniform(tensor.Float64, -1, 1, s...).Transpose(0, last).SetRequiresGrad(true)
}

func i64(v ...int64) *tensor.Tensor { return tensor.FromInt64(v, len(v)) }

func checkGrad(t *testing.T, f func(x []*tensor.Tensor) *tensor.Tensor, in ...*tensor.Tensor) {
	t.Helper()
	if err := gradcheck.Check(f, in, 1e-6, 1e-6, 1e-5); err != nil {
		t.Error(err)
	}
}

func wantValues(t *testing.T, name string, got *tensor.Tensor, shape []int, want []float64) {
	t.Helper()
	if !slices.Equal(got.Shape(), shape) {
		t.Fatalf("%s: shape %v, want %v", name, got.Shape(), shape)
	}
	if v := got.Values(); !slices.Equal(v, want) {
		t.Errorf("%s: got %v, want %v", name, v, want)
	}
}

// mustPanic runs f and checks that it panics with a message containing
// every one of parts.
func panicsWith(t *testing.T, name string, f func(), parts ...string) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s: no panic", name)
			return
		}
		msg := fmt.Sprint(r)
		for _, p := range parts {
			if !strings.Contains(msg, p) {
				t.Errorf("%s: panic %q does not mention %q", name, msg, p)
			}
		}
	}()
	f()
}

func TestIndexForward(t *testing.T) {
	x := tensor.Arange(tensor.Float32, 0, 12, 1).Reshape(3, 4) // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
	for _, c := range []struct {
		name  string
		got   *tensor.Tensor
		shape []int
		want  []float64
	}{
		{"IndexSelect/dim0", x.IndexSelect(0, i64(2, 0, 2)), []int{3, 4}, []float64{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}},
		{"IndexSelect/dim1", x.IndexSelect(1, tensor.FromInt32([]int32{3, 1}, 2)), []int{3, 2}, []float64{3, 1, 7, 5, 11, 9}},
		{"IndexSelect/transposed", x.T().IndexSelect(1, i64(1)), []int{4, 1}, []float64{4, 5, 6, 7}},
		{"IndexSelect/empty", x.IndexSelect(0, tensor.FromInt64(nil, 0)), []int{0, 4}, []float64{}},
		{"IndexSelect/int", tensor.FromInt64([]int64{5, 6, 7}, 3).IndexSelect(0, i64(2, 2)), []int{2}, []float64{7, 7}},
		{"Embedding", tensor.Embedding(x, tensor.FromInt64([]int64{1, 0, 2, 1}, 2, 2)), []int{2, 2, 4},
			[]float64{4, 5, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7}},
		{"Gather/dim1", x.Gather(1, tensor.FromInt64([]int64{0, 0, 3, 2}, 2, 2)), []int{2, 2}, []float64{0, 0, 7, 6}},
		{"Gather/dim0", x.Gather(0, tensor.FromInt64([]int64{2, 1, 0, 0}, 1, 4)), []int{1, 4}, []float64{8, 5, 2, 3}},
		{"Scatter/dim1", tensor.Zeros(tensor.Float32, 2, 4).Scatter(1, tensor.FromInt64([]int64{3, 0, 1, 1}, 2, 2), x.Narrow(0, 0, 2)),
			[]int{2, 4}, []float64{1, 0, 0, 0, 0, 5, 0, 0}},
		{"ScatterAdd/dim0", tensor.Ones(tensor.Float32, 3, 2).ScatterAdd(0, tensor.FromInt64([]int64{0, 2, 0, 2}, 2, 2), tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)),
			[]int{3, 2}, []float64{5, 1, 1, 1, 1, 7}},
		{"ScatterAdd/int", tensor.Zeros(tensor.Int64, 3).ScatterAdd(0, i64(1, 1, 2), tensor.FromInt64([]int64{1, 1, 1}, 3)), []int{3}, []float64{0, 2, 1}},
		{"MaskedSelect", x.MaskedSelect(x.GtScalar(8.5)), []int{3}, []float64{9, 10, 11}},
		{"MaskedSelect/broadcast", x.MaskedSelect(tensor.FromBool([]bool{true, false, false, true}, 4)), []int{6}, []float64{0, 3, 4, 7, 8, 11}},
		{"Cat/dim0", tensor.Cat([]*tensor.Tensor{x.Narrow(0, 0, 1), x}, 0), []int{4, 4}, []float64{0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"Cat/dim1", tensor.Cat([]*tensor.Tensor{x.Narrow(1, 3, 1), x.Narrow(1, 0, 1)}, -1), []int{3, 2}, []float64{3, 0, 7, 4, 11, 8}},
		{"Cat/promote", tensor.Cat([]*tensor.Tensor{tensor.FromInt64([]int64{1}, 1), tensor.FromFloat64([]float64{0.5}, 1)}, 0), []int{2}, []float64{1, 0.5}},
		{"Stack/dim1", tensor.Stack([]*tensor.Tensor{i64(1, 2), i64(3, 4), i64(5, 6)}, 1), []int{2, 3}, []float64{1, 3, 5, 2, 4, 6}},
		{"Stack/last", tensor.Stack([]*tensor.Tensor{i64(1, 2), i64(3, 4)}, -1), []int{2, 2}, []float64{1, 3, 2, 4}},
	} {
		if c.got.DType() == tensor.Float64 && c.name != "Cat/promote" {
			t.Errorf("%s: unexpected dtype", c.name)
		}
		wantValues(t, c.name, c.got, c.shape, c.want)
	}
}

func TestSplitChunk(t *testing.T) {
	x := tensor.Arange(tensor.Float32, 0, 14, 1).Reshape(7, 2)
	for _, c := range []struct {
		name   string
		parts  []*tensor.Tensor
		firsts []int // first dim of each piece
	}{
		{"Split3", x.Split(3, 0), []int{3, 3, 1}},
		{"Split7", x.Split(7, 0), []int{7}},
		{"Split10", x.Split(10, 0), []int{7}},
		{"SplitSizes", x.SplitSizes([]int{1, 0, 6}, 0), []int{1, 0, 6}},
		{"Chunk3", x.Chunk(3, 0), []int{3, 3, 1}},
		{"Chunk4", x.Chunk(4, 0), []int{2, 2, 2, 1}},
		{"Chunk7", x.Chunk(7, 0), []int{1, 1, 1, 1, 1, 1, 1}},
		{"Chunk10", x.Chunk(10, 0), []int{1, 1, 1, 1, 1, 1, 1}},
	} {
		var got []int
		for _, p := range c.parts {
			got = append(got, p.Size(0))
			if !p.SharesStorage(x) {
				t.Errorf("%s: piece is not a view", c.name)
			}
		}
		if !slices.Equal(got, c.firsts) {
			t.Errorf("%s: pieces %v, want %v", c.name, got, c.firsts)
		}
		if back := tensor.Cat(c.parts, 0); !slices.Equal(back.Values(), x.Values()) {
			t.Errorf("%s: Cat of the pieces differs from the input", c.name)
		}
	}
	cols := x.Chunk(2, 1)
	wantValues(t, "Chunk/dim1", cols[1], []int{7, 1}, []float64{1, 3, 5, 7, 9, 11, 13})
}

func TestScatterInPlace(t *testing.T) {
	z := tensor.Zeros(tensor.Float64, 2, 3)
	z.ScatterInPlace(1, tensor.FromInt64([]int64{2, 0}, 2, 1), tensor.FromFloat64([]float64{7, 8}, 2, 1))
	z.ScatterAddInPlace(0, tensor.FromInt64([]int64{1, 1, 1}, 1, 3), tensor.FromFloat64([]float64{1, 2, 3}, 1, 3))
	wantValues(t, "in place", z, []int{2, 3}, []float64{0, 0, 7, 9, 2, 3})
	w := leaf64(1, 2, 2)
	y := w.MulScalar(2)
	panicsWith(t, "non-leaf", func() { y.ScatterInPlace(0, tensor.FromInt64([]int64{0, 0}, 1, 2), tensor.Zeros(tensor.Float64, 1, 2)) }, "ScatterInPlace")
}

func TestIndexPanics(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 3, 4)
	panicsWith(t, "IndexSelect", func() { x.IndexSelect(1, i64(0, 4)) }, "IndexSelect", "index 4", "dim 1", "size 4")
	panicsWith(t, "IndexSelect/negative", func() { x.IndexSelect(0, i64(-1)) }, "index -1", "size 3")
	panicsWith(t, "IndexSelect/float index", func() { x.IndexSelect(0, tensor.Zeros(tensor.Float32, 1)) }, "Int64")
	panicsWith(t, "Gather", func() { x.Gather(0, tensor.FromInt64([]int64{3}, 1, 1)) }, "Gather", "index 3", "dim 0", "size 3")
	panicsWith(t, "Gather/shape", func() { x.Gather(0, tensor.FromInt64([]int64{0, 0, 0, 0, 0}, 1, 5)) }, "Gather", "[1 5]")
	panicsWith(t, "Scatter", func() { x.Scatter(1, tensor.FromInt64([]int64{9}, 1, 1), tensor.Ones(tensor.Float32, 1, 1)) }, "Scatter", "index 9", "size 4")
	panicsWith(t, "Embedding", func() { tensor.Embedding(x, i64(5)) }, "index 5", "size 3")
	panicsWith(t, "Cat", func() { tensor.Cat([]*tensor.Tensor{x, tensor.Zeros(tensor.Float32, 3, 5)}, 0) }, "Cat", "[3 5]")
	panicsWith(t, "SplitSizes", func() { x.SplitSizes([]int{1, 1}, 0) }, "SplitSizes", "add up to 2")
}

// TestEmbeddingBackwardRepeats checks the index-add backward against a
// hand-computed table, with repeated rows and both the serial and the
// column-split parallel paths.
func TestEmbeddingBackwardRepeats(t *testing.T) {
	for _, dim := range []int{3, 4096} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			w := tensor.Zeros(dt, 5, dim).SetRequiresGrad(true)
			idx := tensor.FromInt64([]int64{4, 1, 4, 4, 0, 1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, 4, 5)
			out := tensor.Embedding(w, idx)
			out.BackwardWith(tensor.OnesLike(out))
			g := w.Grad().Values()
			counts := []float64{1, 2, 0, 0, 17}
			for r := 0; r < 5; r++ {
				for c := 0; c < dim; c++ {
					if g[r*dim+c] != counts[r] {
						t.Fatalf("dim %d %v: grad[%d][%d] = %v, want %v", dim, dt, r, c, g[r*dim+c], counts[r])
					}
				}
			}
		}
	}
}

func TestIndexGradients(t *testing.T) {
	idx3 := tensor.FromInt64([]int64{2, 0, 2, 1, 0, 0}, 2, 3) // for dim 1 of a [2, 4, 3]-like tensor
	for _, c := range []struct {
		name string
		in   []*tensor.Tensor
		f    func(x []*tensor.Tensor) *tensor.Tensor
	}{
		{"IndexSelect/dim0", []*tensor.Tensor{leaf64(1, 4, 3)}, func(x []*tensor.Tensor) *tensor.Tensor { return x[0].IndexSelect(0, i64(3, 0, 3, 3)) }},
		{"IndexSelect/dim1/permuted", []*tensor.Tensor{permuted64(2, 2, 5, 3)}, func(x []*tensor.Tensor) *tensor.Tensor { return x[0].IndexSelect(1, i64(4, 4, 0, 2)) }},
		{"Embedding", []*tensor.Tensor{leaf64(3, 6, 5)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return tensor.Embedding(x[0], tensor.FromInt64([]int64{5, 1, 1, 0, 5, 5}, 3, 2))
		}},
		{"Gather/dim1", []*tensor.Tensor{leaf64(4, 2, 4, 3)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return x[0].Gather(1, tensor.FromInt64([]int64{3, 0, 3, 1, 1, 2}, 2, 1, 3))
		}},
		{"Gather/permuted/smallIndex", []*tensor.Tensor{permuted64(5, 3, 4, 2)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return x[0].Gather(2, tensor.FromInt64([]int64{1, 1, 0, 0, 1, 0}, 2, 3, 1))
		}},
		{"Scatter", []*tensor.Tensor{leaf64(6, 2, 3), leaf64(7, 2, 4)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return x[0].Scatter(1, tensor.FromInt64([]int64{2, 0, 1, 2}, 2, 2), x[1])
		}},
		{"ScatterAdd/repeats/permuted", []*tensor.Tensor{permuted64(8, 2, 3), leaf64(9, 2, 3)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return x[0].ScatterAdd(1, idx3, x[1])
		}},
		{"ScatterAdd/dim0", []*tensor.Tensor{leaf64(10, 3, 2), leaf64(11, 4, 2)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return x[0].ScatterAdd(0, tensor.FromInt64([]int64{0, 2, 0, 2, 1, 1}, 3, 2), x[1])
		}},
		{"MaskedSelect/broadcast", []*tensor.Tensor{permuted64(12, 3, 4)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return x[0].MaskedSelect(tensor.FromBool([]bool{false, true, true, false, true, false, true, true}, 2, 1, 4))
		}},
		{"Cat", []*tensor.Tensor{leaf64(13, 2, 3), permuted64(14, 2, 2), leaf64(15, 2, 1)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return tensor.Cat(x, 1)
		}},
		{"Cat/reuse", []*tensor.Tensor{leaf64(16, 2, 3)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return tensor.Cat([]*tensor.Tensor{x[0], x[0].Square()}, 0)
		}},
		{"Stack", []*tensor.Tensor{leaf64(17, 2, 3), permuted64(18, 2, 3)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return tensor.Stack(x, 1)
		}},
		{"Split", []*tensor.Tensor{leaf64(19, 5, 2)}, func(x []*tensor.Tensor) *tensor.Tensor {
			p := x[0].Split(2, 0)
			return p[0].Mul(p[1]).Add(p[2].Square())
		}},
		{"Chunk", []*tensor.Tensor{permuted64(20, 3, 4)}, func(x []*tensor.Tensor) *tensor.Tensor {
			p := x[0].Chunk(2, 1)
			return p[1].Sub(p[0].Exp())
		}},
	} {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c.f, c.in...) })
	}
}

func ExampleEmbedding() {
	table := tensor.FromFloat32([]float32{0, 0, 1, 1, 2, 2}, 3, 2) // 3 tokens, 2 features
	ids := tensor.FromInt64([]int64{2, 0, 2}, 3)
	fmt.Println(tensor.Embedding(table, ids))
	// Output:
	// tensor([[2., 2.],
	//         [0., 0.],
	//         [2., 2.]], dtype=float32)
}
