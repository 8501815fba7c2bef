// Package data reads data sets into memory and prepares them for training.
//
// Every reader returns a [Table]: a dense row-major float32 feature matrix
// (Rows × Cols) with optional targets, either class indices (Labels, with the
// class names in Classes) or numeric values (Y). The package does not depend on
// the tensor package; the Dataset/Loader layer turns tables into tensors.
//
// # Readers
//
//   - IDX, the format of MNIST and Fashion-MNIST: [ReadIDX] for any IDX file,
//     plain or gzip-compressed (recognised by magic bytes), and [LoadMNIST] /
//     [LoadFashionMNIST] for the standard train/t10k file pairs. Fashion-MNIST
//     is read from /usr/share/datasets/fashion-mnist (Debian's
//     dataset-fashion-mnist) unless FATHOM_DATA names another directory.
//   - CSV: [ReadCSV] and [ParseCSV] read a whole file; [CSVScanner] reads a big
//     one in batches. [CSVOptions] choose the delimiter, header, label column
//     (class or number), feature columns, the tokens that mean "missing" and
//     whether missing values are an error or replaced by the column mean.
//   - Parquet, through Apache Arrow: [ReadParquet], [ReadParquetDir] for a
//     directory of part-*.parquet partitions, and [WriteParquet]. Features
//     are numeric or boolean columns, or lists of numbers (fixed-size or not,
//     as embeddings and images are stored), which become one Table column
//     per element, named v[0], v[1], …; selecting those names reads the
//     list column whole.
//   - Iris: [Iris] returns Fisher's Iris data, embedded in the binary.
//
// Errors about input name the file, the line or row (1-based) and the column,
// for example:
//
//	iris.csv:17: column "sepal_width" (2): cannot parse "abc" as a number
//
// # Transforms
//
// [FitStandardizer] and [FitMinMax] learn per-column statistics on training
// data and apply them to any table; their exported fields can be stored with a
// model. [Split] divides a table into train/validation/test parts, optionally
// stratified by class, and [Table.Shuffled] permutes rows; both take a seed and
// give the same result for the same seed on every platform and Go release.
//
// # Example
//
//	iris, err := data.Iris()
//	if err != nil { ... }
//	parts, err := data.Split(iris, data.SplitOptions{Train: 0.8, Seed: 1, Stratify: true})
//	scaler := data.FitStandardizer(parts.Train)
//	scaler.Apply(parts.Train)
//	scaler.Apply(parts.Test)
//	// parts.Train.X is 120×4, parts.Train.Labels holds indices into
//	// parts.Train.Classes = [setosa versicolor virginica].
package data
