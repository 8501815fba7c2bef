package data

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parquetpage"
)

// matrixPageDecoding lets a ParquetMatrix decode PLAIN float32 pages
// itself (tests turn it off to compare with the column reader's path).
var matrixPageDecoding = littleEndian()

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// matrixOwnPages lets a ParquetMatrix walk the pages of a mapped file
// itself (tests turn it off to compare with arrow-go's page reader).
var matrixOwnPages = true

// pageChunk reports whether a column chunk can be read by a pageCursor:
// values PLAIN or dictionary-encoded (the dictionary PLAIN), levels RLE.
// parquet-mr (Spark) lists BIT_PACKED for the levels of required columns,
// which have none.
func pageChunk(cc *metadata.ColumnChunkMetaData) bool {
	if !matrixPageDecoding {
		return false
	}
	for _, e := range cc.Encodings() {
		switch e {
		case parquet.Encodings.Plain, parquet.Encodings.RLE, parquet.Encodings.PlainDict, parquet.Encodings.RLEDict, parquet.Encodings.BitPacked:
		default:
			return false
		}
	}
	return true
}

// dictEncoded reports whether values of encoding e are dictionary
// indices.
func dictEncoded(e parquet.Encoding) bool {
	return e == parquet.Encodings.RLEDict || e == parquet.Encodings.PlainDict
}

// pageCursor reads the float32 values of one column chunk page by page,
// the pages coming from arrow-go's page reader (pr) or, in a mapped file,
// walked by its parquetpage.Walker (headers decoded and pages
// decompressed straight from the mapping, into the caller's buffer when a
// page's values are all it holds: see takeInto). The values of a tile of
// rows within a page without nulls are a slice of the page, not a copy.
type pageCursor struct {
	// The walker of the chunk's pages in the mapping; its MaxDef and
	// MaxRep are the column's, its Page numbers the pages of either
	// source for errors.
	parquetpage.Walker
	pr     file.PageReader
	on     bool      // reading a chunk (else the column reader is)
	vals   []float32 // values of the current page not yet taken
	defs   []int16   // levels of the rows not yet taken when the page has nulls, else nil
	rows   int       // rows of the current page not yet taken
	levels []int16   // buffer of defs
	dict   []float32 // the chunk's dictionary (nil before its page)
	// A list column's values (parquet_vector_pages.go): MaxRep is 1,
	// the walker counts values, vpos is the position in its row of the
	// next value.
	vpos  int
	spill *[32 << 10]byte // ValuesBefore's buffer for a v1 page's levels
	// dictFinite: every value of dict is finite. curDict: the current
	// page's values come from dict. tookDict: every value the last
	// takeInto wrote came from dict (or is a null's zero), so they are
	// finite when dictFinite is.
	dictFinite, curDict, tookDict bool
	dictBuf                       []float32
	fbuf                          []float32 // values decoded from the dictionary, or moved to be aligned
	// narrow: the dictionary has at most 256 values, all finite; then a
	// dictionary page without nulls, of indices of at most 8 bits, is
	// kept as its indices (idx, with vals nil), which tab (the
	// dictionary, its first len(dict) entries) turns into values.
	narrow bool
	tab    *[256]float32
	idx    []uint8 // indices of the current page not yet taken
	ibuf   []byte  // buffer of idx (from pageBufs)
	// skew: the buffers' data start this many bytes (a multiple of 64)
	// into their allocations from pageBufs, which are aligned to their
	// power-of-two sizes: so that the pages of the sixteen columns a tile
	// transposes, read in step, do not all map to the same cache sets.
	skew int
	buf  []byte // decompressed pages (from pageBufs)
}

// errPage is the error of a page a pageCursor cannot read.
var errPage = parquetpage.ErrPage

// newPageCursor returns the cursor of a column whose values have
// definition levels up to maxDef and repetition levels up to maxRep.
func newPageCursor(maxDef, maxRep int16) *pageCursor {
	c := &pageCursor{}
	c.MaxDef, c.MaxRep = maxDef, maxRep
	c.Dictionary = func(b []byte, n int, enc parquetpage.Encoding) error { return c.setDict(b, n, parquet.Encoding(enc)) }
	c.Buffer = c.buffer
	return c
}

