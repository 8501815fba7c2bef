package safetensors

// The safetensors format, as specified by the Hugging Face safetensors project
// (README "Format" section and the reference reader/writer in
// safetensors/src/tensor.rs):
//
//	8 bytes   N, an unsigned 64-bit little-endian integer: the header size
//	N bytes   a UTF-8 JSON object, starting with '{', possibly padded at the end
//	          with spaces (0x20) so that 8+N is a multiple of 8:
//	            {"__metadata__": {"key": "value", ...},            (optional)
//	             "name": {"dtype": "F32", "shape": [2, 3],
//	                      "data_offsets": [begin, end]}, ...}
//	rest      the byte buffer; every tensor occupies [begin, end) of it
//	          (offsets relative to the start of the buffer), little-endian,
//	          row-major, with no gaps or overlaps, and the tensors together cover
//	          the buffer exactly.
//
// This file implements that format in plain Go on top of byte slices, so that it
// does not depend on the tensor package.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/fathom-ml/fathom/internal/atomicfile"
)

// MaxHeaderSize is the largest JSON header Read accepts, in bytes. It is the
// limit of the reference implementation (100 MB).
const MaxHeaderSize = 100_000_000

// metadataKey is the reserved header key that holds free-form string metadata.
const metadataKey = "__metadata__"

// ErrFormat is wrapped by every error that reports a malformed safetensors file
// (as opposed to an I/O error), so callers can test it with errors.Is.
var ErrFormat = errors.New("invalid safetensors file")

// Entry is one named tensor: its dtype name as the format spells it ("F32",
// "BF16", "I64", ...), its shape (outermost dimension first; an empty shape is a
// scalar) and its raw little-endian row-major bytes.
type Entry struct {
	Name  string
	DType string
	Shape []int
	Data  []byte
}

