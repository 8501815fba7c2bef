package data

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parquetpage"
)

// The pages of the one list<float32> column of a vector layout, read
// from the mapping like those of scalar columns (pageCursor and its parquetpage.Walker): when every
// row holds Width values, all present, the values of the chunk, page after
// page, are the row-major feature matrix itself, so each page's values go
// straight to the caller's batch (decompressed into it, or dictionary
// indices decoded into it) once its levels are checked to say so: a
// repetition level of 0 exactly at every Width-th value and the highest
// definition level everywhere. Anything else (a row of another length,
// an empty or null list, a null element) is ErrNotMatrix, and the caller
// reads the partition as record batches, which name the rows.

// errVectorLayout is the error of pages whose levels are not those of
// rows of Width values, all present.
var errVectorLayout = errors.New("rows of other lengths or nulls")

// readVectorOwn reads len(out)/Width rows of the list column into out,
// row-major, from the pages of c (in vector mode), adding the values to
// m.sum while they are in cache.
func (m *ParquetMatrix) readVectorOwn(c *pageCursor, out []float32) error {
	for off := 0; off < len(out); {
		if c.rows == 0 {
			if err := c.Peek(); err != nil {
				return err
			}
			nv := int(c.Hdr.NumValues)
			done, err := c.loadVector(out, off, m.width)
			if err != nil {
				return err
			}
			if done {
				m.sum += kernel.SumF32Wide(out[off : off+nv])
				off += nv
			}
			continue
		}
		k := min(c.rows, len(out)-off)
		copy(out[off:off+k], c.vals[:k])
		m.sum += kernel.SumF32Wide(out[off : off+k])
		c.vals, c.rows, off = c.vals[k:], c.rows-k, off+k
	}
	return nil
}

// loadVector reads the peeked data page of the list column: its levels
// are checked against rows of width values from position c.vpos of a row
// on; its values go to out[at:] when they fit there (done), else the page
// becomes the current one (c.vals).
func (c *pageCursor) loadVector(x []float32, at, width int) (done bool, err error) {
	h := c.Hdr
	nv := int(h.NumValues)
	enc := parquet.Encoding(h.Encoding)
	out := x[at:]
	fits := nv <= len(out)
	if h.Type == parquetpage.PageDataV2 {
		// Levels uncompressed in front: checked before the values are
		// read, which may then go straight to out.
		b := c.PeekedBody()
		if int(h.RepLen)+int(h.DefLen) > len(b) {
			return false, fmt.Errorf("page %d: %d bytes of levels in a page of %d: %w", c.Page+1, h.RepLen+h.DefLen, len(b), errPage)
		}
		if h.NumNulls != 0 {
			return false, fmt.Errorf("page %d: %d nulls: %w", c.Page+1, h.NumNulls, ErrNotMatrix)
		}
		if err := c.checkVectorLevels(b[:h.RepLen], b[h.RepLen:h.RepLen+h.DefLen], nv, width, c.Page+1); err != nil {
			return false, err
		}
		if fits && enc == parquet.Encodings.Plain {
			if int(h.Uncompressed)-int(h.RepLen)-int(h.DefLen) != 4*nv {
				return false, fmt.Errorf("page %d: %d bytes for %d float32 values: %w", c.Page+1, int(h.Uncompressed)-int(h.RepLen)-int(h.DefLen), nv, errPage)
			}
			_, _, err := c.Values(asBytes(out[:nv]))
			return err == nil, err
		}
		_, vals, err := c.Values(nil)
		if err != nil {
			return false, err
		}
		return c.placeVector(out, vals, enc, nv, fits)
	}
	// v1: repetition levels, definition levels and values in one
	// (compressed) block.
	if h.RepEncoding != int32(parquet.Encodings.RLE) || h.DefEncoding != int32(parquet.Encodings.RLE) {
		return false, fmt.Errorf("page %d: levels of %s and %s encoding: %w", c.Page+1, parquet.Encoding(h.RepEncoding), parquet.Encoding(h.DefEncoding), errPage)
	}
	if p := int(h.Uncompressed) - 4*nv; fits && enc == parquet.Encodings.Plain && c.Compressed() && p >= 8 && p <= 4*at && p <= maxVectorLevelBytes {
		// Decompressed straight into x, the levels spilling over the
		// values before at, which are put back once the levels are
		// checked.
		if c.spill == nil {
			c.spill = new([32 << 10]byte)
		}
		levels, err := c.ValuesBefore(asBytes(x), 4*at, p, c.spill[:])
		if err != nil {
			return false, err
		}
		if rest, err := c.vectorLevels(levels, nv, width); err != nil || len(rest) != 0 {
			if err == nil {
				err = fmt.Errorf("page %d: %d bytes of levels, %d more than they hold: %w", c.Page, p, len(rest), errPage)
			}
			return false, err
		}
		return true, nil
	}
	_, b, err := c.Values(nil)
	if err != nil {
		return false, err
	}
	if b, err = c.vectorLevels(b, nv, width); err != nil {
		return false, err
	}
	return c.placeVector(out, b, enc, nv, fits)
}