// startPages points c at a column chunk of the mapping whose row group
// has rows rows (values, for a list column).
func (c *pageCursor) startPages(chunk []byte, codec compress.Compression, rows int64) error {
	c.reset()
	c.pr, c.on = nil, true
	var other parquetpage.Decompressor
	switch codec {
	case compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd:
	default:
		cd, err := compress.GetCodec(codec)
		if err != nil {
			return err
		}
		other = func(dst, src []byte) ([]byte, error) { return compress.Decode(cd, dst, src) }
	}
	return c.Start(chunk, parquetpage.Codec(codec), other, int(rows))
}

// startReader points c at arrow-go's pages of a column chunk.
func (c *pageCursor) startReader(pr file.PageReader) {
	c.reset()
	c.pr, c.on = pr, true
}

func (c *pageCursor) reset() {
	c.Walker.Reset()
	c.rows, c.vals, c.idx, c.defs, c.dict, c.vpos = 0, nil, nil, nil, nil, 0
	c.dictFinite, c.curDict, c.tookDict, c.narrow = false, false, false, false
}

// close releases the page reader and the buffers.
func (c *pageCursor) close() {
	if c.pr != nil {
		c.pr.Close()
		c.pr = nil
	}
	c.reset()
	c.on = false
}

// release gives the page buffers back to pageBufs.
func (c *pageCursor) release() {
	c.releaseFloats()
	if c.ibuf != nil {
		pageBufs.Free(c.ibuf)
		c.ibuf = nil
	}
	if c.buf != nil {
		pageBufs.Free(c.buf)
		c.buf = nil
	}
}

// buffer returns a page buffer of n bytes.
func (c *pageCursor) buffer(n int) []byte { return c.reused(&c.buf, n) }

// reused returns n bytes of *buf, skewed, first replaced by a bigger
// buffer from pageBufs if it is too small.
func (c *pageCursor) reused(buf *[]byte, n int) []byte {
	if cap(*buf) < n+c.skew {
		if *buf != nil {
			pageBufs.Free(*buf)
		}
		*buf = pageBufs.Allocate(n + c.skew)
	}
	return (*buf)[c.skew : c.skew+n]
}

// take returns the values of the next n rows: a slice of the current
// page's values (vals) or of its dictionary indices (idx, which c.tab
// turns into values), or scratch (len ≥ n) filled from several pages or
// with nulls spread out (zeros, their rows r0+i appended to nulls as
// column col). Like takeInto, it sets tookDict.
func (c *pageCursor) take(n int, scratch []float32, r0, col int, nulls []NullCell) (vals []float32, idx []uint8, _ []NullCell, err error) {
	if c.rows == 0 {
		if c.pr == nil {
			// A page of fewer rows goes straight to scratch.
			if err := c.Peek(); err != nil {
				return nil, nil, nulls, err
			}
			if int(c.Hdr.NumValues) < n {
				return scratch[:n], nil, nulls, c.takeInto(scratch, 0, n, r0, col, &nulls)
			}
		}
		if err := c.next(); err != nil {
			return nil, nil, nulls, err
		}
	}
	if c.rows >= n && c.defs == nil {
		c.tookDict = c.curDict
		c.rows -= n
		if c.idx != nil {
			idx, c.idx = c.idx[:n:n], c.idx[n:]
			return nil, idx, nulls, nil
		}
		vals, c.vals = c.vals[:n:n], c.vals[n:]
		return vals, nil, nulls, nil
	}
	return scratch[:n], nil, nulls, c.takeInto(scratch, 0, n, r0, col, &nulls)
}

