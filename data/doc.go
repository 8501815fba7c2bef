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
// integers (as Int64), booleans, UTF-8 strings and dictionaries of them,
// decimals, dates, timestamps and times (as Float64, see below), and lists
// of numbers, which become one Vector column. It reads a file or a
// partitioned directory (see below).
//
// [ReadParquet] and [ReadParquetDir] are such a Frame read (of the columns
// they need) followed by Frame.Table. [ReadCSV] keeps a direct path, which
// parses float32 values straight into the Table and needs a third of the
// memory of a Frame read and its conversion (see the benchmarks); the tests
// check that both give the same tables.
//
// Files too large to hold are streamed: [OpenBatches] yields Frames of a
// fixed number of rows (Parquet and CSV), and [OpenParquetMatrix] reads the
// float32 feature columns of a Parquet file (or one list of float32)
// straight from the pages into float32 batches, with recycled page buffers
// and no record batch in between: the input path of batch inference
// (package infer). [ParquetMatrix.Next] gives row-major batches (the
// columns transposed 16 at a time; pages of a dictionary of at most 256
// values kept as byte indices, looked up as they are transposed, see
// [ParquetMatrix.RowsFromIndices]); [ParquetMatrix.NextColumns] gives the
// batch column-major, the layout a GEMM takes as a transposed operand, with
// no transpose at all: a page that holds only values of the batch's rows is
// decompressed (or its dictionary indices decoded) straight into the
// caller's buffer. In a mapped file each column chunk's pages are walked
// by internal/parquetpage (plain slices, no arrow-go): the page headers
// are decoded from the Thrift compact
// protocol (parquet-format's parquet.thrift, Apache Thrift's compact
// protocol specification), unknown fields skipped, every size checked
// against the chunk before any allocation, and pages decompressed from the
// mapping with arrow-go's codecs (Snappy by klauspost/compress directly).
// Values are PLAIN or dictionary-encoded (RLE_DICTIONARY or
// PLAIN_DICTIONARY after a PLAIN dictionary page, as PyArrow and Spark
// write by default, a chunk falling back to PLAIN midway read page by
// page), data pages v1 or v2, definition levels in the RLE/bit-packed
// hybrid (Parquet format specification, "Encodings"). The one list column
// of the list layout is read from its pages too: its repetition and
// definition levels are checked run by run (a row start every Width
// values, nothing null or empty), and its values, which are then the
// row-major batch itself, go straight into the caller's buffer; any other
// list is ErrNotMatrix. Files not mapped go through arrow-go's page reader
// with the same decoding (scalar columns) or its column readers; encrypted
// chunks and other encodings through the column readers. A bad page is an
// error naming the file, column, row group and page. The walker is to be
// kept only where it beats arrow-go's page reader (docs/inference.md has
// the measurement, the rule and what it leaves open).
//
// One writer writes Parquet: [ParquetFrameWriter] streams Frames, a row
// group a batch (or RowGroupRows); [WriteParquetFrame] writes a whole
// Frame to a path through a temporary file renamed into place, and
// [WriteParquet] a Table the same way.
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
//     partitioned directory (see below), and [WriteParquet]. Features are
//     numeric or boolean columns (decimals, dates and timestamps count as
//     numbers), or lists of numbers (fixed-size or not, as embeddings and
//     images are stored), which become one Table column per element, named
//     v[0], v[1], …; selecting those names reads the list column whole.
//   - Iris: [Iris] returns Fisher's Iris data, embedded in the binary.
//
// Hostile input is bounded: what reading one IDX or Parquet file may
// allocate is checked against [MaxInputBytes] (FATHOM_MAX_INPUT_BYTES,
// default 4 GiB) from its header or footer before anything is allocated,
// and NaN and infinities are refused in features and numeric labels (see
// docs/reliability.md).
//
// Errors about input name the file, the line or row (1-based) and the column,
// for example:
//
//	iris.csv:17: column "sepal_width" (2): cannot parse "abc" as a number
//
// # Parquet data sets
//
// A directory is read as Spark, PyArrow and SQL engines write data sets:
// every file named *.parquet, *.parq or *.pq in it or below it, whatever
// the writer's naming, in the byte order of their paths. Names starting
// with "_" or "." are skipped, files and directories alike, as those
// engines skip them: _SUCCESS, _metadata and _common_metadata, Hadoop's
// .crc checksums, the _temporary and .spark-staging directories of
// unfinished jobs. A directory without Parquet files is an error that says
// which other files it holds.
//
// Directories named key=value (Hive-style partitioning, as written by
// Spark's partitionBy, PyArrow's partition_cols, Hive, Trino, DuckDB)
// give every row below them a column named key, after the files' own
// columns, in directory order:
//
//	sales/year=2023/country=US/part-00000-….snappy.parquet
//	sales/year=2024/country=__HIVE_DEFAULT_PARTITION__/part-00001-….parquet
//	// columns: [ …the files' columns…, year int64, country string ]
//
// A key's column is Int64 if every value is a base-10 integer, Float64 if
// every value is a decimal number (not NaN, Inf or hexadecimal), and String
// otherwise; __HIVE_DEFAULT_PARTITION__ or an empty value is null, and %XX
// escapes (Spark writes "/" as %2F, "=" as %3D, ":" as %3A) are decoded.
// Keys are columns like any other: features, the label, ignored, selected.
// Every file must sit under the same keys, and a key may not also be a
// column of the files. Directory levels that are not key=value add nothing.
//
// Parquet types that hold numbers under another name are read as Float64
// (and are numeric features and labels):
//
//   - DECIMAL, of any physical type (INT32, INT64, FIXED_LEN_BYTE_ARRAY,
//     BYTE_ARRAY), as SQL engines write numeric(p,s): the nearest float64
//     to the value. That is exact for integers up to 2^53 and keeps about
//     15 significant digits; numeric(38,s) values beyond that lose the rest
//     (a float32 Table feature keeps about 7 digits);
//   - DATE: days since 1970-01-01, as Spark's unix_date;
//   - TIMESTAMP (milli-, micro-, nanoseconds, and the legacy INT96 of
//     Spark, Hive and Impala): seconds since 1970-01-01 00:00:00 with a
//     fraction, as CAST(ts AS DOUBLE); an instant in UTC for timestamps
//     adjusted to UTC, the wall-clock reading otherwise;
//   - TIME: seconds since midnight.
//
// A timestamp is a large number: in a float32 Table, seconds since 1970 are
// precise to about two minutes, and unscaled they swamp other features.
// Standardize them, derive features (hour of day, age in days) in a Frame,
// or leave them out with Ignore.
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
