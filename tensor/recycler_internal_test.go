package tensor

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs the package's tests with poisoned uninitialized buffers:
// every buffer an op takes without zeroing starts as NaN, so an op that
// reads an output element it never wrote fails its test. Benchmarks run
// without the poison.
func TestMain(m *testing.M) {
	flag.Parse()
	recyclePoison = flag.Lookup("test.bench").Value.String() == ""
	os.Exit(m.Run())
}

// recycleStep runs a small training-like graph that exercises the engine's
// recycling: shared subexpressions (h used twice, x + x), views
// (transpose, reshape), a broadcast bias and a reduction. It returns the
// activation h, which the caller holds, and the parameters.
func recycleStep(x, w1, b1, w2 *Tensor) (h *Tensor) {
	h = Linear(x, w1, b1).Relu()                       // [64, 600]
	y := h.Add(h).MatMul(w2.T()).Reshape(-1).Sigmoid() // h consumed twice
	z := h.Mul(h).SumAll()
	y.SumAll().Add(z.MulScalar(1e-3)).Backward()
	return h
}

func recycleParams() (x, w1, b1, w2 *Tensor) {
	rng := NewRNG(7)
	x = rng.Normal(Float32, 0, 1, 64, 300)
	w1 = rng.Normal(Float32, 0, 0.05, 600, 300).SetRequiresGrad(true)
	b1 = rng.Normal(Float32, 0, 0.05, 600).SetRequiresGrad(true)
	w2 = rng.Normal(Float32, 0, 0.05, 20, 600).SetRequiresGrad(true)
	return
}

// TestRecyclerRecyclesOnlyEngineGradients checks the recycler's lifetime
// rule: Backward gives engine-owned gradient buffers back to the recycler, a
// user-held activation is never recycled (its values survive later steps
// that reuse recycled buffers), and the gradients equal those computed with
// the recycler switched off.
func TestRecyclerRecyclesOnlyEngineGradients(t *testing.T) {
	grads := func(steps int) ([][]float32, *Tensor, []float32) {
		x, w1, b1, w2 := recycleParams()
		var held *Tensor
		var snapshot []float32
		for s := range steps {
			h := recycleStep(x, w1, b1, w2)
			if s == 0 {
				held = h
				snapshot = append([]float32(nil), h.Float32s()...)
			}
		}
		return [][]float32{w1.Grad().Float32s(), b1.Grad().Float32s(), w2.Grad().Float32s()}, held, snapshot
	}

	saved := recycleMaxBytes
	defer func() { recycleMaxBytes = saved }()
	recycleMaxBytes = 0 // nothing is kept: every buffer is fresh
	want, _, _ := grads(3)

	recycleMaxBytes = saved
	before := recyclerF32.bytes
	got, held, snapshot := grads(3)
	if recyclerF32.bytes <= before {
		t.Errorf("recycler holds %d bytes after Backward, had %d: engine gradients were not recycled", recyclerF32.bytes, before)
	}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("gradient %d differs at %d with the recycler: %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	if held.st.length() == 0 {
		t.Fatal("a user-held activation was recycled")
	}
	for j, v := range held.Float32s() {
		if v != snapshot[j] {
			t.Fatalf("user-held activation changed at %d after later steps: %v, want %v", j, v, snapshot[j])
		}
	}
}

// TestRecyclerNeverRecyclesUserGradients: a gradient a user seeds Backward
// with, and user slices wrapped without copying, stay theirs.
func TestRecyclerNeverRecyclesUserGradients(t *testing.T) {
	seed := make([]float32, 64*600)
	for i := range seed {
		seed[i] = 1
	}
	x, w1, b1, _ := recycleParams()
	y := Linear(x, w1, b1)
	y.Relu().BackwardWith(FromFloat32(seed, 64, 600))
	for i, v := range seed {
		if v != 1 {
			t.Fatalf("seed gradient changed at %d: %v", i, v)
		}
	}
	if !y.IsContiguous() || len(y.Float32s()) != 64*600 {
		t.Fatal("the forward output lost its storage")
	}
}

// TestRecyclerConcurrentBackward runs independent training steps on several
// goroutines at once, all recycling through the shared recycler, and checks
// each replica's gradients against a run on one goroutine (run it with
// -race).
func TestRecyclerConcurrentBackward(t *testing.T) {
	x, w1, b1, w2 := recycleParams()
	recycleStep(x, w1, b1, w2)
	want := w1.Grad().Float32s()

	const replicas = 4
	got := make([][]float32, replicas)
	done := make(chan int, replicas)
	for r := range replicas {
		go func() {
			x, w1, b1, w2 := recycleParams()
			for range 3 {
				w1.SetGrad(nil)
				recycleStep(x, w1, b1, w2)
			}
			got[r] = w1.Grad().Float32s()
			done <- r
		}()
	}
	for range replicas {
		<-done
	}
	for r, g := range got {
		for j := range want {
			if g[j] != want[j] {
				t.Fatalf("replica %d: gradient differs at %d: %v, want %v", r, j, g[j], want[j])
			}
		}
	}
}
