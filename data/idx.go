package data

// The IDX format of the MNIST database (LeCun, Cortes and Burges,
// "THE MNIST DATABASE of handwritten digits", file format section):
//
//	bytes 0-1  zero
//	byte  2    element type: 0x08 unsigned byte, 0x09 signed byte,
//	           0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64
//	byte  3    number of dimensions d
//	then       d sizes, each a 32-bit big-endian integer
//	then       the elements, big-endian, in row-major order.

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/fathom-ml/fathom/internal/atomicfile"
)

// IDXType is the element type code of an IDX file.
type IDXType byte

// The element types of the IDX format.
const (
	IDXUint8   IDXType = 0x08
	IDXInt8    IDXType = 0x09
	IDXInt16   IDXType = 0x0B
	IDXInt32   IDXType = 0x0C
	IDXFloat32 IDXType = 0x0D
	IDXFloat64 IDXType = 0x0E
)

// size returns the element size in bytes, or 0 for an unknown type.
func (t IDXType) size() int {
	switch t {
	case IDXUint8, IDXInt8:
		return 1
	case IDXInt16:
		return 2
	case IDXInt32, IDXFloat32:
		return 4
	case IDXFloat64:
		return 8
	}
	return 0
}

func (t IDXType) String() string {
	switch t {
	case IDXUint8:
		return "ubyte"
	case IDXInt8:
		return "byte"
	case IDXInt16:
		return "short"
	case IDXInt32:
		return "int"
	case IDXFloat32:
		return "float"
	case IDXFloat64:
		return "double"
	}
	return "0x" + strconv.FormatUint(uint64(t), 16)
}

// MaxIDXBytes is the largest element data an IDX file may declare (16 GiB),
// whatever the memory limit (see [MaxInputBytes]). Larger declared sizes
// are refused before anything is allocated.
const MaxIDXBytes = 16 << 30

// IDX is the content of an IDX file: its dimensions and its elements. Exactly
// one of the element slices is set, the one that matches Type.
type IDX struct {
	Type IDXType
	Dims []int

	Uint8   []uint8
	Int8    []int8
	Int16   []int16
	Int32   []int32
	Float32 []float32
	Float64 []float64
}

// Len returns the number of elements, the product of Dims.
func (x *IDX) Len() int {
	n := 1
	for _, d := range x.Dims {
		n *= d
	}
	return n
}

// AsFloat32 returns the elements converted to float32, each multiplied by
// scale (use 1 for no scaling, 1.0/255 to map bytes to [0, 1]).
func (x *IDX) AsFloat32(scale float32) []float32 {
	out := make([]float32, x.Len())
	switch x.Type {
	case IDXUint8:
		for i, v := range x.Uint8 {
			out[i] = float32(v) * scale
		}
	case IDXInt8:
		for i, v := range x.Int8 {
			out[i] = float32(v) * scale
		}
	case IDXInt16:
		for i, v := range x.Int16 {
			out[i] = float32(v) * scale
		}
	case IDXInt32:
		for i, v := range x.Int32 {
			out[i] = float32(v) * scale
		}
	case IDXFloat32:
		for i, v := range x.Float32 {
			out[i] = v * scale
		}
	case IDXFloat64:
		for i, v := range x.Float64 {
			out[i] = float32(v) * scale
		}
	}
	return out
}

// ReadIDX reads an IDX file, plain or gzip-compressed (recognised by its
// magic bytes, whatever the file is called), within the memory limit
// [MaxInputBytes] returns.
func ReadIDX(path string) (*IDX, error) {
	return ReadIDXLimit(path, 0)
}

// ReadIDXLimit is ReadIDX with an explicit memory limit in bytes (0 means
// [MaxInputBytes]). See [DecodeIDXLimit] for what the limit counts. An
// uncompressed file must be exactly as long as its header declares; that
// is checked before its data is read.
func ReadIDXLimit(path string, maxBytes int64) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return decodeIDX(f, path, size, maxBytes)
}

// DecodeIDX reads an IDX file from r, plain or gzip-compressed; name is used
// in error messages. The input must end where the data ends. Memory is
// bounded by [MaxInputBytes].
func DecodeIDX(r io.Reader, name string) (*IDX, error) {
	return decodeIDX(r, name, -1, 0)
}

