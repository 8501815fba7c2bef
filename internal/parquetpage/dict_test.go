package parquetpage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// hybridEncoder writes the value section of a dictionary-encoded data page:
// a bit width byte, then runs of the RLE/bit-packed hybrid (Parquet
// Encodings.md), as the test wants them.
type hybridEncoder struct {
	bw  uint
	buf []byte
}

func newHybridEncoder(bw uint) *hybridEncoder { return &hybridEncoder{bw: bw, buf: []byte{byte(bw)}} }

// rle appends an RLE run of count repeats of v.
func (e *hybridEncoder) rle(count uint64, v uint64) {
	e.buf = binary.AppendUvarint(e.buf, count<<1)
	for j := range (e.bw + 7) / 8 {
		e.buf = append(e.buf, byte(v>>(8*j)))
	}
}

// packed appends a bit-packed run of the indices vals (a multiple of 8),
// least significant bit first.
func (e *hybridEncoder) packed(vals []uint64) {
	if len(vals)%8 != 0 {
		panic("packed: not whole groups")
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(len(vals)/8)<<1|1)
	var acc uint64 // bits not yet written, nacc of them
	var nacc uint
	for _, v := range vals {
		v &= uint64(1)<<e.bw - 1
		for k := range e.bw { // bit by bit: the plain reading of the spec
			acc |= (v >> k & 1) << nacc
			nacc++
			if nacc == 8 {
				e.buf = append(e.buf, byte(acc))
				acc, nacc = 0, 0
			}
		}
	}
}

// encodeLikeWriter encodes idx the way Parquet writers do: an RLE run for
// 8 or more repeats starting at a group boundary, else bit-packed groups
// (the last one padded with zeros).
func encodeLikeWriter(idx []uint64, bw uint) []byte {
	e := newHybridEncoder(bw)
	var lit []uint64
	flush := func() {
		if len(lit) > 0 {
			for len(lit)%8 != 0 {
				lit = append(lit, 0)
			}
			e.packed(lit)
			lit = lit[:0]
		}
	}
	for i := 0; i < len(idx); {
		r := 1
		for i+r < len(idx) && idx[i+r] == idx[i] {
			r++
		}
		if r >= 8 {
			flush()
			e.rle(uint64(r), idx[i])
			i += r
			continue
		}
		end := min(i+8, len(idx))
		lit = append(lit, idx[i:end]...)
		i = end
	}
	flush()
	return e.buf
}

// refDecodeDictF32 is the plain reading of the spec, index by index and bit by
// bit, with DecodeDictF32's rules (the bytes a run claims must be in b;
// padding indices past len(dst) are not checked).
func refDecodeDictF32(dst []float32, dict []float32, b []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if len(b) == 0 || b[0] > 32 {
		return ErrPage
	}
	bw := uint(b[0])
	b = b[1:]
	i := 0
	for i < len(dst) {
		h, k := binary.Uvarint(b)
		if k <= 0 {
			return ErrPage
		}
		b = b[k:]
		if h&1 == 0 {
			vb := int(bw+7) / 8
			if len(b) < vb {
				return ErrPage
			}
			var v uint64
			for j := range vb {
				v |= uint64(b[j]) << (8 * j)
			}
			b = b[vb:]
			if v >= uint64(len(dict)) {
				return ErrPage
			}
			for c := uint64(0); c < h>>1 && i < len(dst); c++ {
				dst[i] = dict[v]
				i++
			}
			continue
		}
		g := h >> 1
		if bw > 0 && g > uint64(len(b))/uint64(bw) {
			return ErrPage
		}
		for j := uint64(0); j/8 < g && i < len(dst); j++ {
			var v uint64
			for k := range uint64(bw) {
				bit := j*uint64(bw) + k
				v |= uint64(b[bit/8]>>(bit%8)&1) << k
			}
			if v >= uint64(len(dict)) {
				return ErrPage
			}
			dst[i] = dict[v]
			i++
		}
		b = b[g*uint64(bw):]
	}
	return nil
}

// seqDict returns a dictionary of n distinct values.
func seqDict(n int) []float32 {
	d := make([]float32, n)
	for k := range d {
		d[k] = float32(k)*0.25 + 1
	}
	return d
}

