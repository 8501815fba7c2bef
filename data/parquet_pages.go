package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
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
// walked by the cursor itself (chunk): Thrift headers decoded here and
// pages decompressed straight from the mapping, into the caller's
// buffer when a page's values are all it holds (see takeInto). The
// values of a tile of rows within a page without nulls are a slice of
// the page, not a copy.
type pageCursor struct {
	pr     file.PageReader
	on     bool // reading a chunk (else the column reader is)
	maxDef int16
	page   int       // ordinal of the current page (1-based) for errors
	vals   []float32 // values of the current page not yet taken
	defs   []int16   // levels of the rows not yet taken when the page has nulls, else nil
	rows   int       // rows of the current page not yet taken
	levels []int16   // buffer of defs
	dict   []float32 // the chunk's dictionary (nil before its page)
	// A list column's values (parquet_vector_pages.go): maxRep is 1,
	// rowsLeft counts values, vpos is the position in its row of the next
	// value.
	maxRep int16
	vpos   int
	spill  *[32 << 10]byte // valuesBefore's buffer for a v1 page's levels
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
	ibuf   []byte  // buffer of idx (from pagePool)
	// skew: the buffers' data start this many bytes (a multiple of 64)
	// into their pool allocations, which are aligned to their power-of-
	// two sizes: so that the pages of the sixteen columns a tile
	// transposes, read in step, do not all map to the same cache sets.
	skew int

	// Own pages.
	chunk    []byte         // the chunk's bytes not yet read, in the mapping
	codec    compress.Codec // other codecs; nil when none or Snappy or zstd
	snappy   bool
	zstd     bool
	rowsLeft int        // rows of the row group not yet in a page
	hdr      pageHeader // of the next data page when peeked
	hdrLen   int
	peeked   bool
	buf      []byte // decompressed pages (from pagePool)
}

// errPage is the error of a page a pageCursor cannot read.
var errPage = errors.New("bad page")

// maxPageBytes bounds the decompressed size of a page and maxPageValues
// its number of values (writers cut pages at about a megabyte).
const (
	maxPageBytes  = 256 << 20
	maxPageValues = 64 << 20
)

// startPages points c at a column chunk of the mapping whose row group
// has rows rows.
func (c *pageCursor) startPages(chunk []byte, codec compress.Compression, rows int64) error {
	c.reset()
	c.pr, c.chunk, c.rowsLeft, c.codec, c.snappy, c.zstd, c.on = nil, chunk, int(rows), nil, false, false, true
	switch codec {
	case compress.Codecs.Uncompressed:
	case compress.Codecs.Snappy:
		c.snappy = true
	case compress.Codecs.Zstd:
		c.zstd = true
	default:
		cd, err := compress.GetCodec(codec)
		if err != nil {
			return err
		}
		c.codec = cd
	}
	return nil
}

// startReader points c at arrow-go's pages of a column chunk.
func (c *pageCursor) startReader(pr file.PageReader) {
	c.reset()
	c.pr, c.chunk, c.on = pr, nil, true
}

func (c *pageCursor) reset() {
	c.page, c.rows, c.vals, c.idx, c.defs, c.dict, c.peeked, c.vpos = 0, 0, nil, nil, nil, nil, false, 0
	c.dictFinite, c.curDict, c.tookDict, c.narrow = false, false, false, false
}

// close releases the page reader and the buffers.
func (c *pageCursor) close() {
	if c.pr != nil {
		c.pr.Close()
		c.pr = nil
	}
	c.reset()
	c.chunk, c.on = nil, false
}

// release gives the page buffers back to the pool.
func (c *pageCursor) release() {
	c.releaseFloats()
	if c.ibuf != nil {
		pagePool.Free(c.ibuf)
		c.ibuf = nil
	}
	if c.buf != nil {
		pagePool.Free(c.buf)
		c.buf = nil
	}
}

// buffer returns a page buffer of n bytes.
func (c *pageCursor) buffer(n int) []byte { return c.pooled(&c.buf, n) }

