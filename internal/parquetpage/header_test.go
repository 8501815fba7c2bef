package parquetpage

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

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
	i32(1, PageDataV2)
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
	i32(4, int32(RLEDict))
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
	h, n, err := ParseHeader(append(b, 0xde, 0xad, 0xbe, 0xef)) // the page follows
	if err != nil {
		t.Fatal(err)
	}
	want := Header{Type: PageDataV2, Uncompressed: 4000, Compressed: 1234, NumValues: 1000, Encoding: int32(RLEDict),
		NumNulls: 17, DefLen: 130, ValuesCompressed: false, HasV2: true}
	if h != want || n != len(b) {
		t.Fatalf("%+v, %d bytes\nwant %+v, %d bytes", h, n, want, len(b))
	}
	for k := range len(b) {
		if _, _, err := ParseHeader(b[:k]); !errors.Is(err, ErrPage) {
			t.Fatalf("%d of %d bytes: %v, want a page error", k, len(b), err)
		}
	}
	// Structs nested 100 deep in an unknown field.
	deep := []byte{0xac} // field 10, a struct
	for range 100 {
		deep = append(deep, 0x1c) // field delta 1, struct
	}
	if _, _, err := ParseHeader(deep); !errors.Is(err, ErrPage) {
		t.Fatalf("deep nesting: %v", err)
	}
	// A list claiming more elements than the bytes left.
	if _, _, err := ParseHeader([]byte{0xa9, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f}); !errors.Is(err, ErrPage) {
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
		if _, n, err := ParseHeader(r); err == nil && (n <= 0 || n > len(r)) {
			t.Fatalf("% x: header of %d bytes", r, n)
		}
	}
}