// randomHybridStream encodes a random mix of RLE runs and bit-packed runs of
// indices below limit at width bw, returning the page's bytes and the
// indices it holds; the last bit-packed group carries pad indices past
// the end (garbage of any value below 1<<bw), and trailing bytes may
// follow.
func randomHybridStream(r *rand.Rand, bw uint, limit uint64) ([]byte, []uint64) {
	e := newHybridEncoder(bw)
	var idx []uint64
	rnd := func() uint64 {
		if limit <= 1 {
			return 0
		}
		if r.IntN(4) == 0 { // the extremes, to exercise the high bits
			return []uint64{0, limit - 1}[r.IntN(2)]
		}
		return r.Uint64N(limit)
	}
	runs := 1 + r.IntN(12)
	for k := range runs {
		if r.IntN(2) == 0 {
			c := uint64(r.IntN(40))
			if r.IntN(8) == 0 {
				c = uint64(r.IntN(3000))
			}
			v := rnd()
			e.rle(c, v)
			for range c {
				idx = append(idx, v)
			}
			continue
		}
		g := 1 + r.IntN(6)
		if r.IntN(8) == 0 {
			g = 1 + r.IntN(400)
		}
		vals := make([]uint64, 8*g)
		for j := range vals {
			vals[j] = rnd()
		}
		if k == runs-1 && bw > 0 { // padding: garbage past the end
			pad := r.IntN(8)
			for j := len(vals) - pad; j < len(vals); j++ {
				vals[j] = r.Uint64() & (uint64(1)<<bw - 1)
			}
			e.packed(vals)
			return withTrailing(r, e.buf), append(idx, vals[:len(vals)-pad]...)
		}
		e.packed(vals)
		idx = append(idx, vals...)
	}
	return withTrailing(r, e.buf), idx
}

func withTrailing(r *rand.Rand, b []byte) []byte {
	if r.IntN(2) == 0 {
		for range r.IntN(20) {
			b = append(b, byte(r.Uint32()))
		}
	}
	return b
}

// TestDecodeDictF32RoundTrip: every bit width 0 to 32, random mixes of
// RLE and bit-packed runs, lengths of any remainder mod 8, padded last
// groups and trailing bytes; dictionaries both of 1<<width entries or
// more (no range checks) and fewer: every value is the dictionary's at
// the encoded index, and equal to the bit-by-bit reference decoder's.
func TestDecodeDictF32RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 34))
	for bw := uint(0); bw <= 32; bw++ {
		for trial := range 30 {
			full := uint64(1) << bw
			var n uint64
			switch {
			case bw <= 12 && trial%2 == 0:
				n = full + uint64(r.IntN(3)) // no range checks needed
			case bw <= 12:
				n = max(1, full/2+uint64(r.IntN(int(full/2+1)))) // some indices may not exist: keep below n
			default:
				n = 1<<12 + uint64(r.IntN(1<<17)) // big widths: indices of up to 17 bits
			}
			dict := seqDict(int(n))
			b, idx := randomHybridStream(r, bw, min(n, full))
			dst := make([]float32, len(idx))
			for i := range dst {
				dst[i] = float32(math.NaN())
			}
			if err := DecodeDictF32(dst, dict, b); err != nil {
				t.Fatalf("width %d trial %d (%d values, dictionary %d): %v", bw, trial, len(idx), n, err)
			}
			for i, v := range idx {
				if dst[i] != dict[v] {
					t.Fatalf("width %d trial %d: value %d is %v, want dict[%d] = %v", bw, trial, i, dst[i], v, dict[v])
				}
			}
			ref := make([]float32, len(idx))
			if err := refDecodeDictF32(ref, dict, b); err != nil {
				t.Fatalf("width %d trial %d: reference: %v", bw, trial, err)
			}
			if bw <= 8 {
				// the indices themselves
				got := make([]uint8, len(idx))
				if err := DecodeDictIdx8(got, int(n), b); err != nil {
					t.Fatalf("width %d trial %d (%d values, dictionary %d): byte indices: %v", bw, trial, len(idx), n, err)
				}
				for i, v := range idx {
					if uint64(got[i]) != v {
						t.Fatalf("width %d trial %d: byte index %d is %d, want %d", bw, trial, i, got[i], v)
					}
				}
			}
			// a prefix of the page decodes to a prefix of the values
			if k := r.IntN(len(idx) + 1); k > 0 {
				pre := make([]float32, k)
				if err := DecodeDictF32(pre, dict, b); err != nil {
					t.Fatalf("width %d trial %d: first %d values: %v", bw, trial, k, err)
				}
				for i := range pre {
					if pre[i] != dst[i] {
						t.Fatalf("width %d trial %d: first %d values: value %d is %v, want %v", bw, trial, k, i, pre[i], dst[i])
					}
				}
			}
		}
	}
}

