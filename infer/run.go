package infer

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fathom-ml/fathom/comm/workqueue"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/internal/cpufeat"
)

// Options says how Run predicts.
type Options struct {
	// Out is the output directory: one Parquet file per partition at
	// Out/<Partition.Rel with extension .parquet>, and the rows that
	// could not be scored under Out/_errors/.
	Out string
	// Keep names input columns (or key=value directory columns) copied
	// into the output before the predictions: an id to join them back on.
	Keep []string
	// BatchSize is the number of rows read and scored at a time; 0 means
	// DefaultBatchSize. Memory is bounded by a few batches, whatever the
	// partitions' sizes.
	BatchSize int
	// MaxErrors bounds the rows that may fail over the whole job: once
	// more have failed, Run stops with ErrTooManyErrors. Negative means
	// no bound; 0 allows none.
	MaxErrors int64
	// Queue hands out the partitions and counts the job's failed rows;
	// nil means this process does them all (workqueue.NewLocal). Workers
	// sharing a queue over the job's store (Shared.Queue) share the work.
	Queue workqueue.Queue
	// Progress, if not nil, receives a progress line about every second
	// (a bar redrawn in place when Progress is a terminal).
	Progress io.Writer
	// Terminal says Progress is a terminal.
	Terminal bool
	// Label, if set, starts every progress line ("rank 0" in a job whose
	// workers each count their own partitions).
	Label string
	// Report, if set, is told of each partition this worker takes: when
	// it starts, after each batch, and when it ends (done, skipped,
	// failed), from Run's goroutine; it must return quickly (a dashboard
	// records it).
	Report func(PartitionReport)
}

// PartitionReport is the state of one partition of a Run.
type PartitionReport struct {
	// Name is the partition's path relative to its input (Partition.Rel).
	Name string
	// Status is "running", "done", "skipped" (its output existed) or
	// "failed".
	Status string
	// Rows scored and Errors (rows that failed) so far; Seconds since the
	// partition started.
	Rows, Errors int64
	Seconds      float64
	// Err is why it failed.
	Err string
}

// ErrTooManyErrors is returned (wrapped) when more rows failed than
// Options.MaxErrors allows.
var ErrTooManyErrors = errors.New("too many rows could not be scored")

// Summary is the outcome of a Run (of one worker, or of the whole job
// once gathered).
type Summary struct {
	// Rows is the number of rows scored (written to outputs) by this run;
	// skipped partitions are not counted.
	Rows int64 `json:"rows"`
	// RowsPerSecond is Rows over Seconds.
	RowsPerSecond float64 `json:"rows_per_second"`
	// Errors is the number of rows that could not be scored.
	Errors int64 `json:"errors"`
	// Partitions is the number of partitions done by this run; Skipped
	// those whose output was already complete.
	Partitions int `json:"partitions"`
	Skipped    int `json:"skipped"`
	// Seconds is the wall time.
	Seconds float64 `json:"seconds"`
	// Out is the output directory; ErrorsFile the merged error file, if
	// any rows failed.
	Out        string `json:"out"`
	ErrorsFile string `json:"errors_file,omitempty"`
	// Workers is the number of workers that took part.
	Workers int `json:"workers"`
}

// Add adds the counts of o to s (Seconds: the longest).
func (s *Summary) Add(o Summary) {
	s.Rows += o.Rows
	s.Errors += o.Errors
	s.Partitions += o.Partitions
	s.Skipped += o.Skipped
	s.Seconds = max(s.Seconds, o.Seconds)
	s.Workers += o.Workers
	s.setRate()
}

// setRate sets RowsPerSecond from Rows and Seconds.
func (s *Summary) setRate() {
	if s.Seconds > 0 {
		s.RowsPerSecond = float64(s.Rows) / s.Seconds
	}
}

// outputRowGroup is the most rows of an output file's row groups:
// batches are gathered into them (a row group per batch of 2,048 rows
// would be small for readers, and costly to set up), up to about
// outputRowGroupBytes of values (a row group is held until it is
// written: wide feature vectors make fewer rows).
const (
	outputRowGroup      = 65536
	outputRowGroupBytes = 32 << 20
)

