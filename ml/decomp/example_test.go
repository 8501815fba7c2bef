package decomp_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/decomp"
)

func ExampleComputeSVD() {
	x := []float64{
		3, 0,
		0, 4,
		0, 0,
	}
	f, _ := data.NewFrame(data.NewVectorColumn("m", 2, x, nil, nil))
	s, err := decomp.ComputeSVD(ml.Local(f), "m", 2, decomp.SVDOptions{ComputeU: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("S %.3g\nV %.3g\nU %.3g\n", s.S, s.V, s.U)
	// Output:
	// S [4 3]
	// V [0 1 1 0]
	// U [0 1 1 0 0 0]
}

func ExamplePCA() {
	// points along the line y = 2x, a little noise across it
	x := []float64{0, 0, 1, 2.1, 2, 3.9, 3, 6.1, 4, 7.9}
	f, _ := data.NewFrame(data.NewVectorColumn(ml.FeaturesCol, 2, x, nil, nil))
	p := decomp.NewPCA()
	p.K = 1
	m, err := p.Fit(ml.Local(f))
	if err != nil {
		panic(err)
	}
	pm := m.(*decomp.PCAModel)
	fmt.Printf("component %.3f, explains %.4f of the variance\n", pm.PC, pm.ExplainedVariance)
	// Output:
	// component [0.451 0.893], explains [0.9999] of the variance
}
