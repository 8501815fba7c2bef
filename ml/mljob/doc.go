// Package mljob is the YAML config behind `fathom ml fit`: which data to
// read, the pipeline of stages with their params, the evaluators, an
// optional grid search, and where the outputs go.
//
//	data: {source: iris, testFraction: 0.3, seed: 1}
//	pipeline:
//	  - {type: StringIndexer, params: {inputCol: species, outputCol: label}}
//	  - type: VectorAssembler
//	    params: {inputCols: [sepal_length, sepal_width, petal_length, petal_width]}
//	  - {type: LogisticRegression, name: lr}
//	evaluator: {type: MulticlassClassificationEvaluator, params: {metricName: accuracy}}
//	tuning:
//	  crossValidator: {numFolds: 3, parallelism: 2}
//	  grid: {lr.regParam: [0.1, 0.01]}
//	output: {dir: runs/iris}
//
// # Strict configs
//
// Every key is checked against the Go types, stage and evaluator params
// against the struct of their registered type (ml.NewStage,
// ml.NewEvaluator), decoded over its defaults: an unknown key or a bad
// value is a ConfigError naming the file, the line and the key. Overrides
// ("pipeline.2.params.regParam=0.1", as `--set` gives them) edit the YAML
// tree before the checks. The rules are train/job's (this package cannot
// import it: both sit on floor 6), kept in yaml.go.
//
// # Types
//
// Stage, model and evaluator types register themselves from their
// packages' init functions; stages.go is the one file that imports those
// packages for their registrations.
//
// # Running
//
// Run reads this rank's share of the data (ReadFrame: its contiguous run
// of Parquet parts, or its contiguous range of rows), holds out the test
// rows (HoldOut: a hash of the seed and the global row index), fits the
// pipeline — or searches the grid with package tune and refits the best
// point — evaluates, and writes model.safetensors and metrics.json from
// rank 0. Comm is the ml.Comm of the job `fathom run -n N` starts, joined
// with package comm/join.
// WritePredictions writes `fathom ml predict`'s CSV or Parquet output.
package mljob
