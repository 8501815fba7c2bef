package eval_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/eval"
)

// Scoring predictions with each evaluator on one process (ml.Single).
func Example() {
	f, _ := data.NewFrame(
		data.NewColumn(ml.LabelCol, []float64{1, 0, 1, 0, 1}, nil),
		data.NewColumn(ml.PredictionCol, []float64{1, 0, 0, 0, 1}, nil),
		ml.VectorOut(ml.RawPredictionCol, 2, []float64{-2, 2, 1, -1, 0.5, -0.5, -1, 1, -3, 3}),
	)
	bin := eval.NewBinaryClassificationEvaluator()
	auc, _ := bin.Evaluate(f, ml.Single)
	multi := eval.NewMulticlassClassificationEvaluator()
	multi.MetricName = eval.Accuracy
	acc, _ := multi.Evaluate(f, ml.Single)
	reg := eval.NewRegressionEvaluator()
	rmse, _ := reg.Evaluate(f, ml.Single)
	fmt.Printf("areaUnderROC %.4f, accuracy %.2f, rmse %.4f\n", auc, acc, rmse)
	// Output:
	// areaUnderROC 0.8333, accuracy 0.80, rmse 0.4472
}
