package linear_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/linear"
)

// Least squares on y = 2x + 1 by the normal equations.
func ExampleLinearRegression() {
	x := []float64{0, 1, 2, 3, 4}
	y := []float64{1, 3, 5, 7, 9}
	f, _ := data.NewFrame(data.NewVectorColumn("features", 1, x, nil, nil), data.NewColumn("label", y, nil))
	m, err := linear.NewLinearRegression().Fit(ml.Local(f))
	if err != nil {
		fmt.Println(err)
		return
	}
	lm := m.(*linear.LinearRegressionModel)
	fmt.Printf("y = %.3f·x + %.3f (%s, R² = %.3f)\n", lm.Coefficients[0], lm.Intercept, lm.Solver, lm.R2)
	// Output: y = 2.000·x + 1.000 (normal, R² = 1.000)
}

// A binomial logistic regression on one feature; the model adds
// rawPrediction, probability and prediction columns.
func ExampleLogisticRegression() {
	x := []float64{-3, -2, -1, -0.5, 0.5, 1, 2, 3}
	y := []float64{0, 0, 0, 1, 0, 1, 1, 1}
	f, _ := data.NewFrame(data.NewVectorColumn("features", 1, x, nil, nil), data.NewColumn("label", y, nil))
	e := linear.NewLogisticRegression()
	e.RegParam, e.Tol = 0.1, 1e-12
	m, err := e.Fit(ml.Local(f))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := m.Transform(f)
	pred, _ := ml.Numbers(out, "prediction")
	prob := out.Col("probability").(*data.VectorColumn).Float64s()
	fmt.Println("predictions:", pred)
	fmt.Printf("P(1 | x = 3) = %.2f\n", prob[2*7+1])
	// Output:
	// predictions: [0 0 0 0 1 1 1 1]
	// P(1 | x = 3) = 0.86
}
