package mlp_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mlp"
)

// XOR is not linearly separable; one hidden layer of sigmoid units learns
// it.
func Example() {
	x := []float64{0, 0, 0, 1, 1, 0, 1, 1}
	y := []float64{0, 1, 1, 0}
	frame, err := data.NewFrame(
		data.NewVectorColumn("features", 2, x, nil, nil),
		data.NewColumn("label", y, nil))
	if err != nil {
		panic(err)
	}

	e := mlp.NewMultilayerPerceptronClassifier()
	e.Layers = []int{2, 4, 2} // 2 inputs, 4 hidden units, 2 classes
	e.Seed = 1
	m, err := e.Fit(ml.Local(frame))
	if err != nil {
		panic(err)
	}
	out, err := m.Transform(frame)
	if err != nil {
		panic(err)
	}
	pred, _ := ml.Numbers(out, "prediction")
	prob := out.Col("probability").(*data.VectorColumn)
	for i := range pred {
		fmt.Printf("%v → %v (p = %.2f)\n", x[2*i:2*i+2], pred[i], prob.At(i, int(pred[i])))
	}
	// Output:
	// [0 0] → 0 (p = 1.00)
	// [0 1] → 1 (p = 1.00)
	// [1 0] → 1 (p = 1.00)
	// [1 1] → 0 (p = 1.00)
}