// pooled returns n bytes of *buf, skewed, first replaced by a bigger
// buffer from pagePool if it is too small.
func (c *pageCursor) pooled(buf *[]byte, n int) []byte {
	if cap(*buf) < n+c.skew {
		if *buf != nil {
			pagePool.Free(*buf)
		}
		*buf = pagePool.Allocate(n + c.skew)
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
			if err := c.peek(); err != nil {
				return nil, nil, nulls, err
			}
			if int(c.hdr.numValues) < n {
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
			if err := c.peek(); err != nil {
				return err
			}
			nv := int(c.hdr.numValues)
			done, err := c.loadOwn(x, off+i, nv <= n-i)
			if err != nil {
				return err
			}
			if done {
				c.tookDict = c.tookDict && dictEncoded(parquet.Encoding(c.hdr.encoding))
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
				if d == c.maxDef {
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
				return fmt.Errorf("page %d: %w", c.page+1, err)
			}
			return fmt.Errorf("page %d: the column chunk ends before the row group's rows: %w", c.page+1, errPage)
		}
		c.page++
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
		if c.maxDef > 0 {
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
		if rl != 0 || dl < 0 || dl > len(data) || (c.maxDef == 0 && dl != 0) {
			return fmt.Errorf("page %d: %d bytes of repetition and %d of definition levels in a page of %d: %w", c.page, rl, dl, len(data), errPage)
		}
		levels, data = data[:dl], data[dl:]
		nulls = int(p.NumNulls())
	default:
		return fmt.Errorf("page %d: a %T where a data page was expected: %w", c.page, p, errPage)
	}
	return c.setPage(enc, levels, data, int(c.pr.Page().NumValues()), nulls)
}

// splitV1 splits a v1 page into its definition levels (4 bytes of
// length, then RLE) and its values.
func (c *pageCursor) splitV1(data []byte, enc parquet.Encoding) (levels, values []byte, err error) {
	if enc != parquet.Encodings.RLE || len(data) < 4 {
		return nil, nil, fmt.Errorf("page %d: definition levels of %s encoding or missing: %w", c.page, enc, errPage)
	}
	l := binary.LittleEndian.Uint32(data)
	if uint64(l) > uint64(len(data)-4) {
		return nil, nil, fmt.Errorf("page %d: %d bytes of definition levels in a page of %d: %w", c.page, l, len(data), errPage)
	}
	return data[4 : 4+l], data[4+l:], nil
}

// setDict keeps the n PLAIN float32 values of a dictionary page.
func (c *pageCursor) setDict(b []byte, n int, enc parquet.Encoding) error {
	if c.dict != nil {
		return fmt.Errorf("page %d: a second dictionary page: %w", c.page, errPage)
	}
	if enc != parquet.Encodings.Plain && enc != parquet.Encodings.PlainDict {
		return fmt.Errorf("page %d: a dictionary of %s encoding: %w", c.page, enc, errPage)
	}
	if n < 0 || len(b) != 4*n {
		return fmt.Errorf("page %d: a dictionary of %d values in %d bytes: %w", c.page, n, len(b), errPage)
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
	if n < 0 || n > maxPageValues {
		return fmt.Errorf("page %d: %d values: %w", c.page, n, errPage)
	}
	present := n
	c.defs = nil
	if c.maxDef > 0 && nulls != 0 && !allLevels(levels, n, c.maxDef) {
		if cap(c.levels) < n {
			c.levels = make([]int16, n)
		}
		c.defs = c.levels[:n]
		if err := decodeLevels(c.defs, levels, c.maxDef); err != nil {
			return fmt.Errorf("page %d: definition levels: %w", c.page, err)
		}
		present = 0
		for _, d := range c.defs {
			if d == c.maxDef {
				present++
			}
		}
	}
	c.vals, c.idx = nil, nil
	c.curDict = dictEncoded(enc)
	switch enc {
	case parquet.Encodings.Plain:
		if len(data) < 4*present {
			return fmt.Errorf("page %d: %d bytes for %d float32 values: %w", c.page, len(data), present, errPage)
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
			return fmt.Errorf("page %d: dictionary indices without a dictionary page: %w", c.page, errPage)
		}
		if c.narrow && c.defs == nil && present > 0 && len(data) > 0 && data[0] <= 8 {
			c.idx = c.bytes(present)
			if err := decodeDictIdx8(c.idx, len(c.dict), data); err != nil {
				return fmt.Errorf("page %d: %w", c.page, err)
			}
			break
		}
		c.vals = c.floats(present)
		if err := decodeDictF32(c.vals, c.dict, data); err != nil {
			return fmt.Errorf("page %d: %w", c.page, err)
		}
	default:
		return fmt.Errorf("page %d: values of %s encoding: %w", c.page, enc, errPage)
	}
	c.rows = n
	return nil
}

// zstdDecoder decodes the zstd pages of every ParquetMatrix, its memory
// bounded by the largest page.
var zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxPageBytes))
	if err != nil {
		panic(err) // options only
	}
	return d
})

