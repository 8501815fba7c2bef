package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// gemvCheck compares y against the float64 matrix-vector product. Float32
// accumulation of n terms errs by at most about n·ε₃₂·Σ|w·x| (Higham,
// "Accuracy and Stability of Numerical Algorithms", 2nd ed., §3.1), plus the
// rounding of the bias addition.
func gemvCheck(t *testing.T, name string, y, w, x, bias []float32) {
	t.Helper()
	n := len(x)
	for i := range y {
		want, abs := 0.0, 0.0
		if bias != nil {
			want, abs = float64(bias[i]), math.Abs(float64(bias[i]))
		}
		for j := range n {
			p := float64(w[i*n+j]) * float64(x[j])
			want += p
			abs += math.Abs(p)
		}
		tol := float64(n+2) * 0x1p-24 * abs
		if d := math.Abs(float64(y[i]) - want); d > tol {
			t.Fatalf("%s: y[%d] = %v, want %v (|diff| %g > %g)", name, i, y[i], want, d, tol)
		}
	}
}

func TestGemvF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	impls := map[string]func(y, w, x, bias []float32){"ref": gemvRef, "GemvF32": GemvF32}
	for name, f := range gemvVariants() {
		impls[name] = f
	}
	for _, m := range []int{0, 1, 3, 4, 5, 8, 17} {
		for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 784, 1000} {
			w, x := make([]float32, m*n), make([]float32, n)
			for i := range w {
				w[i] = float32(rng.NormFloat64())
			}
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			bias := make([]float32, m)
			for i := range bias {
				bias[i] = float32(rng.NormFloat64())
			}
			for name, f := range impls {
				label := fmt.Sprintf("%s m=%d n=%d", name, m, n)
				y := make([]float32, m)
				for i := range y {
					y[i] = float32(math.NaN()) // every element must be written
				}
				f(y, w, x, nil)
				gemvCheck(t, label+" no bias", y, w, x, nil)
				f(y, w, x, bias)
				gemvCheck(t, label+" bias", y, w, x, bias)
				// bias aliasing y: y += W·x.
				copy(y, bias)
				f(y, w, x, y)
				gemvCheck(t, label+" y+=", y, w, x, bias)
			}
		}
	}
}

// TestGemvF32Strided checks that a kernel reads rows n apart within a
// longer buffer and writes nothing past len(y).
func TestGemvF32Strided(t *testing.T) {
	const m, n = 6, 40
	w, x := make([]float32, m*n+5), make([]float32, n)
	for i := range w {
		w[i] = float32(i%13) - 6
	}
	for i := range x {
		x[i] = float32(i%5) - 2
	}
	y := make([]float32, m+1)
	y[m] = 42
	GemvF32(y[:m], w, x, nil)
	gemvCheck(t, "strided", y[:m], w, x, nil)
	if y[m] != 42 {
		t.Fatalf("GemvF32 wrote past len(y): %v", y[m])
	}
}

func TestGemvF32Panics(t *testing.T) {
	for name, f := range map[string]func(){
		"short w":    func() { GemvF32(make([]float32, 3), make([]float32, 5), make([]float32, 2), nil) },
		"short bias": func() { GemvF32(make([]float32, 3), make([]float32, 6), make([]float32, 2), make([]float32, 2)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func ExampleGemvF32() {
	w := []float32{
		1, 2, 3,
		4, 5, 6,
	}
	y := make([]float32, 2)
	GemvF32(y, w, []float32{1, 0, -1}, []float32{10, 20})
	fmt.Println(y)
	// Output: [8 18]
}

func BenchmarkGemvF32(b *testing.B) {
	for _, sz := range [][2]int{{256, 784}, {128, 256}, {10, 128}} {
		m, n := sz[0], sz[1]
		w, x, y := make([]float32, m*n), make([]float32, n), make([]float32, m)
		for i := range w {
			w[i] = float32(i%7) * 0.1
		}
		b.Run(fmt.Sprintf("%dx%d/gemv", m, n), func(b *testing.B) {
			b.SetBytes(int64(4 * m * n))
			for b.Loop() {
				GemvF32(y, w, x, nil)
			}
		})
		b.Run(fmt.Sprintf("%dx%d/dot", m, n), func(b *testing.B) {
			b.SetBytes(int64(4 * m * n))
			for b.Loop() {
				for i := range y {
					y[i] = DotF32(w[i*n:(i+1)*n], x)
				}
			}
		})
	}
}
