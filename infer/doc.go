// Package infer is batch inference over partitioned data: what Spark's
// mapInPandas over Arrow record batches does for a model, in one Go call
// or `fathom predict MODEL INPUT... --out DIR`.
//
// A Predictor scores a batch of rows (a data.Frame): Net wraps a trained
// network (package modelfile), optionally cut at a named layer to emit its
// activations as features for a downstream model (transfer learning);
// Pipeline wraps a fitted ml pipeline. Load picks the right one for a
// model file. A Net turns its rows into features through the model's
// modelfile.Features (columns by name, vector elements, imputation,
// standardization), the same path eval, predict and serve take.
//
// ListPartitions expands files, globs and directories into partitions:
// Parquet and CSV files laid out as Spark and PyArrow write them, the keys
// of Hive-style key=value directories kept as columns. Run streams each
// partition through the predictor in fixed-size batches (a network's
// float32 Parquet features decoded straight into row-major batches by
// data.OpenParquetMatrix, anything else as record batches from
// data.OpenBatches), so memory is bounded by a few batches whatever the
// partition size, and writes one Parquet file per partition through a
// temporary file renamed when complete: the kept columns (an id) and the
// predictions. Rows that cannot be read or scored go to an error file
// (partition, row, reason) instead of failing the job, up to
// Options.MaxErrors. A partition whose output exists is skipped, so a
// re-run after a crash redoes only what is missing, and every row is
// scored exactly once across runs.
//
// The workers of a distributed job share the partitions through the job's
// work queue over its store (Shared: a workqueue.Store, package
// comm/workqueue), whose counter hands the next partition to whichever
// worker asks, so a slow or restarted worker does not hold the others.
// The job `fathom run -n N` starts is joined with package comm/join (its
// store alone: no process group); the model is loaded once per worker.
//
// Sources: Apache Spark, "Pandas API: mapInPandas" and the Spark deep
// learning inference guide (model loaded once per executor, partitions of
// Arrow record batches); Apache Parquet format and Hive partition layout
// (key=value directories, __HIVE_DEFAULT_PARTITION__ for null).
package infer