// takeInto writes the values of the next n rows to x[off:off+n], zeros
// for nulls (their rows r0+i appended to nulls as column col). A page of
// the mapping whose rows lie within them and that has no nulls is
// decompressed (or its dictionary indices decoded) straight into x.
func (c *pageCursor) takeInto(x []float32, off, n, r0, col int, nulls *[]NullCell) error {
	out := x[off : off+n]
	c.tookDict = true
	for i := 0; i < n; {
		if c.rows == 0 {
			if c.pr != nil {
				if err := c.next(); err != nil {
					return err
				}
				continue
			}
			if err := c.Peek(); err != nil {
				return err
			}
			nv := int(c.Hdr.NumValues)
			done, err := c.loadOwn(x, off+i, nv <= n-i)
			if err != nil {
				return err
			}
			if done {
				c.tookDict = c.tookDict && dictEncoded(parquet.Encoding(c.Hdr.Encoding))
				i += nv
			}
			continue
		}
		k := min(c.rows, n-i)
		c.tookDict = c.tookDict && c.curDict
		if c.idx != nil {
			kernel.GatherF32U8(out[i:i+k], c.tab, c.idx[:k])
			c.idx = c.idx[k:]
		} else if c.defs == nil {
			copy(out[i:i+k], c.vals[:k])
			c.vals = c.vals[k:]
		} else {
			v := 0
			for r, d := range c.defs[:k] {
				if d == c.MaxDef {
					out[i+r] = c.vals[v]
					v++
				} else {
					out[i+r] = 0
					*nulls = append(*nulls, NullCell{Row: r0 + i + r, Col: col})
				}
			}
			c.vals, c.defs = c.vals[v:], c.defs[k:]
		}
		c.rows -= k
		i += k
	}
	return nil
}

// next moves to the next data page.
func (c *pageCursor) next() error {
	if c.pr == nil {
		return c.nextOwn()
	}
	for {
		if !c.pr.Next() {
			if err := c.pr.Err(); err != nil {
				return fmt.Errorf("page %d: %w", c.Page+1, err)
			}
			return fmt.Errorf("page %d: the column chunk ends before the row group's rows: %w", c.Page+1, errPage)
		}
		c.Page++
		if p, ok := c.pr.Page().(*file.DictionaryPage); ok {
			if err := c.setDict(p.Data(), int(p.NumValues()), parquet.Encoding(p.Encoding())); err != nil {
				return err
			}
			continue
		}
		break
	}
	var data, levels []byte
	var nulls int
	var enc parquet.Encoding
	switch p := c.pr.Page().(type) {
	case *file.DataPageV1:
		enc = parquet.Encoding(p.Encoding())
		data = p.Data()
		if c.MaxDef > 0 {
			var err error
			if levels, data, err = c.splitV1(data, p.DefinitionLevelEncoding()); err != nil {
				return err
			}
			nulls = -1 // unknown
		}
	case *file.DataPageV2:
		enc = parquet.Encoding(p.Encoding())
		data = p.Data()
		dl, rl := int(p.DefinitionLevelByteLen()), int(p.RepetitionLevelByteLen())
		if rl != 0 || dl < 0 || dl > len(data) || (c.MaxDef == 0 && dl != 0) {
			return fmt.Errorf("page %d: %d bytes of repetition and %d of definition levels in a page of %d: %w", c.Page, rl, dl, len(data), errPage)
		}
		levels, data = data[:dl], data[dl:]
		nulls = int(p.NumNulls())
	default:
		return fmt.Errorf("page %d: a %T where a data page was expected: %w", c.Page, p, errPage)
	}
	return c.setPage(enc, levels, data, int(c.pr.Page().NumValues()), nulls)
}

// splitV1 splits a v1 page into its definition levels (4 bytes of
// length, then RLE) and its values.
func (c *pageCursor) splitV1(data []byte, enc parquet.Encoding) (levels, values []byte, err error) {
	if enc != parquet.Encodings.RLE || len(data) < 4 {
		return nil, nil, fmt.Errorf("page %d: definition levels of %s encoding or missing: %w", c.Page, enc, errPage)
	}
	l := binary.LittleEndian.Uint32(data)
	if uint64(l) > uint64(len(data)-4) {
		return nil, nil, fmt.Errorf("page %d: %d bytes of definition levels in a page of %d: %w", c.Page, l, len(data), errPage)
	}
	return data[4 : 4+l], data[4+l:], nil
}

