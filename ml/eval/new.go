package eval

import "github.com/fathom-ml/fathom/ml"

// init registers the evaluators with ml.RegisterEvaluator under Spark's
// class names, so that configs (and ml.NewEvaluator) find them with their
// defaults to decode settings over.
func init() {
	ml.RegisterEvaluator("BinaryClassificationEvaluator", func() ml.Evaluator { return NewBinaryClassificationEvaluator() })
	ml.RegisterEvaluator("MulticlassClassificationEvaluator", func() ml.Evaluator { return NewMulticlassClassificationEvaluator() })
	ml.RegisterEvaluator("RegressionEvaluator", func() ml.Evaluator { return NewRegressionEvaluator() })
}
