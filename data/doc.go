// Package data reads data sets into memory and prepares them for training.
//
// It holds data in two shapes:
//
//   - a [Frame], columns of typed values with missing values, as classic
//     machine learning needs them (string categories to index, ids for
//     recommenders, vectors to assemble);
//   - a [Table], a dense row-major float32 feature matrix (Rows × Cols) with
//     optional targets, either class indices (Labels, with the class names
//     in Classes) or numeric values (Y), as neural networks need them.
//
// [Frame.Table] turns the first into the second. The Dataset/Loader layer
// turns tables into tensors and mini-batches; a [Sampler] decides which rows
// each epoch (and each rank of a data-parallel job) visits.
//
// # Frames
//
// A Frame is immutable: [Frame.Select], [Frame.Drop], [Frame.With] (add or
// replace a column), [Frame.Rename], [Frame.Take] and [Frame.Slice] return new
// frames that share the unchanged columns. Column kinds are [Float64],
// [Float32], [Int64], [String], [Bool] (a [ScalarColumn] each, built with
// [NewColumn]) and [Vector], a fixed-width list of float64 or float32 per row
// ([VectorColumn]); every column has a validity mask, nil when nothing is
// missing. Typed accessors ([Frame.Float64s], [Frame.Strings], …) return the
// values or an error wrapping [ErrKind].
//
// [ReadCSVFrame] infers column types (a column of numbers is Float64, any
// other is String; CSVFrameOptions.Types fixes some) and reads missing
// cells as nulls. [ReadParquetFrame] maps the Parquet schema: floats,
// integers (as Int64), booleans, UTF-8 strings and dictionaries of them, and
// lists of numbers, which become one Vector column. It reads a file or a
// directory of partitions.
//
// [ReadParquet] and [ReadParquetDir] are such a Frame read (of the columns
// they need) followed by Frame.Table. [ReadCSV] keeps a direct path, which
// parses float32 values straight into the Table and needs a third of the
// memory of a Frame read and its conversion (see the benchmarks); the tests
// check that both give the same tables.
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
// # Samplers
//
// A [Sampler] yields the rows of an epoch, deterministically from its seed and
// the epoch number; LoaderOptions.Sampler plugs one into a [Loader]:
//
//   - [SequentialSampler]: 0, 1, …, N−1;
//   - [RandomSampler]: a fresh permutation per epoch, the order of a Loader
//     with Shuffle (bit for bit);
//   - [DistributedSampler]: PyTorch's DistributedSampler. Every rank draws the
//     same global order and takes every Ranks-th row from its rank on; an
//     uneven tail is padded by wrapping around (DropLast false) or dropped;
//   - [DistributedBatchSampler]: shards by global batch. Rank r takes the r-th
//     part of every global batch, so the steps of a data-parallel job cover the
//     same global batches whatever the number of ranks. It is a
//     [BatchSampler]: the Loader yields its batches, including a short or
//     empty last one, so every rank takes the same number of steps.
//
// # Examples
//
// A Frame, indexed by hand and turned into a Table:
//
//	f, err := data.ReadCSVFrame("ratings.csv", data.CSVFrameOptions{})
//	// f: Frame 1000×4 [user string, item string, rating float64, comment string]
//	f, err = f.Drop("comment")
//	users, err := f.Strings("user")
//	ids := make([]int64, len(users))
//	// ... fill ids from a user → index map ...
//	f, err = f.With(data.NewColumn("user_id", ids, f.Col("user").Valid()))
//	t, err := f.Table(data.TableOptions{Features: []string{"user_id"}, Label: "rating", LabelKind: data.LabelNumeric})
//
// Rank 2 of a 4-rank data-parallel job, global batch 256:
//
//	s, err := data.NewDistributedBatchSampler(ds.Len(), 256, data.DistributedOptions{Rank: 2, Ranks: 4, Shuffle: true, Seed: 1})
//	loader, err := data.NewLoader(ds, data.LoaderOptions{Sampler: s}) // batches of up to 64 rows
//
// Iris, split and standardized:
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
