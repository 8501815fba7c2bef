package glm_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/glm"
)

// A Poisson regression of counts on one feature, with its summary.
func ExampleGeneralizedLinearRegression() {
	x := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	counts := []float64{1, 1, 2, 4, 4, 7, 11, 16}
	f, _ := data.NewFrame(
		data.NewVectorColumn("features", 1, x, nil, nil),
		data.NewColumn("label", counts, nil))
	g := glm.NewGeneralizedLinearRegression()
	g.Family = glm.Poisson // canonical link: log
	m, err := g.Fit(ml.Local(f))
	if err != nil {
		fmt.Println(err)
		return
	}
	gm := m.(*glm.GeneralizedLinearRegressionModel)
	s := gm.Summary
	fmt.Printf("log μ = %.4f + %.4f x\n", gm.Intercept, gm.Coefficients[0])
	fmt.Printf("standard errors %.4f (x), %.4f (intercept)\n", s.CoefficientStandardErrors[0], s.CoefficientStandardErrors[1])
	fmt.Printf("deviance %.4f on %d degrees of freedom (null %.4f), AIC %.3f, %d iterations\n",
		s.Deviance, s.ResidualDegreeOfFreedom, s.NullDeviance, s.AIC, s.NumIterations)
	// Output:
	// log μ = -0.1059 + 0.4125 x
	// standard errors 0.0818 (x), 0.4616 (intercept)
	// deviance 0.4716 on 6 degrees of freedom (null 32.7462), AIC 30.296, 4 iterations
}
