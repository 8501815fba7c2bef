package data

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parquetpage"
)

// ErrNotMatrix says that a file's columns are not laid out as
// ParquetMatrix reads them (float32 columns, or one list of float32 with
// the same number of values in every row): read it as Frames instead.
var ErrNotMatrix = errors.New("not a float32 matrix layout")

// MatrixOptions says which columns a ParquetMatrix reads.
type MatrixOptions struct {
	// Columns lists the feature columns, in order: float32 columns, one
	// per feature, or a single list<float32> (or fixed_size_list) column
	// holding every feature of a row. Nil means every column of the file
	// but those in Except, in file order.
	Columns []string
	Except  []string
	// Width is the number of features per row.
	Width int
	// BatchSize is the number of rows per batch; 0 means 10000.
	BatchSize int
}

// NullCell is a missing feature value of a batch: its row (0-based in the
// batch) and feature (0-based).
type NullCell struct{ Row, Col int }

// ParquetMatrix reads the feature columns of a Parquet file straight
// into row-major float32 batches: values are decoded from the pages into a
// small buffer per column and transposed into the caller's matrix, with
// no record batch, no per-batch allocation and no zeroing in between. One
// list<float32> column is decoded straight into the matrix. A
// ParquetMatrix is used by one goroutine at a time.
type ParquetMatrix struct {
	path    string
	closer  io.Closer               // the file
	mapped  *parquetpage.MappedFile // the file when mapped, or nil
	pf      *file.Reader
	names   []string
	leaves  []int
	maxDef  []int16
	vector  bool // one list column of Width values a row
	width   int
	batch   int
	rg      int   // the next row group to open
	rgLeft  int64 // rows left in the open row group
	readers []*file.Float32ColumnChunkReader
	pages   []*pageCursor // per column, when its chunk is read page by page (else readers)
	src     [matrixGroup][]float32
	idx     [matrixGroup][]uint8       // sources that are dictionary indices (src nil)
	tabs    [matrixGroup]*[256]float32 // their dictionaries
	// The narrow dictionaries of the columns, sixteen to a group (the
	// pageCursors' tabs), so that kernel.GatherRows16 reaches a group's
	// tables through one pointer.
	groupTabs []([matrixGroup][256]float32)
	row       int     // file rows read so far
	sum       float64 // of the values of the batch read last
	scratch   *[matrixGroup][matrixTile]float32
	defs      []int16
	reps      []int16
}

// matrixTile is the number of rows transposed at a time (scalar
// columns): 2048 rows of 784 features span about as many 4 KiB memory
// pages as the TLB holds (512 was 10% slower with pages decoded here,
// a whole batch slower too: BenchmarkParquetMatrix, 2026-11-24).
const matrixTile = 2048

// vectorTile is the number of rows of a list column decoded at a time.
const vectorTile = 512

// matrixGroup is the number of columns transposed together: 16 float32s
// fill a 64-byte cache line of a row.
const matrixGroup = 16

