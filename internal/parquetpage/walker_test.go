package parquetpage

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/klauspost/compress/snappy"
)

// pageBytes returns a page: its PageHeader (by Apache Thrift's compact
// protocol), a v1 data page's or a dictionary page's, then body, which
// is stored as it is (compressed or not) and declared uncompressed bytes.
func pageBytes(t *testing.T, typ int32, numValues int32, enc Encoding, uncompressed int, body []byte) []byte {
	t.Helper()
	ctx := context.Background()
	buf := thrift.NewTMemoryBuffer()
	p := thrift.NewTCompactProtocolConf(buf, nil)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	i32 := func(id int16, v int32) {
		must(p.WriteFieldBegin(ctx, "", thrift.I32, id))
		must(p.WriteI32(ctx, v))
		must(p.WriteFieldEnd(ctx))
	}
	must(p.WriteStructBegin(ctx, "PageHeader"))
	i32(1, typ)
	i32(2, int32(uncompressed))
	i32(3, int32(len(body)))
	id := int16(5)
	if typ == PageDictionary {
		id = 7
	}
	must(p.WriteFieldBegin(ctx, "", thrift.STRUCT, id))
	must(p.WriteStructBegin(ctx, ""))
	i32(1, numValues)
	i32(2, int32(enc))
	if typ == PageData {
		i32(3, int32(RLE))
		i32(4, int32(RLE))
	}
	must(p.WriteFieldStop(ctx))
	must(p.WriteStructEnd(ctx))
	must(p.WriteFieldEnd(ctx))
	must(p.WriteFieldStop(ctx))
	must(p.WriteStructEnd(ctx))
	must(p.Flush(ctx))
	return append(buf.Bytes(), body...)
}

func floatBytes(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// newTestWalker returns a walker of a required column that records the
// dictionary it is given.
func newTestWalker(dict *[]byte) *Walker {
	w := &Walker{}
	w.Dictionary = func(b []byte, n int, enc Encoding) error {
		if enc != Plain || len(b) != 4*n {
			return errors.New("bad dictionary")
		}
		*dict = append([]byte(nil), b...)
		return nil
	}
	w.Buffer = func(n int) []byte { return make([]byte, n) }
	return w
}

// TestWalker: a chunk of a dictionary page, a PLAIN page and an index
// page between them, uncompressed or Snappy, is walked page by page: the
// dictionary handed over, the index page skipped, the values read into
// the caller's buffer or the walker's; a chunk cut short, a page of more
// values than the row group's rows, and indices with no dictionary page
// are errors wrapping ErrPage that number the page.
func TestWalker(t *testing.T) {
	dictVals, vals := floatBytes(0.5, 1.5), floatBytes(1, 2, 3)
	for _, codec := range []Codec{Uncompressed, Snappy} {
		body := func(b []byte) []byte {
			if codec == Snappy {
				return snappy.Encode(nil, b)
			}
			return b
		}
		var chunk []byte
		chunk = append(chunk, pageBytes(t, PageDictionary, 2, Plain, len(dictVals), body(dictVals))...)
		chunk = append(chunk, pageBytes(t, PageIndex, 0, Plain, 4, []byte{1, 2, 3, 4})...)
		chunk = append(chunk, pageBytes(t, PageData, 3, Plain, len(vals), body(vals))...)
		var dict []byte
		w := newTestWalker(&dict)
		if err := w.Start(chunk, codec, nil, 3); err != nil {
			t.Fatal(err)
		}
		if err := w.Peek(); err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		if string(dict) != string(dictVals) || w.Hdr.Type != PageData || w.Hdr.NumValues != 3 || !w.Direct() || w.Compressed() != (codec == Snappy) {
			t.Fatalf("%s: dictionary %v, header %+v", codec, dict, w.Hdr)
		}
		dst := make([]byte, len(vals))
		if _, got, err := w.Values(dst); err != nil || string(got) != string(vals) || &got[0] != &dst[0] {
			t.Fatalf("%s: values %v, %v", codec, got, err)
		}
		if w.Page != 3 {
			t.Fatalf("%s: page %d after three pages", codec, w.Page)
		}
		if err := w.Peek(); !errors.Is(err, ErrPage) || !strings.Contains(err.Error(), "page 4: the column chunk ends") {
			t.Fatalf("%s: past the end: %v", codec, err)
		}

		// Fewer rows in the row group than the page holds.
		if err := w.Start(chunk, codec, nil, 2); err != nil {
			t.Fatal(err)
		}
		if err := w.Peek(); !errors.Is(err, ErrPage) || !strings.Contains(err.Error(), "page 3: 3 values where the row group has 2 rows left") {
			t.Fatalf("%s: too many values: %v", codec, err)
		}
	}

	// Dictionary indices without a dictionary page.
	idx := []byte{1, 3 << 1, 0} // bit width 1, a run of three zeros
	var dict []byte
	w := newTestWalker(&dict)
	if err := w.Start(pageBytes(t, PageData, 3, RLEDict, len(idx), idx), Uncompressed, nil, 3); err != nil {
		t.Fatal(err)
	}
	if err := w.Peek(); !errors.Is(err, ErrPage) || !strings.Contains(err.Error(), "page 1: dictionary indices without a dictionary page") {
		t.Fatalf("indices without a dictionary: %v", err)
	}
	// A codec the walker does not have, without a decompressor.
	if err := w.Start(nil, Codec(2), nil, 3); err == nil {
		t.Fatal("gzip without a decompressor: no error")
	}
	// Through a decompressor.
	page := pageBytes(t, PageData, 3, Plain, len(vals), []byte("xyz"))
	other := func(dst, src []byte) ([]byte, error) {
		if string(src) != "xyz" {
			return nil, errors.New("not the page's bytes")
		}
		return append(dst[:0], vals...), nil
	}
	if err := w.Start(page, Codec(2), other, 3); err != nil {
		t.Fatal(err)
	}
	if err := w.Peek(); err != nil {
		t.Fatal(err)
	}
	if _, got, err := w.Values(nil); err != nil || string(got) != string(vals) {
		t.Fatalf("through a decompressor: %v, %v", got, err)
	}
}

// TestValuesBefore: a page of p bytes of levels then its values,
// decompressed so that the values land at b[at:], leaves the bytes
// before at as they were and returns the levels.
func TestValuesBefore(t *testing.T) {
	levels := []byte{9, 8, 7, 6}
	vals := floatBytes(1, 2)
	page := append(append([]byte(nil), levels...), vals...)
	var dict []byte
	w := newTestWalker(&dict)
	w.MaxDef = 1
	if err := w.Start(pageBytes(t, PageData, 2, Plain, len(page), snappy.Encode(nil, page)), Snappy, nil, 2); err != nil {
		t.Fatal(err)
	}
	if err := w.Peek(); err != nil {
		t.Fatal(err)
	}
	b := []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0}
	got, err := w.ValuesBefore(b, 8, len(levels), make([]byte, 2*len(levels)))
	if err != nil || string(got) != string(levels) {
		t.Fatalf("levels %v, %v", got, err)
	}
	if want := append([]byte{1, 2, 3, 4, 5, 6, 7, 8}, vals...); string(b) != string(want) {
		t.Fatalf("buffer %v, want %v", b, want)
	}
}
