// Package ml is classic machine learning with Spark ML's shape and Go's
// idioms: an Estimator fits on a data.Frame and returns a Model; a Model
// (a Transformer) maps a frame to a frame with new columns; a Pipeline
// chains stages and is itself an Estimator; an Evaluator scores a frame of
// predictions.
//
// # Parameters
//
// Every estimator is a struct whose exported fields are its parameters,
// with Spark ML's names as JSON/YAML tags (regParam, maxIter, ...). Its
// constructor (linear.NewLogisticRegression, ...) fills in the defaults;
// Fit validates them and says which one is wrong. Column parameters default
// to Spark's names: "features", "label", "prediction", "probability",
// "rawPrediction".
//
// # Distribution
//
// Fit takes a Data: this process's rows and the Comm that joins it to the
// processes holding the other rows. With Local (one process) the Comm is
// Single. Under `fathom run -n N` every rank calls Fit with its own share
// of the rows and a Comm over the job's group (Group); losses, gradients
// and statistics are summed with an all-reduce — what MLlib does with
// treeAggregate — and every rank ends with the same model, equal to the
// single-process one up to the rounding of a differently ordered sum.
//
// # Persistence
//
// SaveModel writes a fitted model (a PipelineModel included) as one
// safetensors file: the arrays as F64 tensors, everything else as JSON in
// the header's metadata. LoadModel reads it back through the registry that
// each model type joins with RegisterModel.
package ml