// TestDecodeDictF32Spec: byte sequences built by hand from the worked
// examples of Encodings.md ("Run Length Encoding / Bit-Packing Hybrid").
func TestDecodeDictF32Spec(t *testing.T) {
	dict := seqDict(8)
	for _, test := range []struct {
		name string
		b    []byte
		want []uint64
	}{
		// the spec's example: 0 to 7 at width 3 packs to bytes
		// 10001000 11000110 11111010; one group, header (1<<1)|1.
		{"bit-packed 0..7 width 3", []byte{3, 0x03, 0x88, 0xc6, 0xfa}, []uint64{0, 1, 2, 3, 4, 5, 6, 7}},
		{"bit-packed cut at 5", []byte{3, 0x03, 0x88, 0xc6, 0xfa}, []uint64{0, 1, 2, 3, 4}},
		// RLE: header 4<<1, value 5 in one byte
		{"RLE 4 fives", []byte{3, 0x08, 0x05}, []uint64{5, 5, 5, 5}},
		// a run of 300 (varint 0xd8 0x04 = 600 = 300<<1) then the group
		{"RLE 300 then packed", []byte{3, 0xd8, 0x04, 0x02, 0x03, 0x88, 0xc6, 0xfa}, append(repeatIndex(2, 300), 0, 1, 2, 3, 4, 5, 6, 7)},
		// width 0: every index is 0, runs carry no value bytes
		{"width 0", []byte{0, 0x06, 0x03}, []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		// run counts far beyond len(dst): the work stays bounded by it
		{"RLE run of 2^62", append(binary.AppendUvarint([]byte{3}, 1<<63), 5), repeatIndex(5, 10)},
		{"width 0, 2^62 groups", binary.AppendUvarint([]byte{0}, 1<<63|1), repeatIndex(0, 10)},
		// width 1: 0b01010101 0b11110000
		{"width 1", []byte{1, 0x05, 0x55, 0xf0}, []uint64{1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1}},
	} {
		dst := make([]float32, len(test.want))
		if err := DecodeDictF32(dst, dict, test.b); err != nil {
			t.Errorf("%s: %v", test.name, err)
			continue
		}
		for i, v := range test.want {
			if dst[i] != dict[v] {
				t.Errorf("%s: value %d is %v, want dict[%d] = %v", test.name, i, dst[i], v, dict[v])
				break
			}
		}
	}
}

func repeatIndex(v uint64, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestDecodeDictF32Arrow: dictionary pages and RLE_DICTIONARY data pages
// (versions 1 and 2) written by arrow-go's own encoder, read back through
// its public page reader: every page decodes to the column written, at
// bit widths 0 to 13.
func TestDecodeDictF32Arrow(t *testing.T) {
	const n = 20000
	for _, distinct := range []int{1, 2, 3, 17, 200, 256, 300, 5000} {
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			name := fmt.Sprintf("%d values, page %v", distinct, v)
			r := rand.New(rand.NewPCG(uint64(distinct), 7))
			col := make([]float32, n)
			for i := 0; i < n; {
				k := min(n-i, 1+r.IntN(30))
				val := float32(0)
				if r.IntN(2) == 0 { // background runs and noise, as image pixels
					val = float32(r.IntN(distinct)) * 0.5
				}
				for j := range k {
					if r.IntN(3) == 0 {
						col[i+j] = float32(r.IntN(distinct)) * 0.5
					} else {
						col[i+j] = val
					}
				}
				i += k
			}
			path := filepath.Join(t.TempDir(), "d.parquet")
			writeDictColumn(t, path, col, v, 4096)
			got := readDictColumn(t, path, name)
			if len(got) != n {
				t.Fatalf("%s: %d values read, want %d", name, len(got), n)
			}
			for i := range col {
				if got[i] != col[i] {
					t.Fatalf("%s: value %d is %v, want %v", name, i, got[i], col[i])
				}
			}
		}
	}
}

// writeDictColumn writes col as the one float32 column of path,
// dictionary-encoded by arrow-go, in data pages of version v and about
// pageBytes bytes.
func writeDictColumn(tb testing.TB, path string, col []float32, v parquet.DataPageVersion, pageBytes int64) {
	tb.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float32}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Float32Builder).AppendValues(col, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(true), parquet.WithDataPageVersion(v),
		parquet.WithDataPageSize(pageBytes), parquet.WithBatchSize(1000))
	writeArrowRecord(tb, path, rec, props)
}

