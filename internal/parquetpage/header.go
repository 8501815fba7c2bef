package parquetpage

import (
	"encoding/binary"
	"fmt"
)

// The page headers of a Parquet column chunk are Thrift structs in the
// compact protocol (parquet-format's parquet.thrift: PageHeader,
// DataPageHeader, DataPageHeaderV2, DictionaryPageHeader; the protocol in
// Apache Thrift's doc/specs/thrift-compact-protocol.md). Only what the
// page walker needs is kept; every other field, statistics included,
// is skipped whatever its type.

// Parquet page types (PageType).
const (
	PageData       = 0
	PageIndex      = 1
	PageDictionary = 2
	PageDataV2     = 3
)

// Compact protocol types.
const (
	tcStop   = 0
	tcTrue   = 1
	tcFalse  = 2
	tcByte   = 3
	tcI16    = 4
	tcI32    = 5
	tcI64    = 6
	tcDouble = 7
	tcBinary = 8
	tcList   = 9
	tcSet    = 10
	tcMap    = 11
	tcStruct = 12
	tcUUID   = 13
)

// thriftMaxDepth bounds the nesting of structs, lists and maps skipped.
const thriftMaxDepth = 16

// Header is the part of a PageHeader the page walker reads.
type Header struct {
	Type                     int32 // PageData, PageIndex, PageDictionary or PageDataV2
	Uncompressed, Compressed int32 // the page's sizes in bytes
	NumValues                int32 // of the data or dictionary page
	Encoding                 int32 // of the values (an Encoding)
	DefEncoding, RepEncoding int32 // v1 pages
	NumNulls                 int32 // v2 pages
	DefLen, RepLen           int32 // v2 pages: bytes of levels before the values
	ValuesCompressed         bool  // v2 pages (is_compressed, true unless said)
	// Which of the three headers was present: DataPageHeader,
	// DictionaryPageHeader, DataPageHeaderV2.
	HasData, HasDict, HasV2 bool
}

// thriftReader decodes the compact protocol from b; the first error
// sticks and every later read returns zeros.
type thriftReader struct {
	b   []byte
	n   int // bytes read
	err error
}

func (r *thriftReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("page header: %s at byte %d: %w", what, r.n, ErrPage)
	}
	r.b = nil
}

func (r *thriftReader) byte() byte {
	if len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	r.n++
	return c
}

func (r *thriftReader) skipBytes(n uint64) {
	if n > uint64(len(r.b)) {
		r.fail("truncated")
		return
	}
	r.b = r.b[n:]
	r.n += int(n)
}

func (r *thriftReader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[k:]
	r.n += k
	return v
}

func zigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

// i32 reads a zigzag varint that must fit in 32 bits.
func (r *thriftReader) i32() int32 {
	v := zigzag(r.uvarint())
	if v != int64(int32(v)) {
		r.fail("i32 out of range")
		return 0
	}
	return int32(v)
}

// field reads a field header: its id and type (tcStop at the end of the
// struct). last is the id of the struct's previous field.
func (r *thriftReader) field(last *int16) (int16, byte) {
	h := r.byte()
	t := h & 0x0f
	if t == tcStop || r.err != nil {
		return 0, tcStop
	}
	if d := h >> 4; d != 0 {
		*last += int16(d)
	} else {
		v := zigzag(r.uvarint())
		if v != int64(int16(v)) {
			r.fail("field id out of range")
			return 0, tcStop
		}
		*last = int16(v)
	}
	return *last, t
}

// skip skips a value of type t (a field's: booleans carry no byte).
func (r *thriftReader) skip(t byte, depth int) {
	if depth > thriftMaxDepth {
		r.fail("nesting too deep")
		return
	}
	switch t {
	case tcTrue, tcFalse:
	case tcByte:
		r.byte()
	case tcI16, tcI32, tcI64:
		r.uvarint()
	case tcDouble:
		r.skipBytes(8)
	case tcBinary:
		r.skipBytes(r.uvarint())
	case tcList, tcSet:
		h := r.byte()
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			n = r.uvarint()
		}
		if n > uint64(len(r.b)) { // every element takes a byte at least
			r.fail("list longer than the header")
			return
		}
		for range n {
			r.skipElem(et, depth+1)
			if r.err != nil {
				return
			}
		}
	case tcMap:
		n := r.uvarint()
		if n == 0 {
			return
		}
		kv := r.byte()
		if n > uint64(len(r.b)) {
			r.fail("map longer than the header")
			return
		}
		for range n {
			r.skipElem(kv>>4, depth+1)
			r.skipElem(kv&0x0f, depth+1)
			if r.err != nil {
				return
			}
		}
	case tcStruct:
		r.skipStruct(depth + 1)
	case tcUUID:
		r.skipBytes(16)
	default:
		r.fail(fmt.Sprintf("unknown type %d", t))
	}
}