// OpenParquetMatrix opens a Parquet file whose feature columns are float32
// (or one list of float32s) for reading into row-major batches. It returns
// an error wrapping ErrNotMatrix when the columns are of other types or
// their number is not opts.Width; Next may also return ErrNotMatrix for a
// list column whose rows do not all hold Width values or hold nulls.
func OpenParquetMatrix(path string, opts MatrixOptions) (_ *ParquetMatrix, err error) {
	// Pages are decompressed into recycled buffers (a column chunk's are
	// released when the next row group is opened). The file is mapped
	// into memory where the system allows, so that a column chunk is
	// copied once, from the page cache, and the row groups read are
	// unmapped as the next one starts; otherwise the column chunks of a
	// row group, which lie one after the other, are read a window at a
	// time rather than one read each.
	props := parquet.NewReaderProperties(pageBufs)
	var closer io.Closer
	var mf *parquetpage.MappedFile
	var pf *file.Reader
	if mf, err = parquetpage.OpenMapped(path); err == nil {
		if pf, err = file.NewParquetReader(mf, file.WithReadProps(props)); err != nil {
			mf.Close()
			return nil, fmt.Errorf("%s: parquet: %w", path, err)
		}
		closer = mf
	} else {
		fh, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if pf, err = file.NewParquetReader(&windowReader{f: fh, buf: make([]byte, 0, matrixWindow)}, file.WithReadProps(props)); err != nil {
			fh.Close()
			return nil, fmt.Errorf("%s: parquet: %w", path, err)
		}
		closer = fh
	}
	defer func() {
		if err != nil {
			closer.Close()
		}
	}()
	fr, schema, pos, all, err := arrowColumns(path, pf, 0)
	if err != nil {
		return nil, err
	}
	sel := opts.Columns
	if sel == nil {
		for _, n := range all {
			if !slices.Contains(opts.Except, n) {
				sel = append(sel, n)
			}
		}
	}
	m := &ParquetMatrix{path: path, closer: closer, mapped: mf, pf: pf, width: opts.Width, batch: opts.BatchSize}
	if m.batch <= 0 {
		m.batch = 10000
	}
	for _, n := range sel {
		i, ok := pos[n]
		if !ok {
			return nil, fmt.Errorf("%s: column %q: %w", path, n, ErrNotMatrix)
		}
		sf := &fr.Manifest.Fields[i]
		switch t := schema.Field(i).Type.(type) {
		case *arrow.Float32Type:
			if !sf.IsLeaf() {
				return nil, fmt.Errorf("%s: column %q: %w", path, n, ErrNotMatrix)
			}
			m.leaves = append(m.leaves, sf.ColIndex)
		case arrow.ListLikeType:
			if len(sel) != 1 || t.Elem().ID() != arrow.FLOAT32 || len(sf.Children) != 1 || !sf.Children[0].IsLeaf() {
				return nil, fmt.Errorf("%s: column %q: %w", path, n, ErrNotMatrix)
			}
			m.vector = true
			m.leaves = append(m.leaves, sf.Children[0].ColIndex)
		default:
			return nil, fmt.Errorf("%s: column %q is %s: %w", path, n, t, ErrNotMatrix)
		}
		c := pf.MetaData().Schema.Column(m.leaves[len(m.leaves)-1])
		if c.PhysicalType() != parquet.Types.Float || c.MaxRepetitionLevel() > repLevel(m.vector) {
			return nil, fmt.Errorf("%s: column %q: %w", path, n, ErrNotMatrix)
		}
		m.maxDef = append(m.maxDef, c.MaxDefinitionLevel())
		m.names = append(m.names, n)
	}
	if len(m.names) == 0 || (!m.vector && len(m.names) != m.width) || m.width <= 0 {
		return nil, fmt.Errorf("%s: %d feature columns for %d features: %w", path, len(m.names), m.width, ErrNotMatrix)
	}
	if m.vector {
		m.defs = make([]int16, vectorTile*m.width)
		m.reps = make([]int16, vectorTile*m.width)
	} else {
		m.scratch = new([matrixGroup][matrixTile]float32)
		m.defs = make([]int16, matrixTile)
	}
	m.readers = make([]*file.Float32ColumnChunkReader, len(m.leaves))
	m.pages = make([]*pageCursor, len(m.leaves))
	return m, nil
}

// repLevel is the repetition level of a feature's values.
func repLevel(b bool) int16 {
	if b {
		return 1
	}
	return 0
}

// Columns names the feature columns read, in order.
func (m *ParquetMatrix) Columns() []string { return slices.Clone(m.names) }

// OpenBatches reads other columns of the matrix's file (the columns an
// output keeps beside the predictions) as record batches of the matrix's
// batch size, so that they come in step with its batches; the file's
// footer is not parsed again.
func (m *ParquetMatrix) OpenBatches(columns []string) (BatchReader, error) {
	return openParquetBatches(m.path, BatchOptions{Columns: columns, BatchSize: m.batch}, m.pf.MetaData())
}

// Vector reports whether the features are one list column.
func (m *ParquetMatrix) Vector() bool { return m.vector }