// arrowDictPage is the value section of a dictionary-encoded data page and
// its number of values.
type arrowDictPage struct {
	data []byte
	n    int
}

// readDictPages returns the dictionary and the data pages of the one
// column of path (one row group), failing unless every data page is
// dictionary-encoded.
func readDictPages(tb testing.TB, path string) ([]float32, []arrowDictPage) {
	tb.Helper()
	rd, err := file.OpenParquetFile(path, false)
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	if rd.NumRowGroups() != 1 {
		tb.Fatalf("%d row groups", rd.NumRowGroups())
	}
	pr, err := rd.RowGroup(0).GetColumnPageReader(0)
	if err != nil {
		tb.Fatal(err)
	}
	var dict []float32
	var pages []arrowDictPage
	for pr.Next() {
		var data []byte
		switch p := pr.Page().(type) {
		case *file.DictionaryPage:
			raw := p.Data()
			dict = make([]float32, len(raw)/4)
			for k := range dict {
				dict[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
			}
			continue
		case *file.DataPageV1:
			data = p.Data()
		case *file.DataPageV2:
			data = p.Data()[p.DefinitionLevelByteLen()+p.RepetitionLevelByteLen():]
		default:
			tb.Fatalf("page %T", p)
		}
		if e := parquet.Encoding(pr.Page().Encoding()); e != parquet.Encodings.RLEDict && e != parquet.Encodings.PlainDict {
			tb.Fatalf("a data page of encoding %s", e)
		}
		pages = append(pages, arrowDictPage{append([]byte(nil), data...), int(pr.Page().NumValues())})
	}
	if err := pr.Err(); err != nil {
		tb.Fatal(err)
	}
	return dict, pages
}

// readDictColumn decodes the one column of path page by page with
// DecodeDictF32.
func readDictColumn(t *testing.T, path, name string) []float32 {
	t.Helper()
	dict, pages := readDictPages(t, path)
	var out []float32
	widths := map[byte]bool{}
	for _, p := range pages {
		if len(p.data) > 0 {
			widths[p.data[0]] = true
		}
		vals := make([]float32, p.n)
		if err := DecodeDictF32(vals, dict, p.data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, vals...)
	}
	t.Logf("%s: %d values in %d pages, dictionary of %d, bit widths %v", name, len(out), len(pages), len(dict), widths)
	return out
}

// TestDecodeDictF32Errors: every kind of bad page is an error wrapping
// ErrPage that says what is wrong, and no panic.
func TestDecodeDictF32Errors(t *testing.T) {
	dict := seqDict(10) // indices 0..9 exist
	packed := func(bw uint, vals ...uint64) []byte {
		e := newHybridEncoder(bw)
		e.packed(vals)
		return e.buf
	}
	rle := func(bw uint, c, v uint64) []byte {
		e := newHybridEncoder(bw)
		e.rle(c, v)
		return e.buf
	}
	long := func(bw uint, at int, bad uint64) []byte { // 64 good indices, one bad at `at`
		vals := make([]uint64, 64)
		for i := range vals {
			vals[i] = uint64(i % 10)
		}
		vals[at] = bad
		return packed(bw, vals...)
	}
	for _, test := range []struct {
		name string
		n    int
		dict []float32
		b    []byte
		want string
	}{
		{"empty", 1, dict, nil, "no bit width"},
		{"width 33", 1, dict, []byte{33, 2, 0, 0, 0, 0, 0}, "bit width 33"},
		{"width 255", 1, dict, []byte{255}, "bit width 255"},
		{"no runs", 3, dict, []byte{4}, "0 of 3 decoded"},
		{"too few", 20, dict, rle(4, 12, 1), "12 of 20 decoded"},
		{"truncated varint", 3, dict, []byte{4, 0x80}, "0 of 3 decoded"},
		{"varint overflow", 3, dict, []byte{4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "overflows"},
		{"varint 10th byte", 3, dict, []byte{4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, "overflows"},
		{"RLE value missing", 3, dict, []byte{4, 0x06}, "1 value bytes, 0 left"},
		{"RLE value short", 3, dict, []byte{13, 0x06, 0x01}, "2 value bytes, 1 left"},
		{"packed short", 8, dict, []byte{4, 0x03, 0x10, 0x32, 0x54}, "1 groups of 4 bytes, 3 bytes left"},
		{"packed huge", 8, dict, []byte{4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x10}, "groups of 4 bytes, 1 bytes left"},
		{"RLE index", 5, dict, append(rle(4, 2, 3), 0x06, 10), "value 2 has index 10, past the dictionary of 10 values"},
		{"RLE index 32 bits", 5, dict, rle(32, 5, 0xfffffffe), "value 0 has index 4294967294, past the dictionary of 10 values"},
		{"width 0 empty dictionary", 5, nil, []byte{0, 0x0a}, "value 0 has index 0, past the dictionary of 0 values"},
		{"packed width 0 empty dictionary", 5, nil, []byte{0, 0x03}, "value 0 has index 0, past the dictionary of 0 values"},
		{"packed index, width 4", 64, dict, long(4, 37, 12), "value 37 has index 12,"},
		{"packed index, width 4, tail", 64, dict, long(4, 63, 15), "value 63 has index 15,"},
		{"packed index, width 8", 64, dict, long(8, 5, 200), "value 5 has index 200,"},
		{"packed index, width 8, tail", 63, dict, long(8, 62, 10), "value 62 has index 10,"},
		{"packed index, width 13", 64, dict, long(13, 40, 8191), "value 40 has index 8191,"},
		{"packed index, width 13, tail", 64, dict, long(13, 63, 10), "value 63 has index 10,"},
		{"packed index, width 20", 64, dict, long(20, 21, 1<<20-1), "value 21 has index 1048575,"},
		{"packed index, width 20, tail", 64, dict, long(20, 62, 10), "value 62 has index 10,"},
		{"packed index, width 32", 64, dict, long(32, 3, 0xffffffff), "value 3 has index 4294967295,"},
		{"packed index, width 8, dictionary of 256", 64, seqDict(256)[:255], long(8, 9, 255), "value 9 has index 255,"},
		{"packed index after a run", 10, dict, append(rle(4, 2, 1), packed(4, 1, 1, 1, 1, 11, 1, 1, 1)[1:]...), "value 6 has index 11,"},
	} {
		dst := make([]float32, test.n)
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panic %v", test.name, p)
				}
			}()
			err = DecodeDictF32(dst, test.dict, test.b)
		}()
		if err == nil || !errors.Is(err, ErrPage) || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: error %v, want one saying %q and wrapping ErrPage", test.name, err, test.want)
		}
		if refDecodeDictF32(make([]float32, test.n), test.dict, test.b) == nil {
			t.Errorf("%s: the reference decoder accepts it", test.name)
		}
		if len(test.b) > 0 && test.b[0] > 8 {
			continue
		}
		// the byte indices decoder: the same error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: byte indices: panic %v", test.name, p)
				}
			}()
			err = DecodeDictIdx8(make([]uint8, test.n), len(test.dict), test.b)
		}()
		if err == nil || !errors.Is(err, ErrPage) || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: byte indices: error %v, want one saying %q and wrapping ErrPage", test.name, err, test.want)
		}
	}
	if err := DecodeDictIdx8(make([]uint8, 3), 10, []byte{9, 0x06, 1, 0}); err == nil || !strings.Contains(err.Error(), "bit width 9") {
		t.Errorf("byte indices of width 9: error %v", err)
	}
	// padding past len(dst) is not range-checked
	b := packed(4, 1, 2, 3, 4, 5, 15, 15, 15)
	dst := make([]float32, 5)
	if err := DecodeDictF32(dst, dict, b); err != nil {
		t.Errorf("bad indices in padding: %v", err)
	}
	if err := DecodeDictIdx8(make([]uint8, 5), len(dict), b); err != nil {
		t.Errorf("byte indices: bad indices in padding: %v", err)
	}
}

