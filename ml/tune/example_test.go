package tune

import (
	"fmt"

	"github.com/fathom-ml/fathom/ml"
)

// A cross-validated choice of the ridge penalty of a stand-in estimator
// (any ml.Estimator works the same way).
func ExampleCrossValidator() {
	grid := NewParamGridBuilder().
		AddGrid(Axis("regParam", func(e ml.Estimator, v float64) error {
			e.(*ridge).RegParam = v
			return nil
		}, 10, 1, 0.01)).
		Build()
	cv := NewCrossValidator(&ridge{}, grid, rmse{})
	cv.NumFolds, cv.Parallelism = 5, 2
	m, err := cv.Fit(ml.Local(regression(200)))
	if err != nil {
		fmt.Println(err)
		return
	}
	vm := m.(*ValidatorModel)
	fmt.Println("best:", vm.BestParams)
	fmt.Println("points:", len(vm.AvgMetrics), "folds:", len(vm.FoldMetrics))
	// Output:
	// best: regParam=0.01
	// points: 3 folds: 5
}