// Next reads the next batch (at most BatchSize rows) into x, row-major,
// Width values a row, and returns its number of rows and its missing
// values (zeros in x), or io.EOF after the last batch. x must hold
// BatchSize × Width values.
func (m *ParquetMatrix) Next(x []float32) (n int, nulls []NullCell, err error) {
	if len(x) < m.batch*m.width {
		return 0, nil, fmt.Errorf("%s: a batch needs %d values, the buffer holds %d", m.path, m.batch*m.width, len(x))
	}
	if m.mapped != nil {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer m.fault(&n, &err)
	}
	return m.next(x, 0)
}

// NextColumns reads the next batch (at most BatchSize rows, like Next)
// column-major: feature j of the batch's row i goes to x[j*ld+i], so that
// x is the batch transposed, Width rows of leading dimension ld. It
// returns the number of rows and the missing values (zeros in x), or
// io.EOF after the last batch. ld must be at least BatchSize and x hold
// (Width-1)×ld + BatchSize values. A page that holds nothing but the
// values of rows of the batch is decompressed (or its dictionary indices
// decoded) straight into x, with no copy in between. The features as one
// list column (Vector) are read by Next only.
func (m *ParquetMatrix) NextColumns(x []float32, ld int) (n int, nulls []NullCell, err error) {
	if m.vector {
		return 0, nil, fmt.Errorf("%s: column %q: a list column is read row-major (Next), not by NextColumns", m.path, m.names[0])
	}
	if ld < m.batch || len(x) < (m.width-1)*ld+m.batch {
		return 0, nil, fmt.Errorf("%s: a column-major batch of %d rows and %d features with leading dimension %d needs %d values, the buffer holds %d",
			m.path, m.batch, m.width, ld, (m.width-1)*ld+m.batch, len(x))
	}
	if m.mapped != nil {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer m.fault(&n, &err)
	}
	return m.next(x, ld)
}

// RowsFromIndices reports whether Next reads this file on its cheapest
// path: every feature column chunk of the first row group holds
// dictionary-encoded data pages only (by its encoding statistics), of a
// dictionary of at most 256 values, without nulls (a REQUIRED column, or
// a null count of 0 in its statistics), its pages walked in the mapped
// file. Next then keeps the pages' byte indices and writes each row's
// values straight from the dictionaries, sixteen columns a cache line,
// with no float32 column in between (but for a dictionary holding a NaN
// or an infinity, seen only once read). That costs about a third more
// than NextColumns, which writes each column's values in order
// (BenchmarkParquetMatrix, dict: 20,000 rows in 20-21 ms by Next, 15 ms
// by NextColumns, one core, 2026-11-24, AVX-512): a caller should read
// rows then if its consumer saves more than the difference by taking
// rows, as a GEMM does that reads row-major A in place instead of packing
// a column-major one.
// It is false for a list column (which NextColumns does not read) and
// whenever the metadata leaves a doubt (no encoding statistics, no null
// count). It reads the column chunks' dictionary page headers, not their
// pages.
func (m *ParquetMatrix) RowsFromIndices() (ok bool) {
	if m.vector || m.pf.NumRowGroups() == 0 || !matrixPageDecoding {
		return false
	}
	if m.mapped != nil {
		// A fault reading the mapping (the file truncated meanwhile) is
		// a doubt.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				m.mappingFault(r)
				ok = false
			}
		}()
	}
	rg := m.pf.MetaData().RowGroup(0)
	for j, leaf := range m.leaves {
		cc, err := rg.ColumnChunk(leaf)
		if err != nil || !pageChunk(cc) || !m.ownPages(cc) || !cc.HasDictionaryPage() || !dictDataOnly(cc.EncodingStats()) {
			return false
		}
		if m.maxDef[j] > 0 {
			st, err := cc.Statistics()
			if err != nil || st == nil || !st.HasNullCount() || st.NullCount() != 0 {
				return false
			}
		}
		chunk, err := m.chunkBytes(cc)
		if err != nil || cc.DictionaryPageOffset() > cc.DataPageOffset() {
			return false
		}
		h, _, err := parquetpage.ParseHeader(chunk)
		if err != nil || h.Type != parquetpage.PageDictionary || !h.HasDict || h.NumValues < 0 || h.NumValues > 256 {
			return false
		}
	}
	return true
}