// File is the content of a safetensors file.
type File struct {
	// Tensors in the order of their data in the file (by data offset).
	// Their Data slices share one backing buffer; each is capped at its own
	// length, so appending to one never overwrites another.
	Tensors []Entry
	// Metadata is the "__metadata__" object, nil when the file has none.
	Metadata map[string]string
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (Entry, bool) {
	for _, e := range f.Tensors {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// dtypeInfo describes one element type: its size in bits and its rank in the
// reference writer's alignment order (a higher rank is written first).
type dtypeInfo struct {
	bits int
	rank int
}

// dtypes lists the element types of the format. The ranks follow the order of
// the reference implementation's Dtype enum, which is sorted by increasing
// alignment; F4/F6 are packed sub-byte types (4 and 6 bits per element).
var dtypes = map[string]dtypeInfo{
	"BOOL":    {8, 0},
	"F4":      {4, 1},
	"F6_E2M3": {6, 2},
	"F6_E3M2": {6, 3},
	"U8":      {8, 4},
	"I8":      {8, 5},
	"F8_E5M2": {8, 6},
	"F8_E4M3": {8, 7},
	"F8_E8M0": {8, 8},
	"I16":     {16, 9},
	"U16":     {16, 10},
	"F16":     {16, 11},
	"BF16":    {16, 12},
	"I32":     {32, 13},
	"U32":     {32, 14},
	"F32":     {32, 15},
	"C64":     {64, 16},
	"F64":     {64, 17},
	"I64":     {64, 18},
	"U64":     {64, 19},
}

// DTypeBits returns the size of one element of dtype in bits (8 for U8, 32 for
// F32, 4 for the packed F4), and false if the format has no such dtype.
func DTypeBits(dtype string) (int, bool) {
	d, ok := dtypes[dtype]
	return d.bits, ok
}

// byteLen returns the number of bytes a tensor of the given dtype and shape
// occupies, or an error if the dtype is unknown, a dimension is negative, the
// size overflows, or a packed type does not fill whole bytes.
func byteLen(dtype string, shape []uint64) (uint64, error) {
	d, ok := dtypes[dtype]
	if !ok {
		return 0, fmt.Errorf("unknown dtype %q", dtype)
	}
	n := uint64(1)
	for _, s := range shape {
		hi, lo := bits.Mul64(n, s)
		if hi != 0 {
			return 0, fmt.Errorf("shape %v: element count overflows", shape)
		}
		n = lo
	}
	hi, nbits := bits.Mul64(n, uint64(d.bits))
	if hi != 0 {
		return 0, fmt.Errorf("shape %v: byte size overflows", shape)
	}
	if nbits%8 != 0 {
		return 0, fmt.Errorf("shape %v of %s: %d bits is not a whole number of bytes", shape, dtype, nbits)
	}
	return nbits / 8, nil
}

// Write writes tensors and metadata (which may be nil) in the safetensors format.
//
// The layout is the reference writer's: tensors are ordered by decreasing
// alignment of their dtype and then by name, which keeps every tensor aligned
// to its element size; the header is compact JSON with "__metadata__" first
// (its keys sorted), padded with spaces so the data starts at a multiple of 8
// bytes. The output is therefore deterministic.
func Write(w io.Writer, tensors []Entry, metadata map[string]string) error {
	header, order, err := encodeHeader(tensors, metadata)
	if err != nil {
		return err
	}
	var prefix [8]byte
	binary.LittleEndian.PutUint64(prefix[:], uint64(len(header)))
	if _, err := w.Write(prefix[:]); err != nil {
		return fmt.Errorf("safetensors: write header size: %w", err)
	}
	if _, err := w.Write(header); err != nil {
		return fmt.Errorf("safetensors: write header: %w", err)
	}
	for _, i := range order {
		if _, err := w.Write(tensors[i].Data); err != nil {
			return fmt.Errorf("safetensors: write tensor %q: %w", tensors[i].Name, err)
		}
	}
	return nil
}

// encodeHeader validates tensors and metadata and returns the padded JSON header
// and the order (indices into tensors) in which the data must follow it.
func encodeHeader(tensors []Entry, metadata map[string]string) ([]byte, []int, error) {
	seen := make(map[string]bool, len(tensors))
	for i, e := range tensors {
		if e.Name == metadataKey {
			return nil, nil, fmt.Errorf("safetensors: tensor %d: the name %q is reserved", i, metadataKey)
		}
		if !utf8.ValidString(e.Name) {
			return nil, nil, fmt.Errorf("safetensors: tensor %d: name %q is not valid UTF-8", i, e.Name)
		}
		if seen[e.Name] {
			return nil, nil, fmt.Errorf("safetensors: duplicate tensor name %q", e.Name)
		}
		seen[e.Name] = true
		shape := make([]uint64, len(e.Shape))
		for j, s := range e.Shape {
			if s < 0 {
				return nil, nil, fmt.Errorf("safetensors: tensor %q: negative dimension in shape %v", e.Name, e.Shape)
			}
			shape[j] = uint64(s)
		}
		n, err := byteLen(e.DType, shape)
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: %v", e.Name, err)
		}
		if n != uint64(len(e.Data)) {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: %s%v needs %d bytes, data has %d", e.Name, e.DType, e.Shape, n, len(e.Data))
		}
	}
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, nil, fmt.Errorf("safetensors: metadata %q: keys and values must be valid UTF-8", k)
		}
	}

	order := make([]int, len(tensors))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ra, rb := dtypes[tensors[a].DType].rank, dtypes[tensors[b].DType].rank
		if ra != rb {
			return rb - ra // higher alignment first
		}
		return strings.Compare(tensors[a].Name, tensors[b].Name)
	})

	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	if metadata != nil {
		buf.WriteString(`"__metadata__":{`)
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(&buf, k)
			buf.WriteByte(':')
			writeJSONString(&buf, metadata[k])
		}
		buf.WriteByte('}')
		first = false
	}
	var offset uint64
	for _, i := range order {
		e := tensors[i]
		if !first {
			buf.WriteByte(',')
		}
		first = false
		writeJSONString(&buf, e.Name)
		buf.WriteString(`:{"dtype":`)
		writeJSONString(&buf, e.DType)
		buf.WriteString(`,"shape":[`)
		for j, s := range e.Shape {
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(strconv.Itoa(s))
		}
		end := offset + uint64(len(e.Data))
		fmt.Fprintf(&buf, `],"data_offsets":[%d,%d]}`, offset, end)
		offset = end
	}
	buf.WriteByte('}')
	for buf.Len()%8 != 0 {
		buf.WriteByte(' ')
	}
	if buf.Len() > MaxHeaderSize {
		return nil, nil, fmt.Errorf("safetensors: header of %d bytes exceeds the format's limit of %d", buf.Len(), MaxHeaderSize)
	}
	return buf.Bytes(), order, nil
}

