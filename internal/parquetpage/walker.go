package parquetpage

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// MaxPageBytes bounds the decompressed size of a page and MaxPageValues
// its number of values (writers cut pages at about a megabyte).
const (
	MaxPageBytes  = 256 << 20
	MaxPageValues = 64 << 20
)

// Walker walks the pages of one column chunk in place, in a mapped file:
// it decodes each page header (ParseHeader), checks its sizes against
// the chunk and the row group before any allocation, reads the
// dictionary page on the way (handing its values to Dictionary), skips
// index pages, and decompresses a data page's values straight from the
// chunk's bytes (Snappy and zstd itself, other codecs through a
// Decompressor), into the caller's buffer when one is given. A Walker
// knows bytes and levels, not the values: its caller decodes them (a
// dictionary page is checked to hold 4-byte values).
//
// A reader sets MaxDef, MaxRep, Dictionary and Buffer, then calls Start
// for each column chunk, Peek before each data page, and Values (or
// ValuesBefore) to read it.
type Walker struct {
	MaxDef, MaxRep int16
	// Page is the ordinal (1-based) of the page read last, for errors.
	Page int
	// Hdr is the header of the data page peeked.
	Hdr Header
	// Dictionary is given the decompressed bytes of the chunk's
	// dictionary page, its number of values and its encoding.
	Dictionary func(b []byte, n int, enc Encoding) error
	// Buffer returns a buffer of n bytes for a page decompressed by
	// Values without a destination; it may be the one returned last.
	Buffer func(n int) []byte

	chunk    []byte // the chunk's bytes not yet read, in the mapping
	other    Decompressor
	snappy   bool
	zstd     bool
	rowsLeft int // rows (values of a list column) of the row group not yet in a page
	hdrLen   int
	peeked   bool
	dict     bool // the chunk's dictionary page was read
}

// Start points w at a column chunk's bytes whose row group has rows
// values of the column, compressed by codec (other decompresses codecs
// other than Uncompressed, Snappy and Zstd).
func (w *Walker) Start(chunk []byte, codec Codec, other Decompressor, rows int) error {
	w.chunk, w.rowsLeft, w.other, w.snappy, w.zstd = chunk, rows, nil, false, false
	w.Page, w.peeked, w.dict = 0, false, false
	switch codec {
	case Uncompressed:
	case Snappy:
		w.snappy = true
	case Zstd:
		w.zstd = true
	default:
		if other == nil {
			return fmt.Errorf("pages compressed by %s: no decompressor", codec)
		}
		w.other = other
	}
	return nil
}

// Reset forgets the chunk and the page peeked.
func (w *Walker) Reset() {
	w.Page, w.peeked, w.dict = 0, false, false
	w.chunk = nil
}

// zstdDecoder decodes the zstd pages of every Walker, its memory bounded
// by the largest page.
var zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(MaxPageBytes))
	if err != nil {
		panic(err) // options only
	}
	return d
})

// Peek reads the header of the chunk's next data page (reading the
// dictionary page and skipping index pages on the way) and checks its
// sizes against the chunk and the row group. A page peeked stays peeked
// until Values reads it.
func (w *Walker) Peek() error {
	for !w.peeked {
		if len(w.chunk) == 0 {
			return fmt.Errorf("page %d: the column chunk ends before the row group's rows: %w", w.Page+1, ErrPage)
		}
		h, hl, err := ParseHeader(w.chunk)
		if err != nil {
			return fmt.Errorf("page %d: %w", w.Page+1, err)
		}
		if int64(h.Compressed) > int64(len(w.chunk)-hl) {
			return fmt.Errorf("page %d: %d bytes where the column chunk has %d left: %w", w.Page+1, h.Compressed, len(w.chunk)-hl, ErrPage)
		}
		if h.Uncompressed > MaxPageBytes {
			return fmt.Errorf("page %d: %d bytes uncompressed: %w", w.Page+1, h.Uncompressed, ErrPage)
		}
		w.Hdr, w.hdrLen = h, hl
		switch h.Type {
		case PageDictionary:
			if err := w.readDict(); err != nil {
				return err
			}
		case PageData, PageDataV2:
			if err := w.checkData(); err != nil {
				return err
			}
			w.peeked = true
		default:
			w.Page++
			w.chunk = w.chunk[hl+int(h.Compressed):]
		}
	}
	return nil
}