// dictDataOnly reports whether a column chunk's encoding statistics list
// data pages, all dictionary-encoded.
func dictDataOnly(stats []metadata.PageEncodingStats) bool {
	data := false
	for _, s := range stats {
		if int(s.PageType) != parquetpage.PageData && int(s.PageType) != parquetpage.PageDataV2 {
			continue
		}
		if !dictEncoded(s.Encoding) {
			return false
		}
		data = true
	}
	return data
}

// fault turns a fault reading the mapping (the file truncated by someone
// else while mapped) into an error instead of a crash.
func (m *ParquetMatrix) fault(n *int, err *error) {
	r := recover()
	if r == nil {
		return
	}
	m.mappingFault(r)
	*n, *err = 0, fmt.Errorf("%s: reading row group %d: the file changed while mapped (%v)", m.path, m.rg-1, r)
}

// mappingFault panics again with r, a recovered panic, unless it is a
// fault reading the mapping.
func (m *ParquetMatrix) mappingFault(r any) {
	if f, ok := r.(interface{ Addr() uintptr }); !ok || !m.mapped.Contains(f.Addr()) {
		panic(r)
	}
}

// next reads a batch: row-major if ld is 0, else column-major with
// leading dimension ld.
func (m *ParquetMatrix) next(x []float32, ld int) (n int, nulls []NullCell, err error) {
	m.sum = 0
	for n < m.batch {
		if m.rgLeft == 0 {
			if m.rg == m.pf.NumRowGroups() {
				break
			}
			if err := m.openRowGroup(); err != nil {
				return 0, nil, err
			}
			continue
		}
		k := int(min(int64(m.batch-n), m.rgLeft))
		switch {
		case m.vector && m.pages[0] != nil && m.pages[0].on:
			if err := m.readVectorOwn(m.pages[0], x[n*m.width:(n+k)*m.width]); err != nil {
				return 0, nil, fmt.Errorf("%s: parquet: column %q, row group %d, %w", m.path, m.names[0], m.rg-1, err)
			}
		case m.vector:
			for t := 0; t < k; t += vectorTile {
				tn := min(vectorTile, k-t)
				tile := x[(n+t)*m.width : (n+t+tn)*m.width]
				if err := m.readVector(tile, tn); err != nil {
					return 0, nil, err
				}
				m.sum += kernel.SumF32Wide(tile) // while the tile is in cache
			}
		case ld > 0:
			if nulls, err = m.readColumns(x, ld, n, k, nulls); err != nil {
				return 0, nil, err
			}
		default:
			if nulls, err = m.readScalars(x, n, k, nulls); err != nil {
				return 0, nil, err
			}
		}
		n += k
		m.rgLeft -= int64(k)
	}
	if n == 0 {
		return 0, nil, io.EOF
	}
	m.row += n
	return n, nulls, nil
}

// readColumns reads rows rows of every feature column into x from row r0
// on, column-major (leading dimension ld), a column at a time.
func (m *ParquetMatrix) readColumns(x []float32, ld, r0, rows int, nulls []NullCell) ([]NullCell, error) {
	for j := range m.width {
		dst := x[j*ld+r0 : j*ld+r0+rows]
		if c := m.pages[j]; c != nil && c.on {
			if err := c.takeInto(x, j*ld+r0, rows, r0, j, &nulls); err != nil {
				return nulls, fmt.Errorf("%s: parquet: column %q, row group %d, %w", m.path, m.names[j], m.rg-1, err)
			}
			if c.tookDict && c.dictFinite {
				continue // values of a finite dictionary, or nulls' zeros: no sum needed
			}
		} else {
			for t := 0; t < rows; t += matrixTile {
				var err error
				if nulls, err = m.readColumn(j, dst[t:min(rows, t+matrixTile)], r0+t, nulls); err != nil {
					return nulls, err
				}
			}
		}
		m.sum += kernel.SumF32Wide(dst) // while the values are in cache
	}
	return nulls, nil
}