// writeJSONString writes s as a JSON string the way serde_json does: only the
// quote, the backslash and control characters are escaped; everything else,
// including non-ASCII text, is written as UTF-8.
func writeJSONString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			buf.WriteString(`\"`)
		case c == '\\':
			buf.WriteString(`\\`)
		case c == '\b':
			buf.WriteString(`\b`)
		case c == '\f':
			buf.WriteString(`\f`)
		case c == '\n':
			buf.WriteString(`\n`)
		case c == '\r':
			buf.WriteString(`\r`)
		case c == '\t':
			buf.WriteString(`\t`)
		case c < 0x20:
			buf.WriteString(`\u00`)
			buf.WriteByte(hex[c>>4])
			buf.WriteByte(hex[c&0xf])
		default:
			buf.WriteByte(c)
		}
	}
	buf.WriteByte('"')
}

// WriteFile writes a safetensors file at path. It writes to a temporary file in
// the same directory, syncs it and renames it over path, so readers never see a
// partial file.
func WriteFile(path string, tensors []Entry, metadata map[string]string) error {
	if err := atomicfile.Write(path, func(w io.Writer) error { return Write(w, tensors, metadata) }); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return nil
}

// ReadFile reads and validates the safetensors file at path. Errors name the
// file and, where it applies, the tensor.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return read(bufio.NewReaderSize(f, 1<<20), path, st.Size())
}

// Read reads and validates a safetensors file from r, which must end where the
// file ends.
func Read(r io.Reader) (*File, error) {
	return read(r, "", -1)
}

// formatError reports a malformed file; it wraps ErrFormat.
type formatError struct {
	file   string // "" when reading a stream
	tensor string // "" when the problem is not about one tensor
	msg    string
}

func (e *formatError) Error() string {
	var b strings.Builder
	if e.file != "" {
		b.WriteString(e.file)
		b.WriteString(": ")
	}
	b.WriteString("safetensors: ")
	if e.tensor != "" {
		fmt.Fprintf(&b, "tensor %q: ", e.tensor)
	}
	b.WriteString(e.msg)
	return b.String()
}

func (e *formatError) Unwrap() error { return ErrFormat }

// headerEntry is one tensor as the header describes it.
type headerEntry struct {
	name  string
	dtype string
	shape []uint64
	begin uint64
	end   uint64
}

// read parses a whole file from r. size is the file size, or -1 if unknown.
func read(r io.Reader, file string, size int64) (*File, error) {
	bad := func(tensor, format string, args ...any) error {
		return &formatError{file: file, tensor: tensor, msg: fmt.Sprintf(format, args...)}
	}
	var prefix [8]byte
	if n, err := io.ReadFull(r, prefix[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, bad("", "file is %d bytes, too short for the 8-byte header size", n)
		}
		return nil, ioError(file, err)
	}
	n := binary.LittleEndian.Uint64(prefix[:])
	if n > MaxHeaderSize {
		return nil, bad("", "header size %d exceeds the limit of %d bytes", n, MaxHeaderSize)
	}
	if size >= 0 && n > uint64(size)-8 {
		return nil, bad("", "header size %d does not fit in a file of %d bytes", n, size)
	}
	header, err := readExactly(r, n)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, bad("", "truncated header: header size is %d bytes, file ends after %d", n, len(header))
		}
		return nil, ioError(file, err)
	}
	entries, meta, err := parseHeader(header)
	if err != nil {
		var fe *formatError
		if errors.As(err, &fe) {
			fe.file = file
			return nil, fe
		}
		return nil, bad("", "%v", err)
	}

	bufLen, err := checkLayout(entries, bad)
	if err != nil {
		return nil, err
	}
	if size >= 0 {
		have := uint64(size) - 8 - n
		if have != bufLen {
			return nil, bad("", "the tensors cover %d bytes of data, the file has %d after the header", bufLen, have)
		}
	}
	if bufLen > math.MaxInt {
		return nil, bad("", "data buffer of %d bytes is too large", bufLen)
	}
	var buf []byte
	if size >= 0 {
		// The size was checked against the file: allocate once.
		buf = make([]byte, bufLen)
		var k int
		k, err = io.ReadFull(r, buf)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		buf = buf[:k]
	} else {
		buf, err = readExactly(r, bufLen)
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, bad("", "truncated data: the tensors need %d bytes after the header, the file has %d", bufLen, len(buf))
		}
		return nil, ioError(file, err)
	}
	var one [1]byte
	if k, err := io.ReadFull(r, one[:]); k > 0 {
		return nil, bad("", "trailing bytes after the %d bytes of tensor data", bufLen)
	} else if err != io.EOF {
		return nil, ioError(file, err)
	}

	out := &File{Metadata: meta, Tensors: make([]Entry, len(entries))}
	for i, e := range entries {
		shape := make([]int, len(e.shape))
		for j, s := range e.shape {
			shape[j] = int(s) // checked above: every dimension is below 2^62
		}
		out.Tensors[i] = Entry{Name: e.name, DType: e.dtype, Shape: shape, Data: buf[e.begin:e.end:e.end]}
	}
	return out, nil
}