// floats returns the values buffer, of n values (from pagePool).
func (c *pageCursor) floats(n int) []float32 {
	sk := c.skew / 4
	if cap(c.fbuf) < n+sk {
		c.releaseFloats()
		b := pagePool.Allocate(4 * (n + sk))
		c.fbuf = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)/4)
	}
	return c.fbuf[sk : sk+n]
}

// bytes returns the indices buffer, of n bytes (from pagePool).
func (c *pageCursor) bytes(n int) []byte { return c.pooled(&c.ibuf, n) }

func (c *pageCursor) releaseFloats() {
	if c.fbuf != nil {
		pagePool.Free(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c.fbuf))), 4*cap(c.fbuf)))
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

// peek reads the header of the chunk's next data page (reading the
// dictionary page and skipping index pages on the way) and checks its
// sizes against the chunk and the row group.
func (c *pageCursor) peek() error {
	for !c.peeked {
		if len(c.chunk) == 0 {
			return fmt.Errorf("page %d: the column chunk ends before the row group's rows: %w", c.page+1, errPage)
		}
		h, hl, err := parsePageHeader(c.chunk)
		if err != nil {
			return fmt.Errorf("page %d: %w", c.page+1, err)
		}
		if int64(h.compressed) > int64(len(c.chunk)-hl) {
			return fmt.Errorf("page %d: %d bytes where the column chunk has %d left: %w", c.page+1, h.compressed, len(c.chunk)-hl, errPage)
		}
		if h.uncompressed > maxPageBytes {
			return fmt.Errorf("page %d: %d bytes uncompressed: %w", c.page+1, h.uncompressed, errPage)
		}
		c.hdr, c.hdrLen = h, hl
		switch h.typ {
		case pageDictionary:
			if err := c.readDict(); err != nil {
				return err
			}
		case pageData, pageDataV2:
			if err := c.checkData(); err != nil {
				return err
			}
			c.peeked = true
		default:
			c.page++
			c.chunk = c.chunk[hl+int(h.compressed):]
		}
	}
	return nil
}

// checkData checks the header of a data page against the row group.
func (c *pageCursor) checkData() error {
	h := &c.hdr
	p := c.page + 1
	if (h.typ == pageData && !h.data) || (h.typ == pageDataV2 && !h.v2) {
		return fmt.Errorf("page %d: a data page without its header: %w", p, errPage)
	}
	if h.numValues < 0 || int(h.numValues) > c.rowsLeft || h.numValues > maxPageValues {
		return fmt.Errorf("page %d: %d values where the row group has %d rows left: %w", p, h.numValues, c.rowsLeft, errPage)
	}
	// Levels of at most 16 bits and indices of at most 32, in runs of a
	// byte at least.
	if int64(h.uncompressed) > 16*int64(h.numValues)+1024 {
		return fmt.Errorf("page %d: %d bytes for %d values: %w", p, h.uncompressed, h.numValues, errPage)
	}
	if h.typ == pageDataV2 {
		if (c.maxRep == 0 && h.repLen != 0) || h.repLen < 0 || h.defLen < 0 || h.repLen+h.defLen > h.compressed || h.repLen+h.defLen > h.uncompressed || (c.maxDef == 0 && h.defLen != 0) ||
			h.numNulls < 0 || h.numNulls > h.numValues || (c.maxDef == 0 && h.numNulls != 0) {
			return fmt.Errorf("page %d: %d bytes of repetition and %d of definition levels, %d nulls, in a page of %d: %w",
				p, h.repLen, h.defLen, h.numNulls, h.compressed, errPage)
		}
	}
	switch parquet.Encoding(h.encoding) {
	case parquet.Encodings.Plain:
	case parquet.Encodings.RLEDict, parquet.Encodings.PlainDict:
		if c.dict == nil {
			return fmt.Errorf("page %d: dictionary indices without a dictionary page: %w", p, errPage)
		}
	default:
		return fmt.Errorf("page %d: values of %s encoding: %w", p, parquet.Encoding(h.encoding), errPage)
	}
	return nil
}

