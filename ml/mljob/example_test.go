package mljob_test

import (
	"fmt"

	"github.com/fathom-ml/fathom/ml/mljob"
)

// A config fit in one process: Gaussian naive Bayes on the embedded Iris
// data, scored on the 30% of rows held out.
func ExampleRun() {
	cfg, err := mljob.ParseConfig([]byte(`
data: {source: iris, testFraction: 0.3, seed: 1}
pipeline:
  - {type: StringIndexer, params: {inputCol: species, outputCol: label}}
  - type: VectorAssembler
    params: {inputCols: [sepal_length, sepal_width, petal_length, petal_width], outputCol: features}
  - {type: NaiveBayes, params: {modelType: gaussian}}
evaluator: {type: MulticlassClassificationEvaluator, params: {metricName: accuracy}}
`), "iris-nb.yaml", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := mljob.Run(cfg, mljob.Options{NoSave: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d training rows, %d test rows, accuracy %.4f\n", res.TrainRows, res.TestRows, res.Metrics["accuracy"])
	// Output:
	// 93 training rows, 57 test rows, accuracy 0.9298
}

// Errors name the file, the line and the key.
func ExampleParseConfig() {
	_, err := mljob.ParseConfig([]byte(`
data: {source: iris}
pipeline:
  - type: NaiveBayes
    params: {modelType: gaussian, smooth: 1}
evaluator: {type: MulticlassClassificationEvaluator}
`), "iris-nb.yaml", nil)
	fmt.Println(err)
	// Output:
	// iris-nb.yaml:5: unknown key "smooth" in pipeline[0].params (NaiveBayes) (known keys: featuresCol, labelCol, predictionCol, probabilityCol, rawPredictionCol, weightCol, modelType, smoothing, thresholds)
}