// checkLayout sorts entries by their offsets and checks the layout: each
// tensor starts where the previous one ended and holds exactly
// shape×dtype bytes. It returns the bytes the tensors cover; bad makes
// the error of a tensor.
func checkLayout(entries []headerEntry, bad func(tensor, format string, args ...any) error) (uint64, error) {
	slices.SortStableFunc(entries, func(a, b headerEntry) int {
		if a.begin != b.begin {
			if a.begin < b.begin {
				return -1
			}
			return 1
		}
		switch {
		case a.end < b.end:
			return -1
		case a.end > b.end:
			return 1
		}
		return 0
	})
	var cursor uint64
	for _, e := range entries {
		if e.end < e.begin {
			return 0, bad(e.name, "data_offsets [%d, %d] end before they begin", e.begin, e.end)
		}
		if e.begin != cursor {
			if e.begin < cursor {
				return 0, bad(e.name, "data_offsets [%d, %d] overlap the previous tensor, which ends at %d", e.begin, e.end, cursor)
			}
			return 0, bad(e.name, "data_offsets [%d, %d] leave a gap: the previous tensor ends at %d", e.begin, e.end, cursor)
		}
		for _, d := range e.shape {
			if d > math.MaxInt32*math.MaxInt32 { // far beyond any real tensor; keeps int conversions safe
				return 0, bad(e.name, "dimension %d in shape %v is too large", d, e.shape)
			}
		}
		want, err := byteLen(e.dtype, e.shape)
		if err != nil {
			return 0, bad(e.name, "%v", err)
		}
		if e.end-e.begin != want {
			return 0, bad(e.name, "%s%v needs %d bytes, data_offsets [%d, %d] give %d", e.dtype, e.shape, want, e.begin, e.end, e.end-e.begin)
		}
		cursor = e.end
	}
	return cursor, nil
}

func ioError(file string, err error) error {
	if file == "" {
		return fmt.Errorf("safetensors: %w", err)
	}
	return fmt.Errorf("%s: safetensors: %w", file, err)
}

