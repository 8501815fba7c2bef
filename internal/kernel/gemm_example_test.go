package kernel

import "fmt"

// C = A·B for a 2×3 by 3×2 product, then the update C = 2·A·B + C.
func ExampleSgemm() {
	a := []float32{
		1, 2, 3,
		4, 5, 6,
	}
	b := []float32{
		1, 0,
		0, 1,
		1, 1,
	}
	c := make([]float32, 4)
	Sgemm(false, false, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2)
	fmt.Println(c)
	Sgemm(false, false, 2, 2, 3, 2, a, 3, b, 2, 1, c, 2)
	fmt.Println(c)
	// Output:
	// [4 5 10 11]
	// [12 15 30 33]
}

// A weight gradient dW = gᵀ·x without materializing gᵀ: g is stored 3×2
// (batch × out), x is 3×2 (batch × in).
func ExampleDgemm_transposed() {
	g := []float64{1, 0, 0, 1, 1, 1}
	x := []float64{1, 2, 3, 4, 5, 6}
	dw := make([]float64, 4)
	Dgemm(true, false, 2, 2, 3, 1, g, 2, x, 2, 0, dw, 2)
	fmt.Println(dw)
	// Output:
	// [6 8 8 10]
}
