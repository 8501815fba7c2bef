package data

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/thrift/lib/go/thrift"
)

// thriftHeader writes, with Apache Thrift's own compact protocol, a
// DataPageHeaderV2 PageHeader with fields the reader does not know of
// every type (nested structs, lists, sets and maps, doubles, binaries,
// field ids far apart and going backwards), statistics and a CRC.
func thriftHeader(t *testing.T) []byte {
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
	unknown := func() { // a struct of every type
		must(p.WriteStructBegin(ctx, "u"))
		must(p.WriteFieldBegin(ctx, "", thrift.STRING, 1))
		must(p.WriteBinary(ctx, []byte("min\x00max")))
		must(p.WriteFieldEnd(ctx))
		must(p.WriteFieldBegin(ctx, "", thrift.DOUBLE, 2))
		must(p.WriteDouble(ctx, 2.5))
		must(p.WriteFieldEnd(ctx))
		must(p.WriteFieldBegin(ctx, "", thrift.MAP, 40))
		must(p.WriteMapBegin(ctx, thrift.I32, thrift.LIST, 2))
		for k := range 2 {
			must(p.WriteI32(ctx, int32(k)))
			must(p.WriteListBegin(ctx, thrift.BOOL, 20))
			for i := range 20 {
				must(p.WriteBool(ctx, i%3 == 0))
			}
			must(p.WriteListEnd(ctx))
		}
		must(p.WriteMapEnd(ctx))
		must(p.WriteFieldEnd(ctx))
		must(p.WriteFieldBegin(ctx, "", thrift.MAP, 41))
		must(p.WriteMapBegin(ctx, thrift.STRING, thrift.I64, 0))
		must(p.WriteMapEnd(ctx))
		must(p.WriteFieldEnd(ctx))
		must(p.WriteFieldBegin(ctx, "", thrift.SET, 3))
		must(p.WriteSetBegin(ctx, thrift.I64, 3))
		for _, v := range []int64{-1, 1 << 40, 7} {
			must(p.WriteI64(ctx, v))
		}
		must(p.WriteSetEnd(ctx))
		must(p.WriteFieldEnd(ctx))
		must(p.WriteFieldBegin(ctx, "", thrift.BOOL, 4))
		must(p.WriteBool(ctx, true))
		must(p.WriteFieldEnd(ctx))
		must(p.WriteFieldBegin(ctx, "", thrift.BYTE, 5))
		must(p.WriteByte(ctx, -3))
		must(p.WriteFieldEnd(ctx))
		must(p.WriteFieldBegin(ctx, "", thrift.I16, 6))
		must(p.WriteI16(ctx, -300))
		must(p.WriteFieldEnd(ctx))
		must(p.WriteFieldBegin(ctx, "", thrift.LIST, 7))
		must(p.WriteListBegin(ctx, thrift.STRUCT, 2))
		for range 2 {
			must(p.WriteStructBegin(ctx, "s"))
			must(p.WriteFieldBegin(ctx, "", thrift.STRUCT, 1))
			must(p.WriteStructBegin(ctx, "t"))
			must(p.WriteFieldBegin(ctx, "", thrift.I32, 2))
			must(p.WriteI32(ctx, 9))
			must(p.WriteFieldEnd(ctx))
			must(p.WriteFieldStop(ctx))
			must(p.WriteStructEnd(ctx))
			must(p.WriteFieldEnd(ctx))
			must(p.WriteFieldStop(ctx))
			must(p.WriteStructEnd(ctx))
		}
		must(p.WriteListEnd(ctx))
		must(p.WriteFieldEnd(ctx))
		must(p.WriteFieldStop(ctx))
		must(p.WriteStructEnd(ctx))
	}
	must(p.WriteStructBegin(ctx, "PageHeader"))
	i32(1, pageDataV2)
	i32(2, 4000)
	i32(3, 1234)
	i32(4, -559038737)                                   // crc
	must(p.WriteFieldBegin(ctx, "", thrift.STRUCT, 300)) // unknown, a long field id
	unknown()
	must(p.WriteFieldEnd(ctx))
	must(p.WriteFieldBegin(ctx, "", thrift.STRUCT, 8)) // backwards: a long field id
	must(p.WriteStructBegin(ctx, "DataPageHeaderV2"))
	i32(1, 1000)
	i32(2, 17)
	i32(3, 1000)
	i32(4, int32(parquet.Encodings.RLEDict))
	i32(5, 130)
	i32(6, 0)
	must(p.WriteFieldBegin(ctx, "", thrift.BOOL, 7))
	must(p.WriteBool(ctx, false))
	must(p.WriteFieldEnd(ctx))
	must(p.WriteFieldBegin(ctx, "", thrift.STRUCT, 8)) // statistics
	unknown()
	must(p.WriteFieldEnd(ctx))
	must(p.WriteFieldBegin(ctx, "", thrift.STRUCT, 9)) // unknown
	unknown()
	must(p.WriteFieldEnd(ctx))
	must(p.WriteFieldStop(ctx))
	must(p.WriteStructEnd(ctx))
	must(p.WriteFieldEnd(ctx))
	must(p.WriteFieldStop(ctx))
	must(p.WriteStructEnd(ctx))
	must(p.Flush(ctx))
	return buf.Bytes()
}

