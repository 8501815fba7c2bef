package parquetpage

import (
	"errors"
	"strconv"
)

// ErrPage is the error of a page that cannot be read: a header, level
// run, dictionary index or size that breaks the format or the bounds.
var ErrPage = errors.New("bad page")

// Encoding is a Parquet encoding (parquet.thrift's Encoding): the value of
// a page header's encoding fields.
type Encoding int32

// The encodings of parquet.thrift the walker meets.
const (
	Plain     Encoding = 0
	PlainDict Encoding = 2
	RLE       Encoding = 3
	BitPacked Encoding = 4
	RLEDict   Encoding = 8
)

var encodingNames = map[Encoding]string{
	0: "PLAIN", 2: "PLAIN_DICTIONARY", 3: "RLE", 4: "BIT_PACKED", 5: "DELTA_BINARY_PACKED",
	6: "DELTA_LENGTH_BYTE_ARRAY", 7: "DELTA_BYTE_ARRAY", 8: "RLE_DICTIONARY", 9: "BYTE_STREAM_SPLIT",
}

// String is the encoding's name in parquet.thrift.
func (e Encoding) String() string {
	if s, ok := encodingNames[e]; ok {
		return s
	}
	return "<UNSET>"
}

// DictEncoded reports whether values of encoding e are dictionary
// indices.
func (e Encoding) DictEncoded() bool { return e == RLEDict || e == PlainDict }

// Codec is a column chunk's compression (parquet.thrift's
// CompressionCodec).
type Codec int32

// The codecs the walker decompresses itself; others go through a
// Decompressor.
const (
	Uncompressed Codec = 0
	Snappy       Codec = 1
	Zstd         Codec = 6
)

// String names the codec.
func (c Codec) String() string {
	switch c {
	case Uncompressed:
		return "UNCOMPRESSED"
	case Snappy:
		return "SNAPPY"
	case Zstd:
		return "ZSTD"
	}
	return "codec " + strconv.Itoa(int(c))
}

// Decompressor decompresses a page of another codec into dst (of the
// page's uncompressed size) and returns the bytes written, dst or a
// slice the codec chose.
type Decompressor func(dst, src []byte) ([]byte, error)
