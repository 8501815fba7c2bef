package bayes_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/bayes"
)

// A multinomial model of word counts: two documents about each of two
// topics.
func ExampleNaiveBayes() {
	counts := []float64{
		3, 0, 1, // topic 0
		2, 1, 0, // topic 0
		0, 3, 2, // topic 1
		1, 2, 3, // topic 1
	}
	f, _ := data.NewFrame(
		data.NewVectorColumn("features", 3, counts, nil, nil),
		data.NewColumn("label", []float64{0, 0, 1, 1}, nil))
	m, err := bayes.NewNaiveBayes().Fit(ml.Local(f))
	if err != nil {
		fmt.Println(err)
		return
	}
	test, _ := data.NewFrame(data.NewVectorColumn("features", 3, []float64{4, 0, 0, 0, 1, 4}, nil, nil))
	out, _ := m.Transform(test)
	pred, _ := out.Float64s("prediction")
	prob, _ := out.Vectors("probability")
	for i := range pred {
		fmt.Printf("class %g, probability %.4f\n", pred[i], prob.At(i, int(pred[i])))
	}
	// Output:
	// class 0, probability 0.9968
	// class 1, probability 0.9783
}