// checkData checks the header of a data page against the row group.
func (w *Walker) checkData() error {
	h := &w.Hdr
	p := w.Page + 1
	if (h.Type == PageData && !h.HasData) || (h.Type == PageDataV2 && !h.HasV2) {
		return fmt.Errorf("page %d: a data page without its header: %w", p, ErrPage)
	}
	if h.NumValues < 0 || int(h.NumValues) > w.rowsLeft || h.NumValues > MaxPageValues {
		return fmt.Errorf("page %d: %d values where the row group has %d rows left: %w", p, h.NumValues, w.rowsLeft, ErrPage)
	}
	// Levels of at most 16 bits and indices of at most 32, in runs of a
	// byte at least.
	if int64(h.Uncompressed) > 16*int64(h.NumValues)+1024 {
		return fmt.Errorf("page %d: %d bytes for %d values: %w", p, h.Uncompressed, h.NumValues, ErrPage)
	}
	if h.Type == PageDataV2 {
		if (w.MaxRep == 0 && h.RepLen != 0) || h.RepLen < 0 || h.DefLen < 0 || h.RepLen+h.DefLen > h.Compressed || h.RepLen+h.DefLen > h.Uncompressed || (w.MaxDef == 0 && h.DefLen != 0) ||
			h.NumNulls < 0 || h.NumNulls > h.NumValues || (w.MaxDef == 0 && h.NumNulls != 0) {
			return fmt.Errorf("page %d: %d bytes of repetition and %d of definition levels, %d nulls, in a page of %d: %w",
				p, h.RepLen, h.DefLen, h.NumNulls, h.Compressed, ErrPage)
		}
	}
	switch Encoding(h.Encoding) {
	case Plain:
	case RLEDict, PlainDict:
		if !w.dict {
			return fmt.Errorf("page %d: dictionary indices without a dictionary page: %w", p, ErrPage)
		}
	default:
		return fmt.Errorf("page %d: values of %s encoding: %w", p, Encoding(h.Encoding), ErrPage)
	}
	return nil
}

// Direct reports whether the peeked page holds nothing but its values:
// a v1 page of a required column, or a v2 page without nulls.
func (w *Walker) Direct() bool {
	if w.Hdr.Type == PageData {
		return w.MaxDef == 0
	}
	return w.Hdr.NumNulls == 0
}

// Compressed reports whether the chunk's pages are compressed.
func (w *Walker) Compressed() bool { return w.other != nil || w.snappy || w.zstd }

// PeekedBody is the peeked page's bytes as stored (compressed), without
// moving past it.
func (w *Walker) PeekedBody() []byte { return w.chunk[w.hdrLen : w.hdrLen+int(w.Hdr.Compressed)] }

// body returns the peeked page's bytes and moves past it.
func (w *Walker) body() []byte {
	b := w.PeekedBody()
	w.chunk = w.chunk[w.hdrLen+int(w.Hdr.Compressed):]
	w.peeked = false
	w.Page++
	if w.Hdr.Type != PageDictionary {
		w.rowsLeft -= int(w.Hdr.NumValues)
	}
	return b
}