// DecodeIDXLimit is DecodeIDX with an explicit memory limit in bytes (0
// means [MaxInputBytes]). The limit counts what reading the file and
// using it allocate: the element data, its conversion to a Go slice of the
// element type, and the float32 copy a Table holds ([IDX.AsFloat32]). A
// header declaring more is refused before anything is allocated; the data
// buffer grows as data arrives, so a short (or gzip) stream that declares a
// large size costs about what it really holds.
func DecodeIDXLimit(r io.Reader, name string, maxBytes int64) (*IDX, error) {
	return decodeIDX(r, name, -1, maxBytes)
}

// idxCost returns the bytes decoding count elements of typ and converting
// them to float32 allocate: the raw data, the typed slice (the raw data
// itself for unsigned bytes) and the float32 copy.
func idxCost(typ IDXType, count uint64) uint64 {
	raw := count * uint64(typ.size())
	typed := raw
	if typ == IDXUint8 {
		typed = 0
	}
	return raw + typed + 4*count
}

// decodeIDX decodes r; size is the length of r's file (-1 if unknown).
func decodeIDX(r io.Reader, name string, size int64, maxBytes int64) (*IDX, error) {
	if maxBytes <= 0 {
		var err error
		if maxBytes, err = MaxInputBytes(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	br := bufio.NewReaderSize(r, 1<<16)
	var src io.Reader = br
	where := "byte offset"
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		src = bufio.NewReaderSize(zr, 1<<16)
		where = "uncompressed byte offset"
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: IDX: "+format, append([]any{name}, args...)...)
	}
	readErr := func(err error, off int, what string) error {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fail("truncated at %s %d while reading %s", where, off, what)
		}
		return fmt.Errorf("%s: %w", name, err)
	}

	var head [4]byte
	if k, err := io.ReadFull(src, head[:]); err != nil {
		return nil, readErr(err, k, "the magic number")
	}
	if head[0] != 0 || head[1] != 0 {
		return nil, fail("bad magic number % x: the first two bytes must be zero", head)
	}
	typ := IDXType(head[2])
	if typ.size() == 0 {
		return nil, fail("bad magic number % x: unknown element type 0x%02x", head, head[2])
	}
	elemSize := typ.size()
	ndims := int(head[3])
	dimBytes := make([]byte, 4*ndims)
	if k, err := io.ReadFull(src, dimBytes); err != nil {
		return nil, readErr(err, 4+k, fmt.Sprintf("the %d dimension sizes", ndims))
	}
	dims := make([]int, ndims)
	n := uint64(1)
	for i := range dims {
		d := binary.BigEndian.Uint32(dimBytes[4*i:])
		dims[i] = int(d)
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 {
			return nil, fail("dimensions %v: element count overflows", dims[:i+1])
		}
		n = lo
	}
	hi, nbytes := bits.Mul64(n, uint64(elemSize))
	if hi != 0 || nbytes > MaxIDXBytes {
		return nil, fail("dimensions %v of %s need more than the %d-byte limit", dims, typ, MaxIDXBytes)
	}
	start := 4 + 4*ndims
	if where == "byte offset" && size >= 0 && uint64(size) != uint64(start)+nbytes {
		return nil, fail("the file is %d bytes but its header declares dimensions %v of %s, %d bytes of data after a %d-byte header",
			size, dims, typ, nbytes, start)
	}
	if cost := idxCost(typ, n); cost > uint64(maxBytes) {
		return nil, fail("dimensions %v of %s need %d bytes of memory (%d of data and its float32 copy), over the limit of %d bytes (set %s to raise it)",
			dims, typ, cost, nbytes, maxBytes, MaxInputBytesEnv)
	}
	buf, err := readAtMost(src, int(nbytes))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fail("truncated at %s %d: dimensions %v of %s need %d bytes of data, found %d",
				where, start+len(buf), dims, typ, nbytes, len(buf))
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var one [1]byte
	if k, err := io.ReadFull(src, one[:]); k > 0 {
		return nil, fail("trailing data at %s %d, after the %d elements its dimensions %v declare", where, start+len(buf), n, dims)
	} else if err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}

	x := &IDX{Type: typ, Dims: dims}
	count := int(n)
	switch typ {
	case IDXUint8:
		x.Uint8 = buf
	case IDXInt8:
		x.Int8 = make([]int8, count)
		for i, b := range buf {
			x.Int8[i] = int8(b)
		}
	case IDXInt16:
		x.Int16 = make([]int16, count)
		for i := range x.Int16 {
			x.Int16[i] = int16(binary.BigEndian.Uint16(buf[2*i:]))
		}
	case IDXInt32:
		x.Int32 = make([]int32, count)
		for i := range x.Int32 {
			x.Int32[i] = int32(binary.BigEndian.Uint32(buf[4*i:]))
		}
	case IDXFloat32:
		x.Float32 = make([]float32, count)
		for i := range x.Float32 {
			x.Float32[i] = math.Float32frombits(binary.BigEndian.Uint32(buf[4*i:]))
		}
	case IDXFloat64:
		x.Float64 = make([]float64, count)
		for i := range x.Float64 {
			x.Float64[i] = math.Float64frombits(binary.BigEndian.Uint64(buf[8*i:]))
		}
	}
	return x, nil
}