// FuzzDecodeDictF32: on any bytes, DecodeDictF32 never panics and agrees
// with the bit-by-bit reference decoder: both fail, or both fill dst with
// the same dictionary values. So does DecodeDictIdx8 for dictionaries of
// at most 256 values (its indices looked up), but that it refuses bit
// widths above 8.
func FuzzDecodeDictF32(f *testing.F) {
	f.Add([]byte{3, 0x03, 0x88, 0xc6, 0xfa}, uint16(8), uint16(8))
	f.Add([]byte{3, 0xd8, 0x04, 0x02, 0x03, 0x88, 0xc6, 0xfa}, uint16(305), uint16(5))
	f.Add([]byte{8, 0x05, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, uint16(13), uint16(17))
	f.Add([]byte{13, 0x03, 0xff, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint16(8), uint16(9000))
	f.Add([]byte{0, 0x0a}, uint16(5), uint16(1))
	f.Add([]byte{32, 0x02, 1, 0, 0, 0}, uint16(1), uint16(2))
	f.Add([]byte{4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, uint16(3), uint16(16))
	f.Fuzz(func(t *testing.T, b []byte, n, nd uint16) {
		dict := seqDict(int(nd))
		dst := make([]float32, n)
		ref := make([]float32, n)
		for i := range dst {
			dst[i] = -1
		}
		err := DecodeDictF32(dst, dict, b)
		rerr := refDecodeDictF32(ref, dict, b)
		if nd <= 256 {
			idx := make([]uint8, n)
			ierr := DecodeDictIdx8(idx, int(nd), b)
			wide := n > 0 && len(b) > 0 && b[0] > 8
			if (ierr == nil) != (rerr == nil && !wide) {
				t.Fatalf("byte indices: error %v, the reference's %v", ierr, rerr)
			}
			if ierr != nil && !errors.Is(ierr, ErrPage) {
				t.Fatalf("byte indices: error %v does not wrap ErrPage", ierr)
			}
			for i, v := range idx {
				if ierr == nil && dict[v] != ref[i] {
					t.Fatalf("byte index %d is %d (%v), the reference's value %v", i, v, dict[v], ref[i])
				}
			}
		}
		if (err == nil) != (rerr == nil) {
			t.Fatalf("error %v, the reference's %v", err, rerr)
		}
		if err != nil {
			if !errors.Is(err, ErrPage) {
				t.Fatalf("error %v does not wrap ErrPage", err)
			}
			return
		}
		for i := range dst {
			if dst[i] != ref[i] {
				t.Fatalf("value %d is %v, the reference's %v", i, dst[i], ref[i])
			}
		}
	})
}

// BenchmarkDecodeDictF32: 10,000 indices a page. fmnist: width 8, about
// half the values zeros in runs and the rest noise, encoded as writers
// do (RLE runs of 8 or more, bit-packed groups between); checked: the
// same with a dictionary of 230 values (indices range-checked).
// packed/wN: bit-packed only at width N. .../idx8: the fmnist pages
// decoded to byte indices (DecodeDictIdx8).
func BenchmarkDecodeDictF32(b *testing.B) {
	const n = 10000
	r := rand.New(rand.NewPCG(1, 2))
	fmnist := func(distinct int) []uint64 {
		idx := make([]uint64, 0, n)
		for len(idx) < n {
			z := 1 + r.IntN(30) // background
			for range z {
				idx = append(idx, 0)
			}
			s := 1 + r.IntN(30) // strokes
			for range s {
				idx = append(idx, 1+r.Uint64N(uint64(distinct-1)))
			}
		}
		return idx[:n]
	}
	type bench struct {
		name string
		dict int
		b    []byte
	}
	benches := []bench{
		{"fmnist/w8", 256, encodeLikeWriter(fmnist(256), 8)},
		{"fmnist/w8/checked", 230, encodeLikeWriter(fmnist(230), 8)},
	}
	for _, bw := range []uint{1, 5, 8, 13, 32} {
		ds := []int{1 << min(bw, 13)} // widths above 8 check every index anyway
		if bw <= 8 {
			ds = append(ds, 1<<bw-1) // indices range-checked
		}
		for _, d := range ds {
			vals := make([]uint64, n)
			for i := range vals {
				vals[i] = r.Uint64N(uint64(d))
			}
			e := newHybridEncoder(bw)
			e.packed(vals)
			name := fmt.Sprintf("packed/w%d", bw)
			if bw <= 8 && d < 1<<bw {
				name += "/checked"
			}
			benches = append(benches, bench{name, d, e.buf})
		}
	}
	benches = append(benches, bench{"fmnist/w8/reference", 256, benches[0].b})
	// the same kind of column encoded by arrow-go's writer, in one page
	col := make([]float32, n)
	for i, v := range fmnist(256) {
		col[i] = float32(v) / 255
	}
	path := filepath.Join(b.TempDir(), "fmnist.parquet")
	writeDictColumn(b, path, col, parquet.DataPageV1, 1<<20)
	arrowDict, pages := readDictPages(b, path)
	if len(pages) != 1 || pages[0].n != n {
		b.Fatalf("%d pages", len(pages))
	}
	benches = append(benches, bench{"fmnist/w8/arrow-go-page", len(arrowDict), pages[0].data})
	for _, bc := range benches {
		dict := seqDict(bc.dict)
		if strings.HasSuffix(bc.name, "/arrow-go-page") {
			dict = arrowDict
		}
		dst := make([]float32, n)
		decode := DecodeDictF32
		if strings.HasSuffix(bc.name, "/reference") {
			decode = refDecodeDictF32 // the bit-by-bit decoder of the tests, for scale
		}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(4 * n)
			for b.Loop() {
				if err := decode(dst, dict, bc.b); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/value")
		})
	}
	// the byte indices of the same pages (DecodeDictIdx8)
	for _, bc := range benches[:2] {
		idx := make([]uint8, n)
		b.Run(bc.name+"/idx8", func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				if err := DecodeDictIdx8(idx, bc.dict, bc.b); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/value")
		})
	}
	// a column chunk of 200,000 values (pages of 64 KiB) from the file's
	// bytes in memory: arrow-go's column reader (its own dictionary
	// decoder), and its page reader with DecodeDictF32
	const big = 200000
	col = make([]float32, 0, big)
	for len(col) < big {
		for _, v := range fmnist(256) {
			col = append(col, float32(v)/255)
		}
	}
	path = filepath.Join(b.TempDir(), "fmnist-big.parquet")
	writeDictColumn(b, path, col, parquet.DataPageV1, 64<<10)
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	rd, err := file.NewParquetReader(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	dst := make([]float32, big)
	b.Run("fmnist/w8/file/arrow-go-reader", func(b *testing.B) {
		for b.Loop() {
			cr, err := rd.RowGroup(0).Column(0)
			if err != nil {
				b.Fatal(err)
			}
			if _, got, err := cr.(*file.Float32ColumnChunkReader).ReadBatch(big, dst, nil, nil); err != nil || got != big {
				b.Fatal(got, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/big, "ns/value")
	})
	b.Run("fmnist/w8/file/DecodeDictF32", func(b *testing.B) {
		var dict []float32
		for b.Loop() {
			pr, err := rd.RowGroup(0).GetColumnPageReader(0)
			if err != nil {
				b.Fatal(err)
			}
			got := 0
			for pr.Next() {
				switch p := pr.Page().(type) {
				case *file.DictionaryPage:
					d := p.Data()
					dict = slices.Grow(dict[:0], len(d)/4)[:len(d)/4]
					for k := range dict {
						dict[k] = math.Float32frombits(binary.LittleEndian.Uint32(d[4*k:]))
					}
				case *file.DataPageV1:
					k := int(p.NumValues())
					if k > len(dst[got:]) {
						b.Fatalf("%d values past %d", k, got)
					}
					if err := DecodeDictF32(dst[got:got+k], dict, p.Data()); err != nil {
						b.Fatal(err)
					}
					got += k
				}
			}
			if got != big {
				b.Fatal(got)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/big, "ns/value")
	})
}

// writeArrowRecord writes rec to path with arrow-go's writer, the
// reference the decoders are checked against.
func writeArrowRecord(tb testing.TB, path string, rec arrow.RecordBatch, props *parquet.WriterProperties) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(rec.Schema(), f, props, pqarrow.NewArrowWriterProperties())
	if err != nil {
		tb.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		tb.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		tb.Fatal(err)
	}
}