// direct reports whether the peeked page holds nothing but its values:
// a v1 page of a required column, or a v2 page without nulls.
func (c *pageCursor) direct() bool {
	if c.hdr.typ == pageData {
		return c.maxDef == 0
	}
	return c.hdr.numNulls == 0
}

// compressed reports whether the chunk's pages are compressed.
func (c *pageCursor) compressed() bool { return c.codec != nil || c.snappy || c.zstd }

// body returns the peeked page's bytes and moves past it.
func (c *pageCursor) body() []byte {
	b := c.chunk[c.hdrLen : c.hdrLen+int(c.hdr.compressed)]
	c.chunk = c.chunk[c.hdrLen+int(c.hdr.compressed):]
	c.peeked = false
	c.page++
	if c.hdr.typ != pageDictionary {
		c.rowsLeft -= int(c.hdr.numValues)
	}
	return b
}

// values returns the peeked page's value bytes (and the v2 definition
// levels before them), decompressed into dst if given and big enough,
// else into the page buffer; it moves past the page.
func (c *pageCursor) values(dst []byte) (levels, vals []byte, err error) {
	h := c.hdr
	b := c.body()
	compressed := c.compressed()
	size := int(h.uncompressed)
	if h.typ == pageDataV2 {
		levels, b = b[:h.repLen+h.defLen], b[h.repLen+h.defLen:]
		size -= int(h.repLen + h.defLen)
		compressed = compressed && h.valuesCompressed
	}
	if !compressed {
		if len(b) != size {
			return nil, nil, fmt.Errorf("page %d: %d bytes uncompressed, the header says %d: %w", c.page, len(b), size, errPage)
		}
		if dst != nil {
			copy(dst, b)
			return levels, dst, nil
		}
		return levels, b, nil
	}
	if c.snappy {
		// The block's length first: no allocation for a wrong one.
		if n, err := snappy.DecodedLen(b); err != nil {
			return nil, nil, fmt.Errorf("page %d: Snappy: %v: %w", c.page, err, errPage)
		} else if n != size {
			return nil, nil, fmt.Errorf("page %d: a Snappy block of %d bytes where the header says %d: %w", c.page, n, size, errPage)
		}
	}
	if dst == nil {
		dst = c.buffer(size)
	}
	if len(dst) != size {
		return nil, nil, fmt.Errorf("page %d: %d bytes of values, the header says %d: %w", c.page, len(dst), size, errPage)
	}
	if c.snappy {
		out, err := snappy.Decode(dst, b)
		if err != nil {
			return nil, nil, fmt.Errorf("page %d: Snappy: %v: %w", c.page, err, errPage)
		}
		if len(out) > 0 && &out[0] != &dst[0] {
			copy(dst, out)
		}
		return levels, dst, nil
	}
	var out []byte
	if c.zstd {
		// The frame's content size first, and the decoder's memory
		// bounded: no allocation for a wrong one.
		var zh zstd.Header
		if err := zh.Decode(b); err != nil {
			return nil, nil, fmt.Errorf("page %d: zstd: %v: %w", c.page, err, errPage)
		} else if zh.HasFCS && zh.FrameContentSize != uint64(size) {
			return nil, nil, fmt.Errorf("page %d: a zstd frame of %d bytes where the header says %d: %w", c.page, zh.FrameContentSize, size, errPage)
		}
		out, err = zstdDecoder().DecodeAll(b, dst[:0])
	} else {
		out, err = compress.Decode(c.codec, dst, b)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("page %d: decompressing: %v: %w", c.page, err, errPage)
	}
	if len(out) != size {
		return nil, nil, fmt.Errorf("page %d: %d bytes decompressed where the header says %d: %w", c.page, len(out), size, errPage)
	}
	if len(out) > 0 && &out[0] != &dst[0] {
		copy(dst, out)
	}
	return levels, dst, nil
}