// setDict keeps the n PLAIN float32 values of a dictionary page.
func (c *pageCursor) setDict(b []byte, n int, enc parquet.Encoding) error {
	if c.dict != nil {
		return fmt.Errorf("page %d: a second dictionary page: %w", c.Page, errPage)
	}
	if enc != parquet.Encodings.Plain && enc != parquet.Encodings.PlainDict {
		return fmt.Errorf("page %d: a dictionary of %s encoding: %w", c.Page, enc, errPage)
	}
	if n < 0 || len(b) != 4*n {
		return fmt.Errorf("page %d: a dictionary of %d values in %d bytes: %w", c.Page, n, len(b), errPage)
	}
	if cap(c.dictBuf) < n {
		c.dictBuf = make([]float32, n)
	}
	d := c.dictBuf[:n]
	for i := range d {
		d[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	c.dict, c.dictFinite = d, kernel.FiniteF32(d)
	c.narrow = c.dictFinite && n <= 256
	if c.narrow {
		if c.tab == nil {
			c.tab = new([256]float32)
		}
		copy(c.tab[:], d)
	}
	return nil
}

// setPage makes a decompressed data page of n rows the current one:
// levels (nil without nulls), data its values, nulls their number or -1
// if unknown.
func (c *pageCursor) setPage(enc parquet.Encoding, levels, data []byte, n, nulls int) error {
	if n < 0 || n > parquetpage.MaxPageValues {
		return fmt.Errorf("page %d: %d values: %w", c.Page, n, errPage)
	}
	present := n
	c.defs = nil
	if c.MaxDef > 0 && nulls != 0 && !parquetpage.AllLevels(levels, n, c.MaxDef) {
		if cap(c.levels) < n {
			c.levels = make([]int16, n)
		}
		c.defs = c.levels[:n]
		if err := parquetpage.DecodeLevels(c.defs, levels, c.MaxDef); err != nil {
			return fmt.Errorf("page %d: definition levels: %w", c.Page, err)
		}
		present = 0
		for _, d := range c.defs {
			if d == c.MaxDef {
				present++
			}
		}
	}
	c.vals, c.idx = nil, nil
	c.curDict = dictEncoded(enc)
	switch enc {
	case parquet.Encodings.Plain:
		if len(data) < 4*present {
			return fmt.Errorf("page %d: %d bytes for %d float32 values: %w", c.Page, len(data), present, errPage)
		}
		if present > 0 {
			if uintptr(unsafe.Pointer(&data[0]))%4 == 0 {
				c.vals = unsafe.Slice((*float32)(unsafe.Pointer(&data[0])), present)
			} else {
				c.vals = c.floats(present)
				copy(asBytes(c.vals), data)
			}
		}
	case parquet.Encodings.RLEDict, parquet.Encodings.PlainDict:
		if c.dict == nil {
			return fmt.Errorf("page %d: dictionary indices without a dictionary page: %w", c.Page, errPage)
		}
		if c.narrow && c.defs == nil && present > 0 && len(data) > 0 && data[0] <= 8 {
			c.idx = c.bytes(present)
			if err := parquetpage.DecodeDictIdx8(c.idx, len(c.dict), data); err != nil {
				return fmt.Errorf("page %d: %w", c.Page, err)
			}
			break
		}
		c.vals = c.floats(present)
		if err := parquetpage.DecodeDictF32(c.vals, c.dict, data); err != nil {
			return fmt.Errorf("page %d: %w", c.Page, err)
		}
	default:
		return fmt.Errorf("page %d: values of %s encoding: %w", c.Page, enc, errPage)
	}
	c.rows = n
	return nil
}

// floats returns the values buffer, of n values (from pageBufs).
func (c *pageCursor) floats(n int) []float32 {
	sk := c.skew / 4
	if cap(c.fbuf) < n+sk {
		c.releaseFloats()
		b := pageBufs.Allocate(4 * (n + sk))
		c.fbuf = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)/4)
	}
	return c.fbuf[sk : sk+n]
}

// bytes returns the indices buffer, of n bytes (from pageBufs).
func (c *pageCursor) bytes(n int) []byte { return c.reused(&c.ibuf, n) }

func (c *pageCursor) releaseFloats() {
	if c.fbuf != nil {
		pageBufs.Free(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.fbuf))), 4*cap(c.fbuf)))
		c.fbuf = nil
	}
}

// asBytes is the bytes of x.
func asBytes(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
}

// readDirect reads the peeked page, of len(out) values and nothing
// else, into out.
func (c *pageCursor) readDirect(out []float32) error {
	if parquet.Encoding(c.Hdr.Encoding) == parquet.Encodings.Plain {
		if int(c.Hdr.Uncompressed)-int(c.Hdr.DefLen) != 4*len(out) {
			return fmt.Errorf("page %d: %d bytes for %d float32 values: %w", c.Page+1, c.Hdr.Uncompressed-c.Hdr.DefLen, len(out), errPage)
		}
		_, _, err := c.Values(asBytes(out))
		return err
	}
	_, b, err := c.Values(nil)
	if err != nil {
		return err
	}
	if err := parquetpage.DecodeDictF32(out, c.dict, b); err != nil {
		return fmt.Errorf("page %d: %w", c.Page, err)
	}
	return nil
}