// skipElem skips an element of a list, set or map: a boolean is a byte.
func (r *thriftReader) skipElem(t byte, depth int) {
	if t == tcTrue || t == tcFalse {
		r.byte()
		return
	}
	r.skip(t, depth)
}

func (r *thriftReader) skipStruct(depth int) {
	if depth > thriftMaxDepth {
		r.fail("nesting too deep")
		return
	}
	var last int16
	for r.err == nil {
		_, t := r.field(&last)
		if t == tcStop {
			return
		}
		r.skip(t, depth)
	}
}

// i32Field reads an i32 field's value, an error if the field is of
// another type.
func (r *thriftReader) i32Field(t byte, name string) int32 {
	if t != tcI32 {
		r.fail(name + " not an i32")
		return 0
	}
	return r.i32()
}

// ParseHeader decodes the PageHeader at the start of b and returns it
// with its length in bytes.
func ParseHeader(b []byte) (Header, int, error) {
	r := thriftReader{b: b}
	h := Header{Type: -1, Uncompressed: -1, Compressed: -1, ValuesCompressed: true}
	r.fields(0, func(id int16, t byte) bool {
		switch {
		case id == 1:
			h.Type = r.i32Field(t, "type")
		case id == 2:
			h.Uncompressed = r.i32Field(t, "uncompressed_page_size")
		case id == 3:
			h.Compressed = r.i32Field(t, "compressed_page_size")
		case id == 5 && t == tcStruct:
			h.HasData = true
			r.dataPageHeader(&h)
		case id == 7 && t == tcStruct:
			h.HasDict = true
			r.dictPageHeader(&h)
		case id == 8 && t == tcStruct:
			h.HasV2 = true
			r.dataPageHeaderV2(&h)
		default:
			return false
		}
		return true
	})
	if r.err != nil {
		return h, 0, r.err
	}
	if h.Type < 0 || h.Uncompressed < 0 || h.Compressed < 0 {
		return h, 0, fmt.Errorf("page header: type %d, sizes %d and %d (missing or negative): %w", h.Type, h.Uncompressed, h.Compressed, ErrPage)
	}
	return h, r.n, nil
}

// fields reads the fields of a struct to its stop, passing each to read,
// which decodes it and returns true, or returns false to have it skipped
// (depth: the struct's nesting).
func (r *thriftReader) fields(depth int, read func(id int16, t byte) bool) {
	var last int16
	for r.err == nil {
		id, t := r.field(&last)
		if t == tcStop {
			return
		}
		if !read(id, t) {
			r.skip(t, depth)
		}
	}
}

func (r *thriftReader) dataPageHeader(h *Header) {
	r.fields(1, func(id int16, t byte) bool {
		switch id {
		case 1:
			h.NumValues = r.i32Field(t, "num_values")
		case 2:
			h.Encoding = r.i32Field(t, "encoding")
		case 3:
			h.DefEncoding = r.i32Field(t, "definition_level_encoding")
		case 4:
			h.RepEncoding = r.i32Field(t, "repetition_level_encoding")
		default:
			return false
		}
		return true
	})
}

func (r *thriftReader) dictPageHeader(h *Header) {
	r.fields(1, func(id int16, t byte) bool {
		switch id {
		case 1:
			h.NumValues = r.i32Field(t, "num_values")
		case 2:
			h.Encoding = r.i32Field(t, "encoding")
		default:
			return false
		}
		return true
	})
}

func (r *thriftReader) dataPageHeaderV2(h *Header) {
	r.fields(1, func(id int16, t byte) bool {
		switch {
		case id == 1:
			h.NumValues = r.i32Field(t, "num_values")
		case id == 2:
			h.NumNulls = r.i32Field(t, "num_nulls")
		case id == 4:
			h.Encoding = r.i32Field(t, "encoding")
		case id == 5:
			h.DefLen = r.i32Field(t, "definition_levels_byte_length")
		case id == 6:
			h.RepLen = r.i32Field(t, "repetition_levels_byte_length")
		case id == 7 && (t == tcTrue || t == tcFalse):
			h.ValuesCompressed = t == tcTrue
		default:
			return false
		}
		return true
	})
}