// maxVectorLevelBytes bounds the levels in front of a v1 page's values
// that loadVector decompresses into the caller's batch (about 4 bytes a
// row: a few hundred rows of a 1 MB page).
const maxVectorLevelBytes = len(pageCursor{}.spill) / 2

// vectorLevels checks the levels of a decompressed v1 page of nv values
// (see checkVectorLevels) and returns the bytes after them.
func (c *pageCursor) vectorLevels(b []byte, nv, width int) ([]byte, error) {
	var rep, def []byte
	for _, dst := range []*[]byte{&rep, &def} {
		if len(b) < 4 {
			return nil, fmt.Errorf("page %d: levels missing: %w", c.Page, errPage)
		}
		l := binary.LittleEndian.Uint32(b)
		if uint64(l) > uint64(len(b)-4) {
			return nil, fmt.Errorf("page %d: %d bytes of levels in a page of %d: %w", c.Page, l, len(b), errPage)
		}
		*dst, b = b[4:4+l], b[4+l:]
	}
	return b, c.checkVectorLevels(rep, def, nv, width, c.Page)
}

// placeVector puts the nv values of a decompressed page (vals, PLAIN
// or dictionary indices) at the front of out when fits, else makes them
// the current page.
func (c *pageCursor) placeVector(out []float32, vals []byte, enc parquet.Encoding, nv int, fits bool) (bool, error) {
	dst := out
	if !fits {
		dst = c.floats(nv)
	}
	dst = dst[:nv]
	if err := c.placeValues(dst, enc, vals); err != nil {
		return false, err
	}
	if fits {
		return true, nil
	}
	c.vals, c.rows = dst, nv
	return false, nil
}

// checkVectorLevels checks the levels of n values that follow value
// c.vpos of a row: repetition level 0 at the first value of every row of
// width values and 1 elsewhere, definition level c.MaxDef everywhere (no
// empty or null list, no null element); it moves c.vpos past them. page
// numbers the page for errors.
func (c *pageCursor) checkVectorLevels(rep, def []byte, n, width, page int) error {
	top := int(c.MaxDef)
	if err := checkRunLevels(def, n, c.MaxDef, func(v, _, _ int) bool { return v == top }); err != nil {
		return fmt.Errorf("page %d: definition levels: %w", page, err)
	}
	pos := c.vpos
	rowStarts := func(v, at, k int) bool {
		// k levels of value v from value at of the page on.
		p := (pos + at) % width
		if v == 0 {
			return width == 1 || (k == 1 && p == 0)
		}
		return width > 1 && p != 0 && p+k <= width
	}
	if err := checkRunLevels(rep, n, 1, rowStarts); err != nil {
		return fmt.Errorf("page %d: repetition levels: %w", page, err)
	}
	c.vpos = (pos + n) % width
	return nil
}

// checkRunLevels checks n levels of at most max, in the RLE/bit-packed
// hybrid of the Parquet format, run by run without decoding them: a run
// of k levels of value v from level at on must satisfy ok(v, at, k) (a
// bit-packed group is checked level by level, k = 1). Levels that fail
// are errVectorLayout and ErrNotMatrix; malformed runs errPage.
func checkRunLevels(b []byte, n int, max int16, ok func(v, at, k int) bool) error {
	return parquetpage.WalkLevels(b, n, max, func(v, at, k int) error {
		if !ok(v, at, k) {
			return fmt.Errorf("%d levels of %d from value %d on: %w: %w", k, v, at, errVectorLayout, ErrNotMatrix)
		}
		return nil
	})
}
