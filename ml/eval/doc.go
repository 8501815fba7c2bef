// Package eval holds Spark ML's evaluators: each scores a frame of
// predictions with one metric and implements ml.Evaluator, so that tuning
// (CrossValidator, TrainValidationSplit) and `fathom ml eval` can use any
// of them.
//
//   - BinaryClassificationEvaluator: areaUnderROC (default), areaUnderPR.
//   - MulticlassClassificationEvaluator: f1 (default, weighted as Spark),
//     accuracy, weightedPrecision, weightedRecall, weightedTruePositiveRate,
//     weightedFalsePositiveRate, weightedFMeasure, the ...ByLabel rates,
//     logLoss, hammingLoss.
//   - RegressionEvaluator: rmse (default), mse, mae, r2, var.
//
// Each is a struct of Spark's parameters (json and yaml tags with Spark's
// names) and a NewX constructor with Spark's defaults; importing the
// package registers each under its Spark class name, for ml.NewEvaluator.
//
// # Distributed evaluation
//
// Evaluate(f, c) scores this rank's rows of f and combines the statistics
// over c, so that every rank returns the score of the whole data set: the
// multiclass confusion matrix and the regression sums are all-reduced
// (one all-reduce each); the binary areas need every score in order, so
// the (score, label, weight) triples are gathered (AllGatherBytes, 24
// bytes a row) and every rank computes the same area. The scores equal
// the single-process ones within rounding (the tests hold them to 1e-12
// on 1 to 4 ranks).
//
// # Differences from scikit-learn
//
//   - areaUnderPR is Spark's trapezoidal area over the PR curve with a
//     first point (0, precision at the top score), not scikit-learn's
//     average_precision_score (a step sum Σ (Rₖ − Rₖ₋₁)·Pₖ): on scores
//     0.9, 0.8, 0.7, 0.6 with labels 1, 0, 1, 0 Spark gives 19/24,
//     scikit-learn 5/6.
//   - BinaryClassificationEvaluator down-samples curves of at least
//     2·numBins distinct scores (numBins 1000 by default) as Spark does;
//     set numBins 0 for the exact area on large data.
//   - The weighted r2 follows Spark's formula (SStot from the unbiased
//     weighted variance times W − 1), which is scikit-learn's
//     r2_score(sample_weight) only when every weight is 1.
//   - Labels must be class indices (0/1 for the binary evaluator); a
//     label set lacking a class the metric needs (a positive and a
//     negative for areaUnderROC) is an error, where Spark returns a
//     number.
//
// Sources: Spark's BinaryClassificationMetrics, MulticlassMetrics and
// RegressionMetrics (org.apache.spark.mllib.evaluation) and the Spark ML
// evaluator documentation
// (https://spark.apache.org/docs/latest/mllib-evaluation-metrics.html);
// the tests pin scikit-learn's numbers (testdata/peer_sklearn.py).
package eval
