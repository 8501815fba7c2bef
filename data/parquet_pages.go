package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// matrixPageDecoding lets a ParquetMatrix decode PLAIN float32 pages
// itself (tests turn it off to compare with the column reader's path).
var matrixPageDecoding = littleEndian()

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// plainChunk reports whether a column chunk can be read by a
// pageCursor: no dictionary, values PLAIN and levels RLE only.
func plainChunk(cc *metadata.ColumnChunkMetaData) bool {
	if !matrixPageDecoding || cc.HasDictionaryPage() {
		return false
	}
	for _, e := range cc.Encodings() {
		if e != parquet.Encodings.Plain && e != parquet.Encodings.RLE {
			return false
		}
	}
	return true
}

// pageCursor reads the float32 values of one column chunk of PLAIN data
// pages (v1 or v2) straight from the decompressed pages: the values of a
// tile of rows within a page without nulls are a slice of the page, not
// a copy.
type pageCursor struct {
	pr     file.PageReader
	maxDef int16
	page   int       // ordinal of the current page (1-based) for errors
	vals   []float32 // values of the current page not yet taken
	defs   []int16   // levels of the rows not yet taken when the page has nulls, else nil
	rows   int       // rows of the current page not yet taken
	levels []int16   // buffer of defs
}

// errPage is the error of a page a pageCursor cannot read.
var errPage = errors.New("bad page")

// take returns the values of the next n rows: a slice of the current
// page, or scratch (len ≥ n) filled from several pages or with nulls
// spread out (zeros, their rows r0+i appended to nulls as column col).
func (c *pageCursor) take(n int, scratch []float32, r0, col int, nulls []NullCell) ([]float32, []NullCell, error) {
	if c.rows == 0 {
		if err := c.next(); err != nil {
			return nil, nulls, err
		}
	}
	if c.rows >= n && c.defs == nil {
		v := c.vals[:n:n]
		c.vals, c.rows = c.vals[n:], c.rows-n
		return v, nulls, nil
	}
	out := scratch[:n]
	for i := 0; i < n; {
		if c.rows == 0 {
			if err := c.next(); err != nil {
				return nil, nulls, err
			}
			continue
		}
		k := min(c.rows, n-i)
		if c.defs == nil {
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
					nulls = append(nulls, NullCell{Row: r0 + i + r, Col: col})
				}
			}
			c.vals, c.defs = c.vals[v:], c.defs[k:]
		}
		c.rows -= k
		i += k
	}
	return out, nulls, nil
}

// next moves to the next data page.
func (c *pageCursor) next() error {
	if !c.pr.Next() {
		if err := c.pr.Err(); err != nil {
			return fmt.Errorf("page %d: %w", c.page+1, err)
		}
		return fmt.Errorf("page %d: the column chunk ends before the row group's rows: %w", c.page+1, errPage)
	}
	c.page++
	var data, levels []byte
	var nulls int
	switch p := c.pr.Page().(type) {
	case *file.DataPageV1:
		if parquet.Encoding(p.Encoding()) != parquet.Encodings.Plain {
			return fmt.Errorf("page %d: %s encoding in a chunk said PLAIN: %w", c.page, parquet.Encoding(p.Encoding()), errPage)
		}
		data = p.Data()
		if c.maxDef > 0 {
			if p.DefinitionLevelEncoding() != parquet.Encodings.RLE || len(data) < 4 {
				return fmt.Errorf("page %d: definition levels of %s encoding or missing: %w", c.page, p.DefinitionLevelEncoding(), errPage)
			}
			l := binary.LittleEndian.Uint32(data)
			if uint64(l) > uint64(len(data)-4) {
				return fmt.Errorf("page %d: %d bytes of definition levels in a page of %d: %w", c.page, l, len(data), errPage)
			}
			levels, data = data[4:4+l], data[4+l:]
			nulls = -1 // unknown
		}
	case *file.DataPageV2:
		if parquet.Encoding(p.Encoding()) != parquet.Encodings.Plain {
			return fmt.Errorf("page %d: %s encoding in a chunk said PLAIN: %w", c.page, parquet.Encoding(p.Encoding()), errPage)
		}
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
	n := int(c.pr.Page().NumValues())
	if n < 0 {
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
	if len(data) < 4*present {
		return fmt.Errorf("page %d: %d bytes for %d float32 values: %w", c.page, len(data), present, errPage)
	}
	if present > 0 {
		c.vals = unsafe.Slice((*float32)(unsafe.Pointer(&data[0])), present)
	} else {
		c.vals = nil
	}
	c.rows = n
	return nil
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
	bw := bits.Len16(uint16(max))
	w := (bw + 7) / 8
	for i := 0; i < len(dst); {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return fmt.Errorf("levels end after %d of %d: %w", i, len(dst), errPage)
		}
		b = b[k:]
		if h&1 == 0 { // a run of one value
			if len(b) < w {
				return fmt.Errorf("levels end after %d of %d: %w", i, len(dst), errPage)
			}
			v := 0
			for j := range w {
				v |= int(b[j]) << (8 * j)
			}
			b = b[w:]
			if v > int(max) {
				return fmt.Errorf("level %d above %d: %w", v, max, errPage)
			}
			r := int(min(h>>1, uint64(len(dst)-i)))
			for j := range r {
				dst[i+j] = int16(v)
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
		r := min(int(g)*8, len(dst)-i)
		mask := uint32(1)<<bw - 1
		for j := range r {
			bit := j * bw
			var x uint32
			for q := 0; q < 3 && bit/8+q < nb; q++ {
				x |= uint32(b[bit/8+q]) << (8 * q)
			}
			v := int16(x >> (bit % 8) & mask)
			if v > max {
				return fmt.Errorf("level %d above %d: %w", v, max, errPage)
			}
			dst[i+j] = v
		}
		b = b[nb:]
		i += r
	}
	return nil
}
