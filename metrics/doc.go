// Package metrics computes evaluation metrics on plain slices, for the
// training loop, classic models and serving alike. It imports nothing of
// fathom.
//
// Task says what a model predicts (Classification or Regression) and
// picks the headline metric. Metrics is the summary of a pass over a data
// set (mean loss, accuracy or RMSE, number of examples), with Get by name
// and JSON that leaves out the metrics that do not apply. Accumulator
// builds it batch by batch from sums (loss, correct predictions, squared
// error) that shards of the data combine with Merge, as a data-parallel
// all-reduce does.
//
// The functions follow scikit-learn's definitions, and the tests pin them
// to its numbers:
//
//   - classification: Accuracy, ConfusionMatrix, PerClass (precision,
//     recall, F1 and support per class) and Macro (their unweighted mean),
//     LogLoss, ROCAUC (binary; tied scores form one threshold, the area is
//     summed by the trapezoid rule);
//   - regression: RMSE, MAE, R2.
//
// For example:
//
//	cm, err := metrics.ConfusionMatrix(pred, truth, 3)
//	macro := metrics.Macro(metrics.PerClass(cm))
//	fmt.Printf("macro F1 %.3f\n", macro.F1)
//
//	var acc metrics.Accumulator // Task: Classification
//	acc.AddLoss(meanLoss, n)
//	acc.AddLogits(logits, classes, labels)
//	fmt.Println(acc.Metrics().Accuracy)
package metrics