// TestParsePageHeader: a header written by Apache Thrift's compact
// protocol with fields of every type the reader skips decodes to what
// was written, with its length; every truncation of it, deep nesting and
// random bytes are errors (or headers), never a panic.
func TestParsePageHeader(t *testing.T) {
	b := thriftHeader(t)
	h, n, err := parsePageHeader(append(b, 0xde, 0xad, 0xbe, 0xef)) // the page follows
	if err != nil {
		t.Fatal(err)
	}
	want := pageHeader{typ: pageDataV2, uncompressed: 4000, compressed: 1234, numValues: 1000, encoding: int32(parquet.Encodings.RLEDict),
		numNulls: 17, defLen: 130, valuesCompressed: false, v2: true}
	if h != want || n != len(b) {
		t.Fatalf("%+v, %d bytes\nwant %+v, %d bytes", h, n, want, len(b))
	}
	for k := range len(b) {
		if _, _, err := parsePageHeader(b[:k]); !errors.Is(err, errPage) {
			t.Fatalf("%d of %d bytes: %v, want a page error", k, len(b), err)
		}
	}
	// Structs nested 100 deep in an unknown field.
	deep := []byte{0xac} // field 10, a struct
	for range 100 {
		deep = append(deep, 0x1c) // field delta 1, struct
	}
	if _, _, err := parsePageHeader(deep); !errors.Is(err, errPage) {
		t.Fatalf("deep nesting: %v", err)
	}
	// A list claiming more elements than the bytes left.
	if _, _, err := parsePageHeader([]byte{0xa9, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f}); !errors.Is(err, errPage) {
		t.Fatalf("long list: %v", err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		r := make([]byte, rng.IntN(64))
		for i := range r {
			r[i] = byte(rng.Uint32())
		}
		if rng.IntN(2) == 0 && len(r) > 0 { // mutate the real header
			r = append([]byte(nil), b...)
			r[rng.IntN(len(r))] ^= byte(1 + rng.IntN(255))
		}
		if _, n, err := parsePageHeader(r); err == nil && (n <= 0 || n > len(r)) {
			t.Fatalf("% x: header of %d bytes", r, n)
		}
	}
}

// TestParsePageHeaderArrow: the page headers arrow-go writes (with their
// statistics) decode, page for page, to the pages arrow-go's own page
// reader gives: type, values, encodings, sizes.
func TestParsePageHeaderArrow(t *testing.T) {
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		path := filepath.Join(t.TempDir(), "h.parquet")
		writeFloatSpec(t, path, floatSpec{n: 900, w: 3, rg: 500, nullable: func(j int) bool { return j > 0 }, null: func(i, j int) bool { return i%7 == j },
			value: func(i, j int) float32 { return float32(i % (10 + 400*j)) },
			props: []parquet.WriterProperty{parquet.WithDataPageVersion(v), parquet.WithDataPageSize(512), parquet.WithCompression(compress.Codecs.Snappy),
				parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(800), parquet.WithStats(true)}})
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		pages, stats := 0, false
		for g := range pf.NumRowGroups() {
			rg := pf.RowGroup(g)
			for c := range 3 {
				cc, _ := rg.MetaData().ColumnChunk(c)
				if ok, _ := cc.StatsSet(); !ok {
					t.Fatal("no statistics written")
				}
				start := cc.DataPageOffset()
				if cc.HasDictionaryPage() {
					start = cc.DictionaryPageOffset()
				}
				chunk := raw[start : start+cc.TotalCompressedSize()]
				pr, err := rg.GetColumnPageReader(c)
				if err != nil {
					t.Fatal(err)
				}
				for pr.Next() {
					h, n, err := parsePageHeader(chunk)
					if err != nil {
						t.Fatalf("row group %d column %d: %v", g, c, err)
					}
					p := pr.Page()
					var enc parquet.Encoding
					size := len(p.Data())
					switch p := p.(type) {
					case *file.DictionaryPage:
						enc = parquet.Encoding(p.Encoding())
						if h.typ != pageDictionary || !h.dict {
							t.Fatalf("%+v for a dictionary page", h)
						}
					case *file.DataPageV1:
						enc, size = parquet.Encoding(p.Encoding()), int(p.UncompressedSize())
						stats = stats || p.Statistics().HasMax
						if h.typ != pageData || !h.data || h.defEncoding != int32(p.DefinitionLevelEncoding()) {
							t.Fatalf("%+v for a v1 page", h)
						}
					case *file.DataPageV2:
						enc, size = parquet.Encoding(p.Encoding()), int(p.UncompressedSize())
						stats = stats || p.Statistics().HasMax
						if h.typ != pageDataV2 || !h.v2 || h.numNulls != p.NumNulls() || h.defLen != p.DefinitionLevelByteLen() || h.valuesCompressed != p.IsCompressed() {
							t.Fatalf("%+v for a v2 page", h)
						}
					}
					if h.numValues != p.NumValues() || parquet.Encoding(h.encoding) != enc || int(h.uncompressed) != size {
						t.Fatalf("%+v for a page of %d values, %s, %d bytes", h, p.NumValues(), enc, size)
					}
					chunk = chunk[n+int(h.compressed):]
					pages++
				}
				if err := pr.Err(); err != nil || len(chunk) != 0 {
					t.Fatalf("%v, %d bytes left", err, len(chunk))
				}
				pr.Close()
			}
		}
		pf.Close()
		if pages < 20 || !stats {
			t.Fatalf("%d pages, statistics in their headers: %v", pages, stats)
		}
	}
}
