// Package tune is Spark ML's model selection: a grid of parameter values
// (ParamGridBuilder), and two validators that fit the estimator at every
// grid point and keep the best — CrossValidator (k folds) and
// TrainValidationSplit (one held-out split) — each returning a
// ValidatorModel whose BestModel is the best point refit on all rows.
//
// # Typed grids
//
// A grid axis is a name, a typed setter and its values; no parameter is
// looked up by a string key:
//
//	grid := tune.NewParamGridBuilder().
//		AddGrid(tune.Axis("regParam", func(e ml.Estimator, v float64) error {
//			e.(*linear.LogisticRegression).RegParam = v
//			return nil
//		}, 0.1, 0.01)).
//		AddGrid(tune.Axis("maxIter", func(e ml.Estimator, v int) error {
//			e.(*linear.LogisticRegression).MaxIter = v
//			return nil
//		}, 50, 100)).
//		Build()
//	cv := tune.NewCrossValidator(linear.NewLogisticRegression(), grid, eval.NewMulticlassClassificationEvaluator())
//	m, err := cv.Fit(ml.Local(frame))
//	best := m.(*tune.ValidatorModel).BestModel
//
// Each grid point applies its settings to a Copy of the estimator
// (ParamMap.Apply); the points come in Spark's order, the first axis
// varying fastest. For a Pipeline the setter reaches the stage:
// e.(*ml.Pipeline).Stages[2].(*linear.LogisticRegression).
//
// # Folds
//
// A row's fold (or, for TrainValidationSplit, its side of the split) is a
// hash of the seed and the row's global index — its position in the data
// set, every rank's rows in rank order. Spark draws the folds at random
// with the seed; a hash gives the same draw whatever the number of ranks
// and whatever Parallelism, so results are equal in one process and under
// `fathom run -n N`.
//
// # Parallelism and distribution
//
// Parallelism fits that many (fold, point) models at once on goroutines.
// Under `fathom run -n N` (a Data whose Comm has N ranks) the Distribution
// field chooses between:
//
//   - DataParallel (default): each rank holds its share of the rows; every
//     fit and evaluation is a distributed one (sums all-reduced), and the
//     ranks walk the (fold, point) list in the same order, one fit at a
//     time. Use it for data too large for one process.
//   - Spread: each rank holds all the rows (small data, read whole); rank r
//     fits tasks r, r+N, ... of the list (Parallelism at a time, each a
//     local fit), the metrics are all-reduced so every rank chooses the
//     same point, and the best point is refit data-parallel, each rank on
//     a contiguous 1/N of the rows. Use it for many cheap fits.
//
// Either way every rank returns the same ValidatorModel; its metrics
// equal the single-process ones (exactly under Spread, to rounding under
// DataParallel) and its best model the single-process one within the
// algorithms' distributed tolerance.
//
// Sources: Spark ML's tuning guide (spark.apache.org/docs/latest/ml-tuning.html)
// and its CrossValidator, TrainValidationSplit and ParamGridBuilder;
// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014) for the row hash.
package tune