// readAtMost reads exactly n bytes, growing its buffer as data arrives so that
// a corrupt size costs no more memory than about twice what the input holds. On a short read it returns the bytes read and io.ErrUnexpectedEOF.
func readAtMost(r io.Reader, n int) ([]byte, error) {
	b := make([]byte, 0, min(n, 64<<10))
	for len(b) < n {
		// Grow geometrically: never more than twice what has arrived.
		step := min(n-len(b), max(len(b), 64<<10))
		b = slices.Grow(b, step)
		k, err := io.ReadFull(r, b[len(b):len(b)+step])
		b = b[:len(b)+k]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return b, err
		}
	}
	return b, nil
}

// EncodeIDX writes x in the IDX format (uncompressed).
func EncodeIDX(w io.Writer, x *IDX) error {
	size := x.Type.size()
	if size == 0 {
		return fmt.Errorf("IDX: unknown element type %v", x.Type)
	}
	if len(x.Dims) > 255 {
		return fmt.Errorf("IDX: %d dimensions; the format allows 255", len(x.Dims))
	}
	n := 1
	for _, d := range x.Dims {
		if d < 0 || d > math.MaxUint32 {
			return fmt.Errorf("IDX: dimension %d does not fit the format", d)
		}
		n *= d
	}
	var have int
	switch x.Type {
	case IDXUint8:
		have = len(x.Uint8)
	case IDXInt8:
		have = len(x.Int8)
	case IDXInt16:
		have = len(x.Int16)
	case IDXInt32:
		have = len(x.Int32)
	case IDXFloat32:
		have = len(x.Float32)
	case IDXFloat64:
		have = len(x.Float64)
	}
	if have != n {
		return fmt.Errorf("IDX: dimensions %v need %d elements, the %s data has %d", x.Dims, n, x.Type, have)
	}
	b := []byte{0, 0, byte(x.Type), byte(len(x.Dims))}
	for _, d := range x.Dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	b = slices.Grow(b, n*size)
	switch x.Type {
	case IDXUint8:
		b = append(b, x.Uint8...)
	case IDXInt8:
		for _, v := range x.Int8 {
			b = append(b, byte(v))
		}
	case IDXInt16:
		for _, v := range x.Int16 {
			b = binary.BigEndian.AppendUint16(b, uint16(v))
		}
	case IDXInt32:
		for _, v := range x.Int32 {
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		}
	case IDXFloat32:
		for _, v := range x.Float32 {
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(v))
		}
	case IDXFloat64:
		for _, v := range x.Float64 {
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	_, err := w.Write(b)
	return err
}

// WriteIDX writes x to path, gzip-compressed if path ends in ".gz", through a
// temporary file that is renamed into place.
func WriteIDX(path string, x *IDX) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		if filepath.Ext(path) != ".gz" {
			return EncodeIDX(w, x)
		}
		zw := gzip.NewWriter(w)
		if err := EncodeIDX(zw, x); err != nil {
			return err
		}
		return zw.Close()
	})
}
