package tensor_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// forEachIndex calls fn with every multi-index of shape in row-major order.
func forEachIndex(shape []int, fn func(idx []int)) {
	n := 1
	for _, s := range shape {
		n *= s
	}
	idx := make([]int, len(shape))
	for k := 0; k < n; k++ {
		fn(idx)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// bcastAt reads t at an index of a shape t broadcasts to.
func bcastAt(t *tensor.Tensor, idx []int) float64 {
	shape := t.Shape()
	k := len(idx) - len(shape)
	sub := make([]int, len(shape))
	for i := range shape {
		if shape[i] != 1 {
			sub[i] = idx[k+i]
		}
	}
	return t.At(sub...)
}

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol*(1+math.Abs(b))
}

func sameInts(a, b []int) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestBinaryBroadcastMatchesReference(t *testing.T) {
	rng := tensor.NewRNG(7)
	shapes := []struct{ a, b, out []int }{
		{[]int{3, 4}, []int{3, 4}, []int{3, 4}},
		{[]int{3, 4}, []int{4}, []int{3, 4}},
		{[]int{3, 1}, []int{1, 4}, []int{3, 4}},
		{[]int{2, 1, 4}, []int{3, 1}, []int{2, 3, 4}},
		{nil, []int{2, 3}, []int{2, 3}},
		{[]int{5, 1, 1}, []int{1, 6, 7}, []int{5, 6, 7}},
		{[]int{0, 3}, []int{3}, []int{0, 3}},
		{[]int{300, 200}, []int{200}, []int{300, 200}}, // large enough to run in parallel
	}
	ops := []struct {
		name string
		f    func(a, b *tensor.Tensor) *tensor.Tensor
		ref  func(x, y float64) float64
	}{
		{"Add", tensor.Add, func(x, y float64) float64 { return x + y }},
		{"Sub", tensor.Sub, func(x, y float64) float64 { return x - y }},
		{"Mul", tensor.Mul, func(x, y float64) float64 { return x * y }},
		{"Div", tensor.Div, func(x, y float64) float64 { return x / y }},
		{"Maximum", tensor.Maximum, math.Max},
		{"Minimum", tensor.Minimum, math.Min},
		{"Pow", (*tensor.Tensor).Pow, math.Pow},
		{"Gt", (*tensor.Tensor).Gt, func(x, y float64) float64 { return b2f(x > y) }},
		{"Le", (*tensor.Tensor).Le, func(x, y float64) float64 { return b2f(x <= y) }},
		{"Eq", (*tensor.Tensor).Eq, func(x, y float64) float64 { return b2f(x == y) }},
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.BFloat16} {
		for _, sh := range shapes {
			a := rng.Uniform(dt, 0.5, 2, sh.a...)
			b := rng.Uniform(dt, 0.5, 2, sh.b...)
			// Make some entries equal so Eq/Le see ties.
			if a.Dim() > 0 && a.Numel() > 0 && b.Numel() > 0 {
				b.Fill(1)
				a.Narrow(-1, 0, 1).Fill(1)
			}
			for _, op := range ops {
				name := fmt.Sprintf("%v/%s/%v%v", dt, op.name, sh.a, sh.b)
				out := op.f(a, b)
				if !sameInts(out.Shape(), sh.out) {
					t.Fatalf("%s: shape %v, want %v", name, out.Shape(), sh.out)
				}
				tol := 1e-6
				if dt == tensor.BFloat16 {
					tol = 1e-2
				}
				forEachIndex(sh.out, func(idx []int) {
					want := op.ref(bcastAt(a, idx), bcastAt(b, idx))
					if got := out.At(idx...); !near(got, want, tol) {
						t.Fatalf("%s at %v: got %v, want %v", name, idx, got, want)
					}
				})
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestBinaryOnNonContiguousAndIntegers(t *testing.T) {
	a := tensor.Arange(tensor.Float32, 0, 12, 1).Reshape(3, 4).T() // 4×3, transposed
	b := tensor.Arange(tensor.Float32, 0, 24, 1).Reshape(4, 6).Slice(1, 0, 6, 2)
	got := a.Add(b).Values()
	var want []float64
	for i := 0; i < 4; i++ {
		for j := 0; j < 3; j++ {
			want = append(want, float64(j*4+i)+float64(i*6+2*j))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Integer arithmetic stays integer; true division and non-integral
	// scalars promote to float32.
	ia := tensor.FromInt64([]int64{1, 2, 3}, 3)
	if s := ia.Add(ia).MulScalar(3); s.DType() != tensor.Int64 || fmt.Sprint(s.Int64s()) != "[6 12 18]" {
		t.Fatalf("int arithmetic: %v", s)
	}
	if d := ia.Div(tensor.FromInt64([]int64{2, 2, 2})); d.DType() != tensor.Float32 || fmt.Sprint(d.Float32s()) != "[0.5 1 1.5]" {
		t.Fatalf("int division: %v", d)
	}
	if m := ia.MulScalar(0.5); m.DType() != tensor.Float32 {
		t.Fatalf("int × 0.5 dtype %v", m.DType())
	}
	if p := tensor.PromoteTypes(tensor.Float16, tensor.BFloat16); p != tensor.Float32 {
		t.Fatalf("f16+bf16 → %v", p)
	}
	// Float32 + Float64 promotes.
	if s := tensor.Ones(tensor.Float32, 2).Add(tensor.Ones(tensor.Float64, 2)); s.DType() != tensor.Float64 {
		t.Fatalf("f32+f64 → %v", s.DType())
	}
}

func TestUnaryMatchesMath(t *testing.T) {
	x := tensor.Linspace(tensor.Float64, -3, 3, 61)
	for _, c := range []struct {
		name string
		f    func(*tensor.Tensor) *tensor.Tensor
		ref  func(float64) float64
	}{
		{"Exp", (*tensor.Tensor).Exp, math.Exp},
		{"Tanh", (*tensor.Tensor).Tanh, math.Tanh},
		{"Sigmoid", (*tensor.Tensor).Sigmoid, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"Relu", (*tensor.Tensor).Relu, func(v float64) float64 { return math.Max(v, 0) }},
		{"Gelu", (*tensor.Tensor).Gelu, func(v float64) float64 { return v * 0.5 * (1 + math.Erf(v/math.Sqrt2)) }},
		{"GeluTanh", (*tensor.Tensor).GeluTanh, func(v float64) float64 {
			return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		}},
		{"Silu", (*tensor.Tensor).Silu, func(v float64) float64 { return v / (1 + math.Exp(-v)) }},
		{"Softplus", func(t *tensor.Tensor) *tensor.Tensor { return t.Softplus(2, 3) }, func(v float64) float64 {
			if 2*v > 3 {
				return v
			}
			return math.Log(1+math.Exp(2*v)) / 2
		}},
		{"Elu", func(t *tensor.Tensor) *tensor.Tensor { return t.Elu(0.7) }, func(v float64) float64 {
			if v > 0 {
				return v
			}
			return 0.7 * (math.Exp(v) - 1)
		}},
		{"LeakyRelu", func(t *tensor.Tensor) *tensor.Tensor { return t.LeakyRelu(0.01) }, func(v float64) float64 {
			if v > 0 {
				return v
			}
			return 0.01 * v
		}},
		{"Round", (*tensor.Tensor).Round, math.RoundToEven},
		{"Sign", (*tensor.Tensor).Sign, func(v float64) float64 {
			if v == 0 {
				return 0
			}
			return math.Copysign(1, v)
		}},
		{"Clamp", func(t *tensor.Tensor) *tensor.Tensor { return t.Clamp(-1, 0.5) }, func(v float64) float64 { return math.Min(math.Max(v, -1), 0.5) }},
		{"LogSigmoid", (*tensor.Tensor).LogSigmoid, func(v float64) float64 { return math.Log(1 / (1 + math.Exp(-v))) }},
	} {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32, tensor.Float16} {
			got := c.f(x.To(dt))
			if got.DType() != dt {
				t.Fatalf("%s on %v returned %v", c.name, dt, got.DType())
			}
			tol := map[tensor.DType]float64{tensor.Float64: 1e-12, tensor.Float32: 1e-6, tensor.Float16: 2e-3}[dt]
			xs := x.To(dt).Values()
			for i, v := range got.Values() {
				if want := c.ref(xs[i]); !near(v, want, tol) {
					t.Fatalf("%s(%v) on %v = %v, want %v", c.name, xs[i], dt, v, want)
				}
			}
		}
	}
	// Large softplus inputs do not overflow; sigmoid saturates cleanly.
	big := tensor.FromFloat32([]float32{-100, 100}, 2)
	if v := big.Sigmoid().Values(); v[0] > 1e-40 || v[1] != 1 {
		t.Fatalf("sigmoid saturation %v", v)
	}
	if v := big.Softplus(1, 20).Values(); v[0] > 1e-40 || v[1] != 100 {
		t.Fatalf("softplus %v", v)
	}
	// Integer-preserving ops stay integer; others promote.
	ix := tensor.FromInt64([]int64{-2, 0, 3})
	if r := ix.Abs(); r.DType() != tensor.Int64 || fmt.Sprint(r.Int64s()) != "[2 0 3]" {
		t.Fatalf("int Abs %v", r)
	}
	if r := ix.Exp(); r.DType() != tensor.Float32 {
		t.Fatalf("int Exp dtype %v", r.DType())
	}
}

func TestViews(t *testing.T) {
	x := tensor.Arange(tensor.Float64, 0, 24, 1).Reshape(2, 3, 4)
	check := func(name string, v *tensor.Tensor, shape []int, at func(idx []int) float64) {
		t.Helper()
		if !sameInts(v.Shape(), shape) {
			t.Fatalf("%s: shape %v, want %v", name, v.Shape(), shape)
		}
		forEachIndex(shape, func(idx []int) {
			if got, want := v.At(idx...), at(idx); got != want {
				t.Fatalf("%s at %v: %v, want %v", name, idx, got, want)
			}
		})
	}
	val := func(i, j, k int) float64 { return float64(i*12 + j*4 + k) }
	check("Transpose", x.Transpose(0, 2), []int{4, 3, 2}, func(p []int) float64 { return val(p[2], p[1], p[0]) })
	check("Permute", x.Permute(1, 2, 0), []int{3, 4, 2}, func(p []int) float64 { return val(p[2], p[0], p[1]) })
	check("Narrow", x.Narrow(1, 1, 2), []int{2, 2, 4}, func(p []int) float64 { return val(p[0], p[1]+1, p[2]) })
	check("Slice", x.Slice(2, 1, 4, 2), []int{2, 3, 2}, func(p []int) float64 { return val(p[0], p[1], 1+2*p[2]) })
	check("SliceNeg", x.Slice(-1, -3, 100, 1), []int{2, 3, 3}, func(p []int) float64 { return val(p[0], p[1], 1+p[2]) })
	check("Select", x.Select(1, -1), []int{2, 4}, func(p []int) float64 { return val(p[0], 2, p[1]) })
	check("Unsqueeze", x.Unsqueeze(-1), []int{2, 3, 4, 1}, func(p []int) float64 { return val(p[0], p[1], p[2]) })
	check("Squeeze", x.Narrow(1, 2, 1).Squeeze(), []int{2, 4}, func(p []int) float64 { return val(p[0], 2, p[1]) })
	check("SqueezeDim", x.Narrow(0, 1, 1).Squeeze(0, 2), []int{3, 4}, func(p []int) float64 { return val(1, p[0], p[1]) })
	check("Expand", x.Narrow(1, 0, 1).Expand(2, 3, -1), []int{2, 3, 4}, func(p []int) float64 { return val(p[0], 0, p[2]) })
	check("ExpandNew", tensor.Arange(tensor.Float64, 0, 4, 1).Expand(2, 3, 4), []int{2, 3, 4}, func(p []int) float64 { return float64(p[2]) })
	check("Flatten", x.Flatten(0, 1), []int{6, 4}, func(p []int) float64 { return val(p[0]/3, p[0]%3, p[1]) })
	check("ReshapeInfer", x.Reshape(-1, 6), []int{4, 6}, func(p []int) float64 { return float64(p[0]*6 + p[1]) })
	// Reshape of a transposed view copies; of a narrowed view it can view.
	tr := x.Transpose(1, 2)
	check("ReshapeCopy", tr.Reshape(2, 12), []int{2, 12}, func(p []int) float64 { return val(p[0], p[1]%3, p[1]/3) })
	if tr.Reshape(2, 12).SharesStorage(x) {
		t.Fatal("reshape of a transposed view should copy")
	}
	nv := x.Narrow(0, 1, 1).View(3, 4) // non-contiguous-looking but viewable
	if !nv.SharesStorage(x) || nv.At(2, 3) != 23 {
		t.Fatalf("View of narrowed tensor: %v", nv)
	}
	sp := x.Narrow(2, 0, 2).Reshape(6, 2) // dims 0,1 merge; view possible
	if !sp.SharesStorage(x) || sp.At(5, 1) != val(1, 2, 1) {
		t.Fatalf("Reshape of narrowed tensor should view: %v", sp)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("View of a transposed tensor to 1-D should panic")
			}
		}()
		tr.View(-1)
	}()
	// Large transposed copies take the cache-blocked path.
	big := tensor.Arange(tensor.Float32, 0, 3*50*70, 1).Reshape(3, 50, 70)
	check("TiledCopy", big.Transpose(1, 2).Contiguous(), []int{3, 70, 50}, func(p []int) float64 { return float64(p[0]*3500 + p[2]*70 + p[1]) })
	check("TiledCopy2D", big.Select(1, 3).Unsqueeze(1).Expand(-1, 9, -1).Transpose(0, 2).Contiguous(), []int{70, 9, 3},
		func(p []int) float64 { return float64(p[2]*3500 + 3*70 + p[0]) })
	check("TransposedAdd", big.Transpose(1, 2).Add(big.Transpose(1, 2).Contiguous()), []int{3, 70, 50}, func(p []int) float64 { return 2 * float64(p[0]*3500+p[2]*70+p[1]) })
	// Views share storage: a write through one shows in the other.
	y := x.Clone()
	y.Select(0, 1).Select(0, 2).Fill(-1)
	if y.At(1, 2, 3) != -1 || x.At(1, 2, 3) != 23 {
		t.Fatal("Fill through a view / Clone isolation broken")
	}
	if !x.IsContiguous() || tr.IsContiguous() || !tr.Contiguous().IsContiguous() {
		t.Fatal("IsContiguous wrong")
	}
	if c := x.Contiguous(); c != x {
		t.Fatal("Contiguous of a contiguous tensor should return it")
	}
	if got := x.T; got == nil {
		t.Fatal()
	}
	m := tensor.Arange(tensor.Float32, 0, 6, 1).Reshape(2, 3)
	if fmt.Sprint(m.T().Float32s()) != "[0 3 1 4 2 5]" {
		t.Fatalf("T().Float32s() = %v", m.T().Float32s())
	}
}

func TestCreation(t *testing.T) {
	if v := tensor.Arange(tensor.Int64, 2, 9, 3).Values(); fmt.Sprint(v) != "[2 5 8]" {
		t.Fatalf("Arange %v", v)
	}
	if v := tensor.Arange(tensor.Float32, 1, 0, -0.25).Values(); fmt.Sprint(v) != "[1 0.75 0.5 0.25]" {
		t.Fatalf("Arange down %v", v)
	}
	if v := tensor.Linspace(tensor.Float64, 0, 1, 5).Values(); fmt.Sprint(v) != "[0 0.25 0.5 0.75 1]" {
		t.Fatalf("Linspace %v", v)
	}
	if v := tensor.Eye(tensor.Float32, 3).Values(); fmt.Sprint(v) != "[1 0 0 0 1 0 0 0 1]" {
		t.Fatalf("Eye %v", v)
	}
	oh := tensor.OneHot(tensor.FromInt64([]int64{2, 0}, 2), 3)
	if !sameInts(oh.Shape(), []int{2, 3}) || fmt.Sprint(oh.Values()) != "[0 0 1 1 0 0]" {
		t.Fatalf("OneHot %v", oh)
	}
	if s := tensor.Scalar(2.5, tensor.Float32); s.Dim() != 0 || s.Item() != 2.5 {
		t.Fatalf("Scalar %v", s)
	}
	f := tensor.Full(tensor.Int32, 7, 2, 2)
	if fmt.Sprint(f.Int32s()) != "[7 7 7 7]" || tensor.ZerosLike(f).DType() != tensor.Int32 {
		t.Fatalf("Full %v", f)
	}
	data := []float32{1, 2, 3, 4}
	v := tensor.FromFloat32(data, 2, 2)
	data[3] = 9
	if v.At(1, 1) != 9 {
		t.Fatal("FromFloat32 must not copy")
	}
	v.Float32s()[0] = 5
	if data[0] != 5 {
		t.Fatal("Float32s of a contiguous tensor must alias")
	}
	if b := tensor.FromBool([]bool{true, false}); fmt.Sprint(b.Bools()) != "[true false]" {
		t.Fatal("FromBool")
	}
	if c := tensor.FromFloat64([]float64{1.7, -2.7, 0}).To(tensor.Int64); fmt.Sprint(c.Int64s()) != "[1 -2 0]" {
		t.Fatalf("float→int truncates: %v", c.Int64s())
	}
	if c := tensor.FromFloat64([]float64{1.7, 0}).To(tensor.Bool); fmt.Sprint(c.Bools()) != "[true false]" {
		t.Fatalf("float→bool: %v", c)
	}
}

func TestReductionsMatchReference(t *testing.T) {
	rng := tensor.NewRNG(3)
	x := rng.Uniform(tensor.Float64, -1, 1, 3, 4, 5)
	views := map[string]*tensor.Tensor{"contig": x, "permuted": x.Permute(2, 0, 1)}
	for vname, v := range views {
		shape := v.Shape()
		for _, dims := range [][]int{nil, {0}, {1}, {2}, {0, 2}, {-1, 0}, {0, 1, 2}} {
			mask := make([]bool, len(shape))
			if len(dims) == 0 {
				for i := range mask {
					mask[i] = true
				}
			}
			for _, d := range dims {
				mask[(d+len(shape))%len(shape)] = true
			}
			keepShape := append([]int(nil), shape...)
			for i := range mask {
				if mask[i] {
					keepShape[i] = 1
				}
			}
			sum := make(map[string]float64)
			mx := make(map[string]float64)
			prod := make(map[string]float64)
			forEachIndex(shape, func(idx []int) {
				k := make([]int, len(idx))
				for i := range idx {
					if !mask[i] {
						k[i] = idx[i]
					}
				}
				key := fmt.Sprint(k)
				val := v.At(idx...)
				if _, ok := mx[key]; !ok {
					mx[key], prod[key] = math.Inf(-1), 1
				}
				sum[key] += val
				mx[key] = math.Max(mx[key], val)
				prod[key] *= val
			})
			for _, r := range []struct {
				name string
				got  *tensor.Tensor
				want map[string]float64
			}{
				{"Sum", v.Sum(dims, true), sum},
				{"Max", v.Max(dims, true), mx},
				{"Prod", v.Prod(dims, true), prod},
			} {
				if !sameInts(r.got.Shape(), keepShape) {
					t.Fatalf("%s %s %v: shape %v want %v", vname, r.name, dims, r.got.Shape(), keepShape)
				}
				forEachIndex(keepShape, func(idx []int) {
					k := append([]int(nil), idx...)
					if g, w := r.got.At(idx...), r.want[fmt.Sprint(k)]; !near(g, w, 1e-12) {
						t.Fatalf("%s %s %v at %v: %v want %v", vname, r.name, dims, idx, g, w)
					}
				})
			}
		}
	}
	// keepDim=false drops dims; Mean, Var, Std, LogSumExp on a known input.
	y := tensor.FromFloat64([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	if s := y.Sum([]int{1}, false); !sameInts(s.Shape(), []int{2}) || fmt.Sprint(s.Values()) != "[6 15]" {
		t.Fatalf("Sum %v", s)
	}
	if m := y.Mean([]int{0}, false).Values(); fmt.Sprint(m) != "[2.5 3.5 4.5]" {
		t.Fatalf("Mean %v", m)
	}
	if v := y.Var([]int{1}, 1, false).Values(); fmt.Sprint(v) != "[1 1]" {
		t.Fatalf("Var %v", v)
	}
	if v := y.Var(nil, 0, false).Item(); !near(v, 35.0/12, 1e-12) {
		t.Fatalf("population Var %v", v)
	}
	if v := y.LogSumExp([]int{1}, false).Values(); !near(v[0], math.Log(math.Exp(1)+math.Exp(2)+math.Exp(3)), 1e-12) {
		t.Fatalf("LogSumExp %v", v)
	}
	if v := tensor.FromFloat32([]float32{1000, 1000}).LogSumExp(nil, false).Item(); !near(v, 1000+math.Ln2, 1e-6) {
		t.Fatalf("LogSumExp overflow-safe %v", v)
	}
	// Float32 sums are accurate (float64 accumulation).
	big := tensor.Full(tensor.Float32, 0.1, 1<<20)
	if s := big.SumAll().Item(); math.Abs(s-104857.6) > 0.01 {
		t.Fatalf("float32 sum %v", s)
	}
	// Integer sums are Int64.
	if s := tensor.FromInt32([]int32{1, 2, 3}).SumAll(); s.DType() != tensor.Int64 || s.Item() != 6 {
		t.Fatalf("int sum %v", s)
	}
	// ArgMax / MaxDim, with ties going to the first index.
	z := tensor.FromFloat32([]float32{1, 5, 5, 2, 0, 7, 3, 3}, 2, 4)
	if a := z.ArgMax(1, false); fmt.Sprint(a.Int64s()) != "[1 1]" || a.DType() != tensor.Int64 {
		t.Fatalf("ArgMax %v", a)
	}
	if a := z.ArgMin(0, true); !sameInts(a.Shape(), []int{1, 4}) || fmt.Sprint(a.Int64s()) != "[1 0 1 0]" {
		t.Fatalf("ArgMin %v", a)
	}
	vals, idx := z.MaxDim(0, false)
	if fmt.Sprint(vals.Values()) != "[1 7 5 3]" || fmt.Sprint(idx.Int64s()) != "[0 1 0 1]" {
		t.Fatalf("MaxDim %v %v", vals, idx)
	}
	nan := tensor.FromFloat64([]float64{1, math.NaN(), 3})
	if !math.IsNaN(nan.MaxAll().Item()) || nan.ArgMax(0, false).Item() != 1 {
		t.Fatal("NaN must win max and argmax")
	}
}

func TestSoftmax(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := tensor.NewRNG(5).Uniform(dt, -5, 5, 3, 4, 6)
		for _, dim := range []int{-1, 1, 0} {
			s := x.Softmax(dim)
			ls := x.LogSoftmax(dim)
			ref := x.Exp().Div(x.Exp().Sum([]int{dim}, true))
			sv, lv, rv := s.Values(), ls.Values(), ref.Values()
			for i := range rv {
				if !near(sv[i], rv[i], 1e-6) || !near(math.Exp(lv[i]), rv[i], 1e-5) {
					t.Fatalf("%v dim %d: softmax %v logsoftmax %v want %v", dt, dim, sv[i], lv[i], rv[i])
				}
			}
		}
	}
	big := tensor.FromFloat32([]float32{1000, 0, -1000}, 1, 3)
	if v := big.Softmax(-1).Values(); v[0] != 1 || v[1] != 0 {
		t.Fatalf("softmax with large logits: %v", v)
	}
}

// naiveMatMul multiplies a (m×k) by b (k×n) read through At.
func naiveMatMul(a, b *tensor.Tensor) []float64 {
	m, k, n := a.Shape()[0], a.Shape()[1], b.Shape()[1]
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += a.At(i, p) * b.At(p, j)
			}
			out[i*n+j] = s
		}
	}
	return out
}

func TestMatMulLayouts(t *testing.T) {
	rng := tensor.NewRNG(11)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := map[tensor.DType]float64{tensor.Float32: 1e-5, tensor.Float64: 1e-12}[dt]
		for _, sz := range [][3]int{{1, 1, 1}, {3, 4, 5}, {17, 33, 9}, {64, 70, 40}, {2, 0, 3}} {
			m, k, n := sz[0], sz[1], sz[2]
			a := rng.Uniform(dt, -1, 1, m, k)
			b := rng.Uniform(dt, -1, 1, k, n)
			at := rng.Uniform(dt, -1, 1, k, m).T()                   // transposed view
			bn := rng.Uniform(dt, -1, 1, k, n+5).Narrow(1, 2, n)     // row stride > n
			bs := rng.Uniform(dt, -1, 1, k, 2*n).Slice(1, 0, 2*n, 2) // column stride 2: needs a copy
			for _, c := range []struct {
				name string
				a, b *tensor.Tensor
			}{{"plain", a, b}, {"transA", at, b}, {"narrowB", a, bn}, {"stridedB", at, bs}, {"transB", a, rng.Uniform(dt, -1, 1, n, k).T()}} {
				got := c.a.MatMul(c.b).Values()
				want := naiveMatMul(c.a, c.b)
				for i := range want {
					if !near(got[i], want[i], tol) {
						t.Fatalf("%v %v %s: element %d = %v, want %v", dt, sz, c.name, i, got[i], want[i])
					}
				}
			}
		}
	}
	// Batched with broadcast batch dims, and the 1-D forms.
	a := rng.Uniform(tensor.Float64, -1, 1, 2, 1, 3, 4)
	b := rng.Uniform(tensor.Float64, -1, 1, 5, 4, 2)
	c := a.MatMul(b)
	if !sameInts(c.Shape(), []int{2, 5, 3, 2}) {
		t.Fatalf("batched shape %v", c.Shape())
	}
	for i := 0; i < 2; i++ {
		for j := 0; j < 5; j++ {
			want := naiveMatMul(a.Select(0, i).Select(0, 0), b.Select(0, j))
			got := c.Select(0, i).Select(0, j).Values()
			for e := range want {
				if !near(got[e], want[e], 1e-12) {
					t.Fatalf("batch %d,%d: %v want %v", i, j, got, want)
				}
			}
		}
	}
	v := tensor.FromFloat64([]float64{1, 2, 3})
	mm := tensor.FromFloat64([]float64{1, 0, 0, 1, 1, 1}, 3, 2)
	if r := v.MatMul(mm); !sameInts(r.Shape(), []int{2}) || fmt.Sprint(r.Values()) != "[4 5]" {
		t.Fatalf("vec·mat %v", r)
	}
	if r := mm.T().MatMul(v); fmt.Sprint(r.Values()) != "[4 5]" {
		t.Fatalf("mat·vec %v", r)
	}
	if r := v.MatMul(v); r.Dim() != 0 || r.Item() != 14 {
		t.Fatalf("dot %v", r)
	}
	if r := tensor.Outer(v, v.Narrow(0, 0, 2)); fmt.Sprint(r.Values()) != "[1 2 2 4 3 6]" {
		t.Fatalf("outer %v", r)
	}
	// Linear equals the composite x·wᵀ + b, in float32 too.
	x := rng.Uniform(tensor.Float32, -1, 1, 2, 7, 5)
	w := rng.Uniform(tensor.Float32, -1, 1, 3, 5)
	bias := rng.Uniform(tensor.Float32, -1, 1, 3)
	got := tensor.Linear(x, w, bias).Values()
	want := x.MatMul(w.T()).Add(bias).Values()
	for i := range want {
		if !near(got[i], want[i], 1e-5) {
			t.Fatalf("Linear %d: %v want %v", i, got[i], want[i])
		}
	}
	// Integer matmul works too.
	ia := tensor.FromInt64([]int64{1, 2, 3, 4}, 2, 2)
	if r := ia.MatMul(ia); r.DType() != tensor.Int64 || fmt.Sprint(r.Int64s()) != "[7 10 15 22]" {
		t.Fatalf("int matmul %v", r)
	}
}

func TestInPlace(t *testing.T) {
	p := tensor.FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
	p.AddInPlace(tensor.FromFloat32([]float32{10, 20}, 2))
	p.MulScalarInPlace(0.5)
	p.AxpyInPlace(2, tensor.Ones(tensor.Float32, 2, 2))
	if fmt.Sprint(p.Float32s()) != "[7.5 13 8.5 14]" {
		t.Fatalf("in-place chain: %v", p.Float32s())
	}
	p.AddcmulInPlace(1, tensor.Full(tensor.Float32, 2, 2, 2), tensor.Full(tensor.Float32, 0.5, 2, 2))
	p.AddcdivInPlace(-1, tensor.Full(tensor.Float32, 3, 2, 2), tensor.Full(tensor.Float32, 3, 2, 2))
	if fmt.Sprint(p.Float32s()) != "[7.5 13 8.5 14]" {
		t.Fatalf("addcmul/addcdiv: %v", p.Float32s())
	}
	// In-place on a transposed view writes through.
	q := tensor.Zeros(tensor.Float64, 2, 3)
	q.T().CopyFrom(tensor.Arange(tensor.Float32, 0, 6, 1).Reshape(3, 2))
	if fmt.Sprint(q.Values()) != "[0 2 4 1 3 5]" {
		t.Fatalf("CopyFrom through T: %v", q.Values())
	}
	q.Narrow(1, 1, 2).Zero()
	if fmt.Sprint(q.Values()) != "[0 0 0 1 0 0]" {
		t.Fatalf("Zero of narrow: %v", q.Values())
	}
	h := tensor.Full(tensor.BFloat16, 1, 3)
	h.AddScalarInPlace(0.5).ClampInPlace(0, 1.25)
	if fmt.Sprint(h.Values()) != "[1.25 1.25 1.25]" {
		t.Fatalf("bf16 in place: %v", h.Values())
	}
}