// readColumn reads len(vals) (at most matrixTile) rows of column j
// through its column reader into vals, zeros and NullCells (rows r0 on)
// where values are missing.
func (m *ParquetMatrix) readColumn(j int, vals []float32, r0 int, nulls []NullCell) ([]NullCell, error) {
	tn := len(vals)
	var defs []int16
	if m.maxDef[j] > 0 {
		defs = m.defs[:tn]
	}
	total, read, err := m.readers[j].ReadBatch(int64(tn), vals, defs, nil)
	if err != nil {
		return nulls, fmt.Errorf("%s: parquet: column %q after row %d: %w", m.path, m.names[j], m.row+r0, err)
	}
	if int(total) != tn {
		return nulls, fmt.Errorf("%s: parquet: column %q: %d values in a row group of more rows (after row %d)", m.path, m.names[j], total, m.row+r0)
	}
	if read < tn {
		// Spread the values over the rows that have one.
		v := read - 1
		for i := tn - 1; i >= 0; i-- {
			if defs[i] == m.maxDef[j] {
				vals[i] = vals[v]
				v--
			} else {
				vals[i] = 0
				nulls = append(nulls, NullCell{Row: r0 + i, Col: j})
			}
		}
	}
	return nulls, nil
}

func (m *ParquetMatrix) openRowGroup() error {
	rg := m.pf.RowGroup(m.rg)
	m.closeReaders()
	if m.mapped != nil && rg.NumColumns() > 0 {
		// Row groups lie in file order: what comes before this one's
		// first column chunk has been read.
		if cc, err := rg.MetaData().ColumnChunk(0); err == nil {
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() {
				start = min(start, cc.DictionaryPageOffset())
			}
			m.mapped.Release(start)
		}
	}
	for j, leaf := range m.leaves {
		cc, err := rg.MetaData().ColumnChunk(leaf)
		if err != nil {
			return fmt.Errorf("%s: parquet: row group %d: %w", m.path, m.rg, err)
		}
		// Page by page where the decoding allows: walked in the mapping,
		// else (scalar columns) through arrow-go's page reader; the
		// column reader otherwise.
		own := m.ownPages(cc)
		if pageChunk(cc) && (own || !m.vector) {
			c := m.cursor(j)
			if own {
				values := rg.NumRows() // a list column's cursor counts values
				if m.vector {
					values *= int64(m.width)
				}
				chunk, err := m.chunkBytes(cc)
				if err == nil {
					err = c.startPages(chunk, cc.Compression(), values)
				}
				if err != nil {
					return fmt.Errorf("%s: parquet: column %q, row group %d: %w", m.path, m.names[j], m.rg, err)
				}
				continue
			}
			pr, err := rg.GetColumnPageReader(leaf)
			if err != nil {
				return fmt.Errorf("%s: parquet: column %q, row group %d: %w", m.path, m.names[j], m.rg, err)
			}
			c.startReader(pr)
			continue
		}
		cr, err := rg.Column(leaf)
		if err != nil {
			return fmt.Errorf("%s: parquet: row group %d: %w", m.path, m.rg, err)
		}
		fr, ok := cr.(*file.Float32ColumnChunkReader)
		if !ok {
			return fmt.Errorf("%s: column %q: %w", m.path, m.names[j], ErrNotMatrix)
		}
		m.readers[j] = fr
	}
	m.rgLeft = rg.NumRows()
	m.rg++
	return nil
}

// cursor returns the page cursor of feature column j (of the list
// column when Vector), made on first use.
func (m *ParquetMatrix) cursor(j int) *pageCursor {
	if c := m.pages[j]; c != nil {
		return c
	}
	c := newPageCursor(m.maxDef[j], repLevel(m.vector))
	if !m.vector {
		if m.groupTabs == nil {
			m.groupTabs = make([]([matrixGroup][256]float32), (m.width+matrixGroup-1)/matrixGroup)
		}
		c.skew, c.tab = 64*(j%matrixGroup), &m.groupTabs[j/matrixGroup][j%matrixGroup]
	}
	m.pages[j] = c
	return c
}

// readScalars reads rows rows of every feature column into x from row
// r0 on, a tile of rows at a time and sixteen columns at a time: each
// column's values are taken straight from its decompressed page (or
// from a scratch buffer when the column reader decodes them), then each
// row gets the sixteen values as one cache line. A tile of rows spans few enough memory pages
// for the transpose's writes not to miss the TLB (going through a whole
// batch sixteen columns at a time costs more in TLB misses than it saves
// in reading the pages while they are still in cache).
func (m *ParquetMatrix) readScalars(x []float32, r0, rows int, nulls []NullCell) ([]NullCell, error) {
	for t := 0; t < rows; t += matrixTile {
		for j0 := 0; j0 < m.width; j0 += matrixGroup {
			var err error
			if nulls, err = m.readTile(x, j0, r0+t, min(matrixTile, rows-t), nulls); err != nil {
				return nulls, err
			}
		}
	}
	return nulls, nil
}