// outputGroupRows returns the rows of the row groups of an output whose
// batches look like f, at least batch.
func outputGroupRows(f *data.Frame, batch int) int {
	row := 0
	for _, c := range f.Columns() {
		if v, ok := c.(*data.VectorColumn); ok {
			row += 8 * v.Width()
		} else {
			row += 16
		}
	}
	return max(batch, min(outputRowGroup, outputRowGroupBytes/max(row, 1)))
}

// DefaultBatchSize is the rows of a batch when Options.BatchSize is 0:
// a batch of 784 float32 features is then 6.4 MB, which the decoding
// writes and the first layer's GEMM reads straight after. Measured with
// `fathom run -n 2 -- fathom predict` over 784-feature Parquet files
// (docs/inference.md): 2–10% more rows/s than batches of 10,000 (31 MB),
// and less memory.
const DefaultBatchSize = 2048

// OutputPath returns the output file of a partition under out.
func OutputPath(out string, p Partition) string {
	return filepath.Join(out, outputRel(p.Rel))
}

// ErrorsPath returns the error file of a partition under out.
func ErrorsPath(out string, p Partition) string {
	return filepath.Join(out, "_errors", strings.TrimSuffix(outputRel(p.Rel), ".parquet")+".csv")
}

// Run predicts the partitions the queue hands this worker: each is read
// in batches, scored by pred and written to its output file through a
// temporary file renamed when complete, so a partition's output is there
// whole or not at all. A partition whose output exists is skipped: a
// re-run after a crash redoes only the partitions without output. Rows
// that cannot be read or scored are listed (partition, row, reason) in the
// partition's error file, written before its output; Options.MaxErrors
// bounds them over the job.
func Run(ctx context.Context, pred Predictor, parts []Partition, opts Options) (Summary, error) {
	if opts.Out == "" {
		return Summary{}, errors.New("infer: no output directory")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	q := opts.Queue
	if q == nil {
		q = workqueue.NewLocal(len(parts))
	}
	if absOut, err := filepath.Abs(opts.Out); err == nil {
		for _, p := range parts {
			if abs, err := filepath.Abs(p.Path); err == nil && strings.HasPrefix(abs, absOut+string(filepath.Separator)) {
				return Summary{}, fmt.Errorf("infer: input %s is inside the output directory %s: predictions would be read back as input", p.Path, opts.Out)
			}
		}
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return Summary{}, err
	}
	r := &runner{pred: pred, opts: opts, q: q, total: len(parts)}
	start := time.Now()
	stop := r.progress(start)
	defer stop()
	sum := Summary{Out: opts.Out, Workers: 1}
	for {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		i, ok, err := q.Claim(ctx)
		if err != nil {
			return sum, fmt.Errorf("infer: claiming a partition: %w", err)
		}
		if !ok {
			break
		}
		if i < 0 || i >= len(parts) {
			return sum, fmt.Errorf("infer: the queue handed out partition %d of %d", i, len(parts))
		}
		part := parts[i]
		if _, err := os.Stat(OutputPath(opts.Out, part)); err == nil {
			sum.Skipped++
			r.done.Add(1)
			r.report(PartitionReport{Name: part.Rel, Status: "skipped"})
			continue
		}
		pstart := time.Now()
		r.report(PartitionReport{Name: part.Rel, Status: "running"})
		rows, nerr, err := r.partition(ctx, part, true)
		if errors.Is(err, data.ErrNotMatrix) {
			// A list column with rows of other lengths or nulls: the
			// partition again as record batches, which say which rows.
			r.rows.Add(-rows)
			rows, nerr, err = r.partition(ctx, part, false)
		}
		st := PartitionReport{Name: part.Rel, Status: "done", Rows: rows, Errors: nerr, Seconds: time.Since(pstart).Seconds()}
		if err != nil {
			st.Status, st.Err = "failed", err.Error()
		}
		r.report(st)
		if err != nil {
			// The partition has no output: its rows count when a re-run
			// does it.
			return r.finish(sum, start), err
		}
		sum.Rows += rows
		sum.Errors += nerr
		sum.Partitions++
		r.done.Add(1)
	}
	return r.finish(sum, start), nil
}

type runner struct {
	pred  Predictor
	opts  Options
	q     workqueue.Queue
	total int
	rows  atomic.Int64
	done  atomic.Int64
	bufs  chan []float32 // feature buffers of the matrix reader
}

// report tells Options.Report, if set, of a partition's state.
func (r *runner) report(p PartitionReport) {
	if r.opts.Report != nil {
		r.opts.Report(p)
	}
}

func (r *runner) finish(s Summary, start time.Time) Summary {
	s.Seconds = time.Since(start).Seconds()
	s.setRate()
	return s
}

// progress prints a line about every second until stop is called.
func (r *runner) progress(start time.Time) (stop func()) {
	if r.opts.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				r.printProgress(start, true)
				return
			case <-t.C:
				r.printProgress(start, false)
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (r *runner) printProgress(start time.Time, last bool) {
	el := time.Since(start).Seconds()
	rows := r.rows.Load()
	rate := 0.0
	if el > 0 {
		rate = float64(rows) / el
	}
	done := int(r.done.Load())
	const width = 24
	fill := 0
	if r.total > 0 {
		fill = min(width, done*width/r.total)
	}
	line := fmt.Sprintf("[%s%s] %d/%d partitions  %d rows  %.0f rows/s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, r.total, rows, rate)
	if r.opts.Label != "" {
		line = r.opts.Label + ": " + line
	}
	if r.opts.Terminal {
		end := ""
		if last {
			end = "\n"
		}
		fmt.Fprintf(r.opts.Progress, "\r%s%s", line, end)
		return
	}
	fmt.Fprintln(r.opts.Progress, line)
}

// batch is a read batch on its way to the predictor.
type batch struct {
	f     *data.Frame
	bad   []data.BadRow
	first int // the file row of f's first row (0-based)
	err   error
	// A batch read by a data.ParquetMatrix: its n rows of features in x
	// (returned to the reader's free list once scored), the missing ones, the
	// matrix's columns; f holds the kept columns only.
	x      []float32
	n      int
	nulls  []data.NullCell
	names  []string
	finite bool // every value of x is finite
	ld     int  // x is column-major with this leading dimension, or 0: row-major
}

// rowCount is the number of rows of the batch.
func (b batch) rowCount() int {
	if b.x != nil {
		return b.n
	}
	return b.f.Len()
}

// batchSource is where a partition's batches come from.
type batchSource interface {
	next() batch // err io.EOF after the last
	done(b batch)
	close()
}

// frameSource reads record batches.
type frameSource struct {
	rd    data.BatchReader
	first int
}

func (s *frameSource) next() batch {
	f, bad, err := s.rd.Next()
	b := batch{f: f, bad: bad, first: s.first, err: err}
	if err == nil {
		s.first += f.Len()
	}
	return b
}

func (s *frameSource) done(batch) {}
func (s *frameSource) close()     { s.rd.Close() }

// matrixSource reads the features of a network straight into row-major
// buffers (data.ParquetMatrix) and the kept columns as record batches.
type matrixSource struct {
	mx    *data.ParquetMatrix
	keep  data.BatchReader // nil when no column is kept
	free  chan []float32   // the reader's idle batch buffers
	size  int
	names []string
	first int
	ld    int // column-major batches of this leading dimension (the batch size), or 0
}

func (s *matrixSource) next() batch {
	x := <-s.free
	if len(x) != s.size {
		x = make([]float32, s.size)
	}
	var n int
	var nulls []data.NullCell
	var err error
	if s.ld > 0 {
		n, nulls, err = s.mx.NextColumns(x, s.ld)
	} else {
		n, nulls, err = s.mx.Next(x)
	}
	b := batch{x: x, n: n, ld: s.ld, nulls: nulls, names: s.names, first: s.first, err: err, finite: err == nil && s.mx.Finite()}
	if err != nil {
		s.free <- x
		b.x = nil
		return b
	}
	if s.keep != nil {
		f, _, err := s.keep.Next()
		if err == nil && f.Len() != n {
			err = fmt.Errorf("the kept columns came in a batch of %d rows, the features in one of %d", f.Len(), n)
		}
		if err == io.EOF {
			err = fmt.Errorf("the kept columns ended before the features (row %d)", s.first+1)
		}
		b.f, b.err = f, err
	} else {
		b.f, _ = data.NewFrame()
	}
	s.first += n
	return b
}

func (s *matrixSource) done(b batch) {
	if b.x != nil {
		s.free <- b.x
	}
}

func (s *matrixSource) close() {
	s.mx.Close()
	if s.keep != nil {
		s.keep.Close()
	}
}

// openMatrix returns a matrixSource for a partition when the predictor is
// a network whose features are float32 columns (or one list of float32)
// of a Parquet file, nil otherwise.
func (r *runner) openMatrix(p Partition) *matrixSource {
	net, ok := r.pred.(*Net)
	if !ok || !data.IsParquetFile(p.Path) {
		return nil
	}
	cols, ok := net.feat.MatrixColumns()
	if !ok || slices.ContainsFunc(cols, p.hasKey) {
		return nil
	}
	except := slices.Clone(r.opts.Keep)
	for _, k := range p.Keys {
		except = append(except, k.Name)
	}
	mx, err := data.OpenParquetMatrix(p.Path, data.MatrixOptions{Columns: cols, Except: except, Width: net.feat.Width, BatchSize: r.opts.BatchSize})
	if err != nil {
		// Not a matrix layout, or an error the record batch reader
		// reports in its own words.
		return nil
	}
	if r.bufs == nil {
		// Two feature buffers, allocated when first needed and kept
		// from one partition to the next.
		r.bufs = make(chan []float32, 2)
		r.bufs <- nil
		r.bufs <- nil
	}
	s := &matrixSource{mx: mx, free: r.bufs, size: r.opts.BatchSize * net.feat.Width, names: mx.Columns()}
	// Columns for a network whose first layer packs a column-major batch
	// as its GEMM's A, unless the file's columns are narrow dictionaries
	// that the vector gather turns into rows at little more than the cost
	// of columns: that GEMM then reads its A in place, and a worker of
	// the scale run (docs/inference.md) spends about 15% less on its
	// GEMMs, most of which goes back to the gather and to Snappy writing
	// into colder caches (about 1% more rows/s in all).
	if !mx.Vector() && net.columnMajor() && !(cpufeat.Has(cpufeat.AVX512) && mx.RowsFromIndices()) {
		s.ld = r.opts.BatchSize
	}
	var keep []string
	for _, k := range r.opts.Keep {
		if !p.hasKey(k) {
			keep = append(keep, k)
		}
	}
	if len(keep) > 0 {
		if s.keep, err = mx.OpenBatches(keep); err != nil {
			mx.Close()
			return nil
		}
	}
	return s
}

// readColumns returns the file columns to read for a partition: the
// predictor's inputs and the kept columns, less the key columns; nil for
// every column.
func (r *runner) readColumns(p Partition) []string {
	in := r.pred.Inputs()
	if in == nil {
		return nil
	}
	var cols []string
	for _, n := range append(slices.Clone(in), r.opts.Keep...) {
		if !p.hasKey(n) && !slices.Contains(cols, n) {
			cols = append(cols, n)
		}
	}
	return cols
}

// partition predicts one partition; it returns the rows written and the
// rows that failed. With matrix, a network's features are read straight
// into row-major buffers when the file allows (an error wrapping
// data.ErrNotMatrix when the file turns out not to).
func (r *runner) partition(ctx context.Context, p Partition, matrix bool) (rows, nerr int64, err error) {
	pstart := time.Now()
	src, err := r.openSource(p, matrix)
	if err != nil {
		return 0, 0, err
	}
	defer src.close()
	ctx, cancel := context.WithCancel(ctx)
	batches := readAhead(ctx, src)
	defer func() {
		cancel()
		for b := range batches { // let the reader finish before Close
			src.done(b)
		}
	}()

	var failed [][]string // partition, row, reason
	outPath := OutputPath(r.opts.Out, p)
	if err := os.MkdirAll(filepath.Dir(outPath), 0o755); err != nil {
		return 0, 0, err
	}
	var lastKeep *data.Frame
	err = atomicfile.Write(outPath, func(w io.Writer) error {
		var pw *data.ParquetFrameWriter
		for b := range batches {
			if b.err != nil {
				src.done(b)
				return b.err
			}
			res, err := r.score(p, b)
			if err != nil {
				src.done(b)
				return fmt.Errorf("%s: rows %d to %d: %w", p.Path, b.first+1, b.first+b.rowCount(), err)
			}
			for _, e := range res.Errors {
				failed = append(failed, []string{p.Path, strconv.Itoa(b.first + e.Row + 1), e.Reason})
			}
			if r.opts.MaxErrors >= 0 && int64(len(failed)) > r.opts.MaxErrors {
				src.done(b)
				return fmt.Errorf("%s: %w: %d rows failed, more than --max-errors %d allows (first: row %s: %s)",
					p.Path, ErrTooManyErrors, len(failed), r.opts.MaxErrors, failed[0][1], failed[0][2])
			}
			if res.out == nil {
				lastKeep = res.keep
				src.done(b)
				continue
			}
			if pw == nil {
				if pw, err = data.NewParquetFrameWriter(w, res.out, data.ParquetWriteOptions{RowGroupRows: outputGroupRows(res.out, r.opts.BatchSize)}); err != nil {
					return fmt.Errorf("%s: %w", outPath, err)
				}
			}
			err = pw.Write(res.out)
			src.done(b) // the output no longer needs the batch's buffers
			if err != nil {
				return fmt.Errorf("%s: %w", outPath, err)
			}
			rows += int64(res.out.Len())
			r.rows.Add(int64(res.out.Len()))
			r.report(PartitionReport{Name: p.Rel, Status: "running", Rows: rows, Errors: int64(len(failed)),
				Seconds: time.Since(pstart).Seconds()})
		}
		if pw == nil {
			if err := writeEmpty(w, lastKeep); err != nil {
				return err
			}
		} else if err := pw.Close(); err != nil {
			return err
		}
		// The job-wide error budget, then the error file, before the
		// output is renamed into place.
		nerr = int64(len(failed))
		if nerr > 0 {
			total, err := r.q.Add(ctx, errorsCounter, nerr)
			if err != nil {
				return fmt.Errorf("infer: counting errors: %w", err)
			}
			if r.opts.MaxErrors >= 0 && total > r.opts.MaxErrors {
				return fmt.Errorf("%w: %d rows failed over the job so far, more than --max-errors %d allows (see %s)",
					ErrTooManyErrors, total, r.opts.MaxErrors, ErrorsPath(r.opts.Out, p))
			}
		}
		return writeErrors(ErrorsPath(r.opts.Out, p), failed)
	})
	if err != nil && len(failed) > 0 && errors.Is(err, ErrTooManyErrors) {
		// Keep the rows that failed for the user to look at.
		writeErrors(ErrorsPath(r.opts.Out, p), failed)
	}
	return rows, nerr, err
}

// openSource opens the batches of partition p: straight into matrices
// when matrix and the file allows, else as frames.
func (r *runner) openSource(p Partition, matrix bool) (batchSource, error) {
	if matrix {
		if m := r.openMatrix(p); m != nil {
			return m, nil
		}
	}
	rd, err := data.OpenBatches(p.Path, data.BatchOptions{Columns: r.readColumns(p), BatchSize: r.opts.BatchSize})
	if err != nil {
		return nil, err
	}
	have := rd.Columns()
	for _, k := range r.opts.Keep {
		if !slices.Contains(have, k) && !p.hasKey(k) {
			rd.Close()
			return nil, fmt.Errorf("%s: --keep %s: no such column (columns: %s)", p.Path, k, strings.Join(have, ", "))
		}
	}
	return &frameSource{rd: rd}, nil
}

// readAhead reads the batches of src one ahead of the one being scored,
// until the end, an error, or ctx is done; the channel closes then.
func readAhead(ctx context.Context, src batchSource) <-chan batch {
	batches := make(chan batch, 1)
	go func() {
		defer close(batches)
		for {
			b := src.next()
			if b.err == io.EOF {
				return
			}
			select {
			case batches <- b:
			case <-ctx.Done():
				src.done(b)
				return
			}
			if b.err != nil {
				return
			}
		}
	}()
	return batches
}

// writeEmpty writes the output of a partition of which no row was
// scored: the kept columns only (of keep, the last batch's), or an empty
// prediction column.
func writeEmpty(w io.Writer, keep *data.Frame) error {
	if keep == nil {
		keep, _ = data.NewFrame()
	}
	if keep.NumCols() == 0 {
		keep, _ = data.NewFrame(data.NewColumn("prediction", []string{}, nil))
	}
	pw, err := data.NewParquetFrameWriter(w, keep, data.ParquetWriteOptions{})
	if err != nil {
		return err
	}
	if err := pw.Write(keep.Slice(0, 0)); err != nil {
		return err
	}
	return pw.Close()
}

// scored is a batch's output: the kept columns and the predictions of
// the scored rows side by side.
type scored struct {
	out    *data.Frame // nil when no row was scored
	keep   *data.Frame // the kept columns of no rows (for the schema)
	Errors []data.BadRow
}

// score runs the predictor on a batch and joins the kept columns.
func (r *runner) score(p Partition, b batch) (scored, error) {
	f := b.f
	n := b.rowCount()
	cols := f.Columns()
	cols = append(cols, p.keyColumns(n)...)
	f, err := data.NewFrame(cols...)
	if err != nil {
		return scored{}, err
	}
	if b.x != nil {
		res, err := r.pred.(*Net).predictMatrix(b.x, n, b.ld, b.nulls, b.names, b.finite)
		if err != nil {
			return scored{}, err
		}
		return r.join(f, res, slices.Clone(res.Errors), res.Rows)
	}
	// Rows the reader could not read are not scored.
	good := f
	var goodRows []int
	if len(b.bad) > 0 {
		skip := map[int]bool{}
		for _, e := range b.bad {
			skip[e.Row] = true
		}
		for i := range n {
			if !skip[i] {
				goodRows = append(goodRows, i)
			}
		}
		good = f.Take(goodRows)
	}
	if r.pred.Inputs() == nil {
		// A predictor that reads every column does not see the kept
		// and key columns.
		var names []string
		for _, n := range good.Names() {
			if !slices.Contains(r.opts.Keep, n) && !p.hasKey(n) {
				names = append(names, n)
			}
		}
		if good, err = good.Select(names...); err != nil {
			return scored{}, err
		}
	}
	res, err := r.pred.Predict(good)
	if err != nil {
		return scored{}, err
	}
	errs := slices.Clone(b.bad)
	rows := res.Rows
	for _, e := range res.Errors {
		if goodRows != nil {
			e.Row = goodRows[e.Row]
		}
		errs = append(errs, e)
	}
	if goodRows != nil {
		rows = make([]int, len(res.Rows))
		for i, k := range res.Rows {
			rows[i] = goodRows[k]
		}
	}
	return r.join(f, res, errs, rows)
}

// join puts the kept columns of the scored rows of f (rows) beside the
// predictions.
func (r *runner) join(f *data.Frame, res Result, errs []data.BadRow, rows []int) (scored, error) {
	slices.SortFunc(errs, func(a, b data.BadRow) int { return a.Row - b.Row })
	keep, err := f.Select(r.opts.Keep...)
	if err != nil {
		return scored{}, err
	}
	s := scored{Errors: errs, keep: keep.Slice(0, 0)}
	if res.Out == nil {
		return s, nil
	}
	if res.Out.Len() != len(rows) {
		return scored{}, fmt.Errorf("the predictor returned %d rows for %d scored rows", res.Out.Len(), len(rows))
	}
	outCols := keep.Take(rows).Columns()
	for _, c := range res.Out.Columns() {
		if slices.Contains(r.opts.Keep, c.Name()) {
			return scored{}, fmt.Errorf("--keep %s: the predictions have a column of that name", c.Name())
		}
		outCols = append(outCols, c)
	}
	s.out, err = data.NewFrame(outCols...)
	return s, err
}

// writeErrors writes a partition's failed rows (partition, row, reason)
// atomically, or removes a stale file when there are none.
func writeErrors(path string, failed [][]string) error {
	if len(failed) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"partition", "row", "reason"})
		cw.WriteAll(failed)
		return cw.Error()
	})
}

// MergeErrors concatenates the error files of the partitions into
// Out/_errors.csv (partition, row, reason), in partition order, and
// returns its path; "" and no file when no row failed.
func MergeErrors(out string, parts []Partition) (string, error) {
	var files []string
	for _, p := range parts {
		if _, err := os.Stat(ErrorsPath(out, p)); err == nil {
			files = append(files, ErrorsPath(out, p))
		}
	}
	path := filepath.Join(out, "_errors.csv")
	if len(files) == 0 {
		os.Remove(path)
		return "", nil
	}
	err := atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"partition", "row", "reason"})
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				return err
			}
			recs, err := csv.NewReader(fh).ReadAll()
			fh.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if len(recs) > 0 {
				cw.WriteAll(recs[1:])
			}
		}
		cw.Flush()
		return cw.Error()
	})
	return path, err
}
