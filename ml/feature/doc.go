// Package feature holds Spark ML's feature transformers on data.Frame:
// the stages that turn raw columns into the float64 feature vectors the
// estimators of package ml fit on.
//
// # Stages
//
// Transformers that need no fitting are ml.Models (they save and load
// like fitted models):
//
//   - VectorAssembler concatenates numeric, bool and vector columns into
//     one vector column (handleInvalid "error", "skip" or "keep").
//   - IndexToString maps label indices back to strings.
//   - Normalizer scales rows to unit p-norm; Binarizer thresholds;
//     Bucketizer maps values to buckets between splits;
//     PolynomialExpansion expands vectors into monomials (Spark's order).
//
// Estimators, each with its fitted Model:
//
//   - StandardScaler (StandardScalerModel): (x − mean)/std, Spark's
//     sample std; a constant element scales to 0.
//   - MinMaxScaler (MinMaxScalerModel): to [min, max]; a constant element
//     becomes the middle of the range.
//   - MaxAbsScaler (MaxAbsScalerModel): x / max|x|.
//   - StringIndexer (StringIndexerModel): values to indices by frequency
//     or alphabet, ties alphabetical (Spark 3); numbers are indexed by
//     their Java string form as Spark casts them.
//   - OneHotEncoder (OneHotEncoderModel): indices to one-hot vectors,
//     dropLast by default. The vectors are dense (data.Frame has no
//     sparse vectors).
//   - Imputer (ImputerModel): nulls, NaN and missingValue replaced by the
//     mean, the median or the mode.
//   - QuantileDiscretizer (a Bucketizer): buckets of about equal counts
//     from the exact quantiles.
//
// Parameters are exported struct fields named and defaulted as Spark's
// (json and yaml tags carry Spark's names; NewX returns Spark's defaults),
// so a config decodes over the defaults. Every stage is registered by its
// Spark class name with ml.RegisterStage and its model with
// ml.RegisterModel.
//
// # Distributed fitting
//
// Fitting on ml.Data spread over the ranks of a Comm gives every rank the
// model of the whole data set: sums, minima and maxima are all-reduced
// (StandardScaler all-reduces the sums, then the squared deviations from
// the global mean, a two-pass variance); StringIndexer gathers every
// rank's category counts (AllGatherBytes) and orders the merged counts;
// Imputer's median gathers the present values of every rank (8 bytes a
// value: fine for a column of millions, not billions), its mode the
// distinct values and their counts.
//
// # Differences from Spark and scikit-learn
//
//   - Imputer's median and QuantileDiscretizer's quantiles are exact: the
//     value of rank ⌈q·n⌉ (what Spark's approxQuantile returns without
//     approximation error; its default relativeError 0.001 may pick a
//     neighbouring value on large data; scikit-learn's median averages
//     the two middle values when n is even).
//   - StandardScaler divides by the sample standard deviation as Spark
//     (scikit-learn: the population one).
//   - MinMaxScaler maps a constant element to 0.5·(min+max) as Spark
//     (scikit-learn: min).
//   - OneHotEncoder rejects a column with one category under dropLast
//     (its vectors would be empty, which a Frame cannot hold).
//   - Nominal attribute metadata: StringIndexerModel records an output
//     column's labels in the frame's metadata (LabelsMetadataKey), which
//     IndexToString reads; the labels are also on the model (Labels,
//     LabelsArray).
//
// Sources: the Spark ML feature documentation
// (https://spark.apache.org/docs/latest/ml-features.html) and the Scala
// docs of each class for the parameters, defaults and edge cases;
// scikit-learn's preprocessing and impute modules for the reference
// numbers in the tests (testdata/peer_sklearn.py).
package feature