// readTile reads rows r0 to r0+tn of the (up to) sixteen columns from j0
// on into x.
//
// A column's values come as a slice of its page, as scratch filled by
// its cursor or column reader, or as the byte indices of a page of a
// narrow dictionary (see pageCursor.narrow). Sixteen columns of indices
// are looked up and transposed in one pass (kernel.GatherRows16); in a
// group with other sources, indices are looked up into scratch first.
// The values of a column that all came from a finite dictionary are not
// summed for Finite.
func (m *ParquetMatrix) readTile(x []float32, j0, r0, tn int, nulls []NullCell) ([]NullCell, error) {
	w := m.width
	g := min(matrixGroup, w-j0)
	s := &m.src
	allIdx := g == matrixGroup
	for k := range g {
		j := j0 + k
		if c := m.pages[j]; c != nil && c.on {
			var err error
			if s[k], m.idx[k], nulls, err = c.take(tn, m.scratch[k][:], r0, j, nulls); err != nil {
				return nulls, fmt.Errorf("%s: parquet: column %q, row group %d, %w", m.path, m.names[j], m.rg-1, err)
			}
			if m.idx[k] != nil {
				m.tabs[k] = c.tab // &m.groupTabs[j0/16][k]
				continue          // finite (a narrow dictionary)
			}
			allIdx = false
			if !c.tookDict || !c.dictFinite {
				m.sum += kernel.SumF32Wide(s[k]) // while the values are in cache
			}
			continue
		}
		allIdx = false
		s[k] = m.scratch[k][:tn]
		var err error
		if nulls, err = m.readColumn(j, s[k], r0, nulls); err != nil {
			return nulls, err
		}
		m.sum += kernel.SumF32Wide(s[k])
	}
	if allIdx {
		kernel.GatherRows16(x[r0*w+j0:], w, tn, &m.idx, &m.groupTabs[j0/matrixGroup])
		return nulls, nil
	}
	for k := range g {
		if s[k] == nil {
			s[k] = m.scratch[k][:tn]
			kernel.GatherF32U8(s[k], m.tabs[k], m.idx[k])
		}
	}
	if g == matrixGroup {
		transpose16(x[r0*w:], w, j0, tn, s)
		return nulls, nil
	}
	for k := range g {
		for i, v := range s[k][:tn] {
			x[(r0+i)*w+j0+k] = v
		}
	}
	return nulls, nil
}

// transpose16 writes value i of s[k] to x[i*w+j0+k], for i < tn and
// k < 16: each row of x gets its sixteen values as one cache line.
func transpose16(x []float32, w, j0, tn int, s *[matrixGroup][]float32) {
	s0, s1, s2, s3 := s[0][:tn], s[1][:tn], s[2][:tn], s[3][:tn]
	s4, s5, s6, s7 := s[4][:tn], s[5][:tn], s[6][:tn], s[7][:tn]
	s8, s9, s10, s11 := s[8][:tn], s[9][:tn], s[10][:tn], s[11][:tn]
	s12, s13, s14, s15 := s[12][:tn], s[13][:tn], s[14][:tn], s[15][:tn]
	for i := range tn {
		o := i*w + j0
		r := x[o : o+16 : o+16]
		r[0], r[1], r[2], r[3] = s0[i], s1[i], s2[i], s3[i]
		r[4], r[5], r[6], r[7] = s4[i], s5[i], s6[i], s7[i]
		r[8], r[9], r[10], r[11] = s8[i], s9[i], s10[i], s11[i]
		r[12], r[13], r[14], r[15] = s12[i], s13[i], s14[i], s15[i]
	}
}