// readExactly reads n bytes, growing its buffer as data arrives so that a
// corrupt size cannot make it allocate much more than the input holds (at
// most about twice). On a short read it returns what it got and io.ErrUnexpectedEOF.
func readExactly(r io.Reader, n uint64) ([]byte, error) {
	const chunk = 64 << 10
	if n <= chunk {
		b := make([]byte, n)
		k, err := io.ReadFull(r, b)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return b[:k], err
	}
	var b []byte
	for uint64(len(b)) < n {
		// Grow geometrically: never more than twice what has arrived.
		step := min(n-uint64(len(b)), max(uint64(len(b)), chunk))
		b = slices.Grow(b, int(step))
		k, err := io.ReadFull(r, b[len(b):len(b)+int(step)])
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

// parseHeader parses the JSON header. It walks the top-level object token by
// token so that a name given twice is reported instead of silently keeping the
// last one, as decoding into a map would.
func parseHeader(header []byte) ([]headerEntry, map[string]string, error) {
	if !utf8.Valid(header) {
		return nil, nil, errors.New("header is not valid UTF-8")
	}
	if len(header) == 0 || header[0] != '{' {
		return nil, nil, errors.New("header does not start with '{'")
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the '{'
		return nil, nil, fmt.Errorf("header is not valid JSON: %v", err)
	}
	var (
		entries []headerEntry
		meta    map[string]string
		seen    = map[string]bool{}
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("header is not valid JSON: %v", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("header is not valid JSON: unexpected %v", tok)
		}
		if seen[name] {
			return nil, nil, &formatError{tensor: name, msg: "name appears twice in the header"}
		}
		seen[name] = true
		if name == metadataKey {
			var m map[string]string
			if err := dec.Decode(&m); err != nil {
				return nil, nil, fmt.Errorf("%s must map strings to strings: %v", metadataKey, err)
			}
			meta = m
			continue
		}
		var info struct {
			DType       *string   `json:"dtype"`
			Shape       *[]uint64 `json:"shape"`
			DataOffsets *[]uint64 `json:"data_offsets"`
		}
		if err := dec.Decode(&info); err != nil {
			var syntax *json.SyntaxError
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &syntax) {
				return nil, nil, fmt.Errorf("header is not valid JSON: %v", err)
			}
			return nil, nil, &formatError{tensor: name, msg: fmt.Sprintf("bad tensor description: %v", err)}
		}
		switch {
		case info.DType == nil:
			return nil, nil, &formatError{tensor: name, msg: `missing "dtype"`}
		case info.Shape == nil:
			return nil, nil, &formatError{tensor: name, msg: `missing "shape"`}
		case info.DataOffsets == nil:
			return nil, nil, &formatError{tensor: name, msg: `missing "data_offsets"`}
		case len(*info.DataOffsets) != 2:
			return nil, nil, &formatError{tensor: name, msg: fmt.Sprintf(`"data_offsets" has %d numbers, want 2`, len(*info.DataOffsets))}
		}
		if _, ok := dtypes[*info.DType]; !ok {
			return nil, nil, &formatError{tensor: name, msg: fmt.Sprintf("unknown dtype %q", *info.DType)}
		}
		off := *info.DataOffsets
		entries = append(entries, headerEntry{name: name, dtype: *info.DType, shape: *info.Shape, begin: off[0], end: off[1]})
	}
	if _, err := dec.Token(); err != nil { // the '}'
		return nil, nil, fmt.Errorf("header is not valid JSON: %v", err)
	}
	// Only padding may follow the object.
	rest := header[dec.InputOffset():]
	if len(bytes.TrimRight(rest, " \t\r\n")) != 0 {
		return nil, nil, errors.New("header has data after its JSON object")
	}
	return entries, meta, nil
}

// F32 returns an F32 entry holding values, copied into little-endian bytes.
// It panics if shape does not match the number of values (a programmer error).
func F32(name string, shape []int, values []float32) Entry {
	return floatEntry(name, "F32", shape, values)
}

// F64 returns an F64 entry holding values, copied into little-endian bytes.
// It panics if shape does not match the number of values (a programmer error).
func F64(name string, shape []int, values []float64) Entry {
	return floatEntry(name, "F64", shape, values)
}

// Float32s decodes an F32 entry's data into a new slice.
func (e Entry) Float32s() ([]float32, error) { return floats[float32](e, "F32") }

// Float64s decodes an F64 entry's data into a new slice.
func (e Entry) Float64s() ([]float64, error) { return floats[float64](e, "F64") }

func floatEntry[F float32 | float64](name, dtype string, shape []int, values []F) Entry {
	n := 1
	for _, s := range shape {
		n *= s
	}
	if n != len(values) {
		panic(fmt.Sprintf("safetensors.%s(%q): shape %v needs %d values, got %d", dtype, name, shape, n, len(values)))
	}
	var zero F
	size := int(unsafe.Sizeof(zero))
	data := make([]byte, size*len(values))
	for i, v := range values {
		if size == 4 {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(v)))
		} else {
			binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(float64(v)))
		}
	}
	return Entry{Name: name, DType: dtype, Shape: slices.Clone(shape), Data: data}
}

func floats[F float32 | float64](e Entry, dtype string) ([]F, error) {
	if e.DType != dtype {
		return nil, fmt.Errorf("tensor %q is %s, not %s", e.Name, e.DType, dtype)
	}
	var zero F
	size := int(unsafe.Sizeof(zero))
	if len(e.Data)%size != 0 {
		return nil, fmt.Errorf("tensor %q: %d bytes is not a whole number of %s values", e.Name, len(e.Data), dtype)
	}
	out := make([]F, len(e.Data)/size)
	for i := range out {
		if size == 4 {
			out[i] = F(math.Float32frombits(binary.LittleEndian.Uint32(e.Data[4*i:])))
		} else {
			out[i] = F(math.Float64frombits(binary.LittleEndian.Uint64(e.Data[8*i:])))
		}
	}
	return out, nil
}