// Values returns the peeked page's value bytes (and the v2 levels
// before them), decompressed into dst if given and big enough, else into
// Buffer's; it moves past the page.
func (w *Walker) Values(dst []byte) (levels, vals []byte, err error) {
	h := w.Hdr
	b := w.body()
	compressed := w.Compressed()
	size := int(h.Uncompressed)
	if h.Type == PageDataV2 {
		levels, b = b[:h.RepLen+h.DefLen], b[h.RepLen+h.DefLen:]
		size -= int(h.RepLen + h.DefLen)
		compressed = compressed && h.ValuesCompressed
	}
	if !compressed {
		if len(b) != size {
			return nil, nil, fmt.Errorf("page %d: %d bytes uncompressed, the header says %d: %w", w.Page, len(b), size, ErrPage)
		}
		if dst != nil {
			copy(dst, b)
			return levels, dst, nil
		}
		return levels, b, nil
	}
	if w.snappy {
		// The block's length first: no allocation for a wrong one.
		if n, err := snappy.DecodedLen(b); err != nil {
			return nil, nil, fmt.Errorf("page %d: Snappy: %v: %w", w.Page, err, ErrPage)
		} else if n != size {
			return nil, nil, fmt.Errorf("page %d: a Snappy block of %d bytes where the header says %d: %w", w.Page, n, size, ErrPage)
		}
	}
	if dst == nil {
		dst = w.Buffer(size)
	}
	if len(dst) != size {
		return nil, nil, fmt.Errorf("page %d: %d bytes of values, the header says %d: %w", w.Page, len(dst), size, ErrPage)
	}
	out, err := w.decompress(dst, b, size)
	if err != nil {
		return nil, nil, err
	}
	if len(out) > 0 && &out[0] != &dst[0] {
		copy(dst, out)
	}
	return levels, dst, nil
}

// decompress decompresses page bytes b of size bytes into dst.
func (w *Walker) decompress(dst, b []byte, size int) ([]byte, error) {
	if w.snappy {
		out, err := snappy.Decode(dst, b)
		if err != nil {
			return nil, fmt.Errorf("page %d: Snappy: %v: %w", w.Page, err, ErrPage)
		}
		return out, nil
	}
	var out []byte
	var err error
	if w.zstd {
		// The frame's content size first, and the decoder's memory
		// bounded: no allocation for a wrong one.
		var zh zstd.Header
		if err := zh.Decode(b); err != nil {
			return nil, fmt.Errorf("page %d: zstd: %v: %w", w.Page, err, ErrPage)
		} else if zh.HasFCS && zh.FrameContentSize != uint64(size) {
			return nil, fmt.Errorf("page %d: a zstd frame of %d bytes where the header says %d: %w", w.Page, zh.FrameContentSize, size, ErrPage)
		}
		out, err = zstdDecoder().DecodeAll(b, dst[:0])
	} else {
		out, err = w.other(dst, b)
	}
	if err != nil {
		return nil, fmt.Errorf("page %d: decompressing: %v: %w", w.Page, err, ErrPage)
	}
	if len(out) != size {
		return nil, fmt.Errorf("page %d: %d bytes decompressed where the header says %d: %w", w.Page, len(out), size, ErrPage)
	}
	return out, nil
}

// ValuesBefore decompresses the peeked page, p bytes of levels then its
// values, into b so that the values start at b[at]: the levels land over
// the p bytes before, which are saved in buf and put back. It returns the
// levels, copied into buf (which holds 2p bytes at least).
func (w *Walker) ValuesBefore(b []byte, at, p int, buf []byte) ([]byte, error) {
	s := at - p
	saved, front := buf[:p], buf[p:2*p]
	copy(saved, b[s:at])
	_, page, err := w.Values(b[s : s+int(w.Hdr.Uncompressed)])
	copy(front, page[:min(p, len(page))])
	copy(b[s:at], saved)
	return front, err
}

// readDict reads the peeked dictionary page.
func (w *Walker) readDict() error {
	h := w.Hdr
	if !h.HasDict || h.NumValues < 0 || int64(h.Uncompressed) != 4*int64(h.NumValues) {
		return fmt.Errorf("page %d: a dictionary of %d values in %d bytes: %w", w.Page+1, h.NumValues, h.Uncompressed, ErrPage)
	}
	_, b, err := w.Values(nil)
	if err != nil {
		return err
	}
	if err := w.Dictionary(b, int(h.NumValues), Encoding(h.Encoding)); err != nil {
		return err
	}
	w.dict = true
	return nil
}