// readVector decodes tn rows of the list column straight into x; a row
// that does not hold exactly Width values, all present, is ErrNotMatrix
// (the Frame reader says which and how).
func (m *ParquetMatrix) readVector(x []float32, tn int) error {
	lv := tn * m.width
	total, read, err := m.readers[0].ReadBatch(int64(lv), x, m.defs[:lv], m.reps[:lv])
	if err != nil {
		return fmt.Errorf("%s: parquet: column %q after row %d: %w", m.path, m.names[0], m.row, err)
	}
	if int(total) != lv || read != lv {
		return fmt.Errorf("%s: column %q: rows of other lengths or nulls: %w", m.path, m.names[0], ErrNotMatrix)
	}
	reps := m.reps[:lv]
	for i := 0; i < lv; i += m.width {
		if reps[i] != 0 || slices.Contains(reps[i+1:i+m.width], 0) {
			return fmt.Errorf("%s: column %q: rows of other lengths: %w", m.path, m.names[0], ErrNotMatrix)
		}
	}
	return nil
}

// closeReaders releases the column chunk readers of the row group read
// last (their buffers go back to pageBufs).
func (m *ParquetMatrix) closeReaders() {
	for j, r := range m.readers {
		if r != nil {
			r.Close()
			m.readers[j] = nil
		}
	}
	for _, c := range m.pages {
		if c != nil {
			c.close()
		}
	}
}

// ownPages reports whether a column chunk's pages are walked by the
// ParquetMatrix itself, in the mapped file: not encrypted, compressed
// by a codec arrow-go has.
func (m *ParquetMatrix) ownPages(cc *metadata.ColumnChunkMetaData) bool {
	if m.mapped == nil || m.mapped.Bytes() == nil || !matrixOwnPages || cc.CryptoMetadata() != nil {
		return false
	}
	switch c := cc.Compression(); c {
	case compress.Codecs.Uncompressed, compress.Codecs.Snappy:
		return true
	default:
		_, err := compress.GetCodec(c)
		return err == nil
	}
}

// chunkBytes returns a column chunk's bytes in the mapping: from its
// dictionary page (if any) or first data page, of its total compressed
// size.
func (m *ParquetMatrix) chunkBytes(cc *metadata.ColumnChunkMetaData) ([]byte, error) {
	data := m.mapped.Bytes()
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
		start = min(start, cc.DictionaryPageOffset())
	}
	size := cc.TotalCompressedSize()
	if start < 4 || size < 0 || size > int64(len(data)) || start > int64(len(data))-size {
		return nil, fmt.Errorf("a column chunk of %d bytes at offset %d in a file of %d: %w", size, start, len(data), errPage)
	}
	return data[start : start+size : start+size], nil
}

// Finite reports whether every value of the batch read last is finite
// (nulls read as zeros): their float64 sum cannot overflow, so it is
// finite exactly when they all are.
func (m *ParquetMatrix) Finite() bool {
	return !math.IsNaN(m.sum) && !math.IsInf(m.sum, 0)
}

// Close releases the file.
func (m *ParquetMatrix) Close() error {
	m.closeReaders()
	for _, c := range m.pages {
		if c != nil {
			c.release()
		}
	}
	return m.closer.Close()
}

// matrixWindow is the size of the file reads of a ParquetMatrix.
const matrixWindow = 16 << 20

// windowReader reads a file a window at a time: a read within the last
// window is a copy, a read outside it loads the window that starts there.
type windowReader struct {
	f   *os.File
	buf []byte
	off int64
}

func (w *windowReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= w.off && off+int64(len(p)) <= w.off+int64(len(w.buf)) {
		return copy(p, w.buf[off-w.off:]), nil
	}
	if len(p) > cap(w.buf)/2 {
		return w.f.ReadAt(p, off)
	}
	n, err := w.f.ReadAt(w.buf[:cap(w.buf)], off)
	w.buf, w.off = w.buf[:n], off
	if n >= len(p) {
		return copy(p, w.buf), nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return copy(p, w.buf), err
}

func (w *windowReader) Seek(off int64, whence int) (int64, error) { return w.f.Seek(off, whence) }

// pageBufs keeps the page buffers of the ParquetMatrix readers of a
// process for reuse, from one file to the next.
var pageBufs = parquetpage.NewSpares(96 << 20)
