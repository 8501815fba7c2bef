package ml

import (
	"errors"
	"math"
	"testing"
)

func TestCholeskySolve(t *testing.T) {
	a := []float64{4, 2, 0, 2, 5, 1, 0, 1, 3}
	b := []float64{2, 3, 4}
	x, inv, err := CholeskySolve(a, 3, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s := 0.0
		for j := range 3 {
			s += a[i*3+j] * x[j]
			e := 0.0
			for k := range 3 {
				e += a[i*3+k] * inv[k*3+j]
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(e-want) > 1e-12 {
				t.Fatalf("(A·A⁻¹)[%d,%d] = %g", i, j, e)
			}
		}
		if math.Abs(s-b[i]) > 1e-12 {
			t.Fatalf("(A·x)[%d] = %g, want %g", i, s, b[i])
		}
	}
	if _, _, err := CholeskySolve([]float64{1, 1, 1, 1}, 2, []float64{1, 2}); !errors.Is(err, ErrSingular) {
		t.Fatalf("singular matrix: err = %v, want ErrSingular", err)
	}
}