// nextOwn makes the chunk's next data page the current one.
func (c *pageCursor) nextOwn() error {
	if err := c.Peek(); err != nil {
		return err
	}
	_, err := c.loadOwn(nil, 0, false)
	return err
}

// maxLevelBytes bounds the bytes of levels in front of a v1 page's values
// that loadOwn decompresses into the caller's buffer.
const maxLevelBytes = 64

// loadOwn reads the peeked data page. If into, its values go straight to
// x[at:] when it has no nulls (done), else it becomes the current page.
func (c *pageCursor) loadOwn(x []float32, at int, into bool) (done bool, err error) {
	h := c.Hdr
	nv := int(h.NumValues)
	enc := parquet.Encoding(h.Encoding)
	if into && c.Direct() {
		return true, c.readDirect(x[at : at+nv])
	}
	if into && h.Type == parquetpage.PageData && enc == parquet.Encodings.Plain && (c.Compressed()) {
		// A v1 page of a nullable column: its definition levels come
		// first. Decompressed into x just before the rows' place, the
		// values land where they belong; what the levels overwrote is
		// put back.
		if p := int(h.Uncompressed) - 4*nv; p >= 4 && p <= maxLevelBytes && 4*at >= p {
			return c.loadBefore(x, at, p)
		}
	}
	levels, data, err := c.Values(nil)
	if err != nil {
		return false, err
	}
	nulls := int(h.NumNulls)
	if h.Type == parquetpage.PageData {
		nulls = 0
		if c.MaxDef > 0 {
			if levels, data, err = c.splitV1(data, parquet.Encoding(h.DefEncoding)); err != nil {
				return false, err
			}
			nulls = -1
		}
	}
	if into && (nulls == 0 || parquetpage.AllLevels(levels, nv, c.MaxDef)) {
		return true, c.placeValues(x[at:at+nv], enc, data)
	}
	return false, c.setPage(enc, levels, data, nv, nulls)
}

// placeValues writes the values of a page without nulls to out.
func (c *pageCursor) placeValues(out []float32, enc parquet.Encoding, data []byte) error {
	switch enc {
	case parquet.Encodings.Plain:
		if len(data) < 4*len(out) {
			return fmt.Errorf("page %d: %d bytes for %d float32 values: %w", c.Page, len(data), len(out), errPage)
		}
		copy(asBytes(out), data)
	default: // a dictionary encoding (checkData)
		if err := parquetpage.DecodeDictF32(out, c.dict, data); err != nil {
			return fmt.Errorf("page %d: %w", c.Page, err)
		}
	}
	return nil
}

// loadBefore decompresses the peeked v1 PLAIN page, of p bytes of levels
// before its values, into x so that its values start at x[at]. Without
// nulls it is done; with nulls, the page is moved to the page buffer and
// becomes the current page.
func (c *pageCursor) loadBefore(x []float32, at, p int) (bool, error) {
	h := c.Hdr
	nv := int(h.NumValues)
	xb := asBytes(x)
	var buf [2 * maxLevelBytes]byte
	front, err := c.ValuesBefore(asBytes(x), 4*at, p, buf[:])
	if err != nil {
		return false, err
	}
	if parquet.Encoding(h.DefEncoding) == parquet.Encodings.RLE && binary.LittleEndian.Uint32(front[:]) == uint32(p-4) && parquetpage.AllLevels(front[4:p], nv, c.MaxDef) {
		return true, nil
	}
	// Nulls: the page as decompressed, in the page buffer.
	b := c.buffer(int(h.Uncompressed))
	copy(b, front[:p])
	copy(b[p:], xb[4*at:4*(at+nv)])
	levels, vals, err := c.splitV1(b, parquet.Encoding(h.DefEncoding))
	if err != nil {
		return false, err
	}
	return false, c.setPage(parquet.Encodings.Plain, levels, vals, nv, -1)
}