// readDirect reads the peeked page, of len(out) values and nothing
// else, into out.
func (c *pageCursor) readDirect(out []float32) error {
	if parquet.Encoding(c.hdr.encoding) == parquet.Encodings.Plain {
		if int(c.hdr.uncompressed)-int(c.hdr.defLen) != 4*len(out) {
			return fmt.Errorf("page %d: %d bytes for %d float32 values: %w", c.page+1, c.hdr.uncompressed-c.hdr.defLen, len(out), errPage)
		}
		_, _, err := c.values(asBytes(out))
		return err
	}
	_, b, err := c.values(nil)
	if err != nil {
		return err
	}
	if err := decodeDictF32(out, c.dict, b); err != nil {
		return fmt.Errorf("page %d: %w", c.page, err)
	}
	return nil
}

// nextOwn makes the chunk's next data page the current one.
func (c *pageCursor) nextOwn() error {
	if err := c.peek(); err != nil {
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
	h := c.hdr
	nv := int(h.numValues)
	enc := parquet.Encoding(h.encoding)
	if into && c.direct() {
		return true, c.readDirect(x[at : at+nv])
	}
	if into && h.typ == pageData && enc == parquet.Encodings.Plain && (c.snappy || c.zstd || c.codec != nil) {
		// A v1 page of a nullable column: its definition levels come
		// first. Decompressed into x just before the rows' place, the
		// values land where they belong; what the levels overwrote is
		// put back.
		if p := int(h.uncompressed) - 4*nv; p >= 4 && p <= maxLevelBytes && 4*at >= p {
			return c.loadBefore(x, at, p)
		}
	}
	levels, data, err := c.values(nil)
	if err != nil {
		return false, err
	}
	nulls := int(h.numNulls)
	if h.typ == pageData {
		nulls = 0
		if c.maxDef > 0 {
			if levels, data, err = c.splitV1(data, parquet.Encoding(h.defEncoding)); err != nil {
				return false, err
			}
			nulls = -1
		}
	}
	if into && (nulls == 0 || allLevels(levels, nv, c.maxDef)) {
		return true, c.placeValues(x[at:at+nv], enc, data)
	}
	return false, c.setPage(enc, levels, data, nv, nulls)
}

// placeValues writes the values of a page without nulls to out.
func (c *pageCursor) placeValues(out []float32, enc parquet.Encoding, data []byte) error {
	switch enc {
	case parquet.Encodings.Plain:
		if len(data) < 4*len(out) {
			return fmt.Errorf("page %d: %d bytes for %d float32 values: %w", c.page, len(data), len(out), errPage)
		}
		copy(asBytes(out), data)
	default: // a dictionary encoding (checkData)
		if err := decodeDictF32(out, c.dict, data); err != nil {
			return fmt.Errorf("page %d: %w", c.page, err)
		}
	}
	return nil
}

// loadBefore decompresses the peeked v1 PLAIN page, of p bytes of levels
// before its values, into x so that its values start at x[at]. Without
// nulls it is done; with nulls, the page is moved to the page buffer and
// becomes the current page.
func (c *pageCursor) loadBefore(x []float32, at, p int) (bool, error) {
	h := c.hdr
	nv := int(h.numValues)
	xb := asBytes(x)
	var buf [2 * maxLevelBytes]byte
	front, err := c.valuesBefore(x, at, p, buf[:])
	if err != nil {
		return false, err
	}
	if parquet.Encoding(h.defEncoding) == parquet.Encodings.RLE && binary.LittleEndian.Uint32(front[:]) == uint32(p-4) && allLevels(front[4:p], nv, c.maxDef) {
		return true, nil
	}
	// Nulls: the page as decompressed, in the page buffer.
	b := c.buffer(int(h.uncompressed))
	copy(b, front[:p])
	copy(b[p:], xb[4*at:4*(at+nv)])
	levels, vals, err := c.splitV1(b, parquet.Encoding(h.defEncoding))
	if err != nil {
		return false, err
	}
	return false, c.setPage(parquet.Encodings.Plain, levels, vals, nv, -1)
}

// valuesBefore decompresses the peeked page, p bytes of levels then its
// values, into x so that the values start at x[at]: the levels land over
// the bytes before, which are saved in buf and put back. It returns the
// levels, copied into buf (which holds 2p bytes at least).
func (c *pageCursor) valuesBefore(x []float32, at, p int, buf []byte) ([]byte, error) {
	xb := asBytes(x)
	s := 4*at - p
	saved, front := buf[:p], buf[p:2*p]
	copy(saved, xb[s:4*at])
	_, page, err := c.values(xb[s : 4*(at+int(c.hdr.numValues))])
	copy(front, page[:min(p, len(page))])
	copy(xb[s:4*at], saved)
	return front, err
}

// readDict reads the peeked dictionary page.
func (c *pageCursor) readDict() error {
	h := c.hdr
	if !h.dict || h.numValues < 0 || int64(h.uncompressed) != 4*int64(h.numValues) {
		return fmt.Errorf("page %d: a dictionary of %d values in %d bytes: %w", c.page+1, h.numValues, h.uncompressed, errPage)
	}
	_, b, err := c.values(nil)
	if err != nil {
		return err
	}
	return c.setDict(b, int(h.numValues), parquet.Encoding(h.encoding))
}

// allLevels reports whether levels (RLE/bit-packed hybrid) starts with
// one run of at least n levels of max: the page has no nulls.
func allLevels(b []byte, n int, max int16) bool {
	h, k := binary.Uvarint(b)
	if k <= 0 || h&1 != 0 || h>>1 < uint64(n) {
		return false
	}
	w := (bits.Len16(uint16(max)) + 7) / 8
	if len(b) < k+w {
		return false
	}
	v := 0
	for i := range w {
		v |= int(b[k+i]) << (8 * i)
	}
	return v == int(max)
}

// decodeLevels decodes len(dst) levels of at most max from b, encoded
// in the RLE/bit-packed hybrid of the Parquet format (bit width that of
// max).
func decodeLevels(dst []int16, b []byte, max int16) error {
	return walkLevels(b, len(dst), max, func(v, at, k int) error {
		for j := range k {
			dst[at+j] = int16(v)
		}
		return nil
	})
}

// walkLevels reads n levels of at most max from b, encoded in the
// RLE/bit-packed hybrid of the Parquet format (bit width that of max),
// and calls run for each run of k levels of value v from level at on (a
// bit-packed group level by level, k = 1); an error from run stops it.
// Malformed runs are errPage.
func walkLevels(b []byte, n int, max int16, run func(v, at, k int) error) error {
	bw := bits.Len16(uint16(max))
	w := (bw + 7) / 8
	for i := 0; i < n; {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return fmt.Errorf("levels end after %d of %d: %w", i, n, errPage)
		}
		b = b[k:]
		if h&1 == 0 { // a run of one value
			if len(b) < w {
				return fmt.Errorf("levels end after %d of %d: %w", i, n, errPage)
			}
			v := 0
			for j := range w {
				v |= int(b[j]) << (8 * j)
			}
			b = b[w:]
			if v > int(max) {
				return fmt.Errorf("level %d above %d: %w", v, max, errPage)
			}
			r := int(min(h>>1, uint64(n-i)))
			if r > 0 {
				if err := run(v, i, r); err != nil {
					return err
				}
			}
			i += r
			continue
		}
		// Groups of eight values of bw bits, least significant first.
		g := h >> 1
		if g == 0 || g > uint64(len(b)) || int(g)*bw > len(b) {
			return fmt.Errorf("levels: %d groups of bit-packed levels in %d bytes: %w", g, len(b), errPage)
		}
		nb := int(g) * bw
		r := min(int(g)*8, n-i)
		mask := uint32(1)<<bw - 1
		for j := range r {
			bit := j * bw
			var x uint32
			for q := 0; q < 3 && bit/8+q < nb; q++ {
				x |= uint32(b[bit/8+q]) << (8 * q)
			}
			v := int(x >> (bit % 8) & mask)
			if v > int(max) {
				return fmt.Errorf("level %d above %d: %w", v, max, errPage)
			}
			if err := run(v, i+j, 1); err != nil {
				return err
			}
		}
		b = b[nb:]
		i += r
	}
	return nil
}
