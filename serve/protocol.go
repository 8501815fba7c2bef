package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// nativeLittleEndian says the machine stores numbers as the binary tensor
// data extension does.
var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// The JSON documents of the Open Inference Protocol's REST form (KServe
// v2). Field names follow the protocol; unknown fields are ignored.

// InferRequest is the body of POST /v2/models/{name}/infer.
type InferRequest struct {
	ID         string            `json:"id,omitempty"`
	Parameters map[string]any    `json:"parameters,omitempty"`
	Inputs     []RequestInput    `json:"inputs"`
	Outputs    []RequestedOutput `json:"outputs,omitempty"`
}

// RequestInput is one input tensor of an inference request. Data holds
// the tensor's elements in row-major order, flat or nested as the shape.
type RequestInput struct {
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	Datatype   string          `json:"datatype"`
	Parameters map[string]any  `json:"parameters,omitempty"`
	Data       json.RawMessage `json:"data"`
}

// RequestedOutput names an output the client wants.
type RequestedOutput struct {
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// InferResponse is the answer to an inference request.
type InferResponse struct {
	ModelName    string         `json:"model_name"`
	ModelVersion string         `json:"model_version,omitempty"`
	ID           string         `json:"id,omitempty"`
	Outputs      []OutputTensor `json:"outputs"`
}

// OutputTensor is one output tensor: Data is a flat row-major slice
// ([]int64, []float32 or []string).
type OutputTensor struct {
	Name     string  `json:"name"`
	Shape    []int64 `json:"shape"`
	Datatype string  `json:"datatype"`
	Data     any     `json:"data"`
	// Binary sends Data in the binary tensor data extension: after the
	// JSON, which gives its size as the parameter binary_data_size.
	Binary bool `json:"-"`
}

// ErrorResponse is every error's body.
type ErrorResponse struct {
	Error string `json:"error"`
}

// ServerMetadata is the answer to GET /v2.
type ServerMetadata struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

// ModelMetadata is the answer to GET /v2/models/{name}[/versions/{v}].
type ModelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions,omitempty"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
	// Parameters carries what the protocol has no field for: the task,
	// the class names and the feature column names.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// TensorMetadata describes an input or output; -1 in Shape is a
// dimension of any size (the batch).
type TensorMetadata struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// numericType says how a protocol datatype's JSON values are checked
// before they become float32.
type numericType struct {
	integer  bool
	min, max float64
	bool     bool
}

// numericTypes are the input datatypes a model accepts; every value is
// converted to float32.
var numericTypes = map[string]numericType{
	"BOOL":   {bool: true},
	"UINT8":  {integer: true, min: 0, max: math.MaxUint8},
	"UINT16": {integer: true, min: 0, max: math.MaxUint16},
	"UINT32": {integer: true, min: 0, max: math.MaxUint32},
	"UINT64": {integer: true, min: 0, max: math.MaxUint64},
	"INT8":   {integer: true, min: math.MinInt8, max: math.MaxInt8},
	"INT16":  {integer: true, min: math.MinInt16, max: math.MaxInt16},
	"INT32":  {integer: true, min: math.MinInt32, max: math.MaxInt32},
	"INT64":  {integer: true, min: math.MinInt64, max: math.MaxInt64},
	"FP16":   {min: -65504, max: 65504},
	"FP32":   {min: -math.MaxFloat32, max: math.MaxFloat32},
	"FP64":   {min: -math.MaxFloat64, max: math.MaxFloat64},
}

// errData is wrapped by every error about an input's data.
var errData = errors.New("bad tensor data")

// decodeData parses a tensor's JSON data of datatype dt into dst (which
// it appends to and returns). The data is either flat, holding exactly
// prod(shape) values, or nested, one array level per dimension of shape
// with that many elements at each level. Every value must be a JSON
// number (true or false for BOOL) within the datatype's range, and an
// integer for the integer types.
func decodeData(dst []float32, raw []byte, dt string, shape []int64) ([]float32, error) {
	nt, ok := numericTypes[dt]
	if !ok {
		return nil, fmt.Errorf("datatype %q is not supported for model input (want one of BOOL, UINT8..UINT64, INT8..INT64, FP16, FP32, FP64)", dt)
	}
	want := int64(1)
	for _, d := range shape {
		want *= d
	}
	p := dataParser{b: raw, nt: nt, dt: dt, out: dst}
	p.skipSpace()
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return nil, fmt.Errorf("%w: data must be a JSON array", errData)
	}
	// Flat when the first element is not itself an array.
	j := p.i + 1
	for j < len(p.b) && isSpace(p.b[j]) {
		j++
	}
	nested := j < len(p.b) && p.b[j] == '['
	var err error
	if nested {
		err = p.nested(shape)
	} else {
		var n int64
		n, err = p.flat(want)
		if err == nil && n != want {
			err = fmt.Errorf("%w: %d values for shape %s (%d values)", errData, n, shapeString(shape), want)
		}
	}
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.b) {
		return nil, fmt.Errorf("%w: unexpected text after the data at byte %d", errData, p.i)
	}
	return p.out, nil
}

type dataParser struct {
	b   []byte
	i   int
	nt  numericType
	dt  string
	out []float32
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *dataParser) skipSpace() {
	for p.i < len(p.b) && isSpace(p.b[p.i]) {
		p.i++
	}
}

// flat parses an array of scalars at p.i, stopping with an error once it
// holds more than limit values; it returns how many it read.
func (p *dataParser) flat(limit int64) (int64, error) {
	p.i++ // '['
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return 0, nil
	}
	var n int64
	for {
		if n == limit {
			return n + 1, fmt.Errorf("%w: more than %d values for the input's shape", errData, limit)
		}
		if err := p.scalar(); err != nil {
			return n, err
		}
		n++
		p.skipSpace()
		if p.i >= len(p.b) {
			return n, fmt.Errorf("%w: unterminated array", errData)
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case ']':
			p.i++
			return n, nil
		default:
			return n, fmt.Errorf("%w: unexpected %q at byte %d", errData, p.b[p.i], p.i)
		}
	}
}

// nested parses an array whose nesting matches shape exactly.
func (p *dataParser) nested(shape []int64) error {
	p.skipSpace()
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return fmt.Errorf("%w: nested data does not match shape: expected an array at byte %d", errData, p.i)
	}
	if len(shape) == 1 {
		n, err := p.flat(shape[0])
		if err != nil {
			return err
		}
		if n != shape[0] {
			return fmt.Errorf("%w: nested data does not match shape: an innermost array holds %d values, the shape says %d", errData, n, shape[0])
		}
		return nil
	}
	if len(shape) == 0 {
		return fmt.Errorf("%w: nested data is deeper than the shape", errData)
	}
	p.i++ // '['
	for k := int64(0); k < shape[0]; k++ {
		if k > 0 {
			p.skipSpace()
			if p.i >= len(p.b) || p.b[p.i] != ',' {
				return fmt.Errorf("%w: nested data does not match shape: an array holds %d elements, the shape says %d", errData, k, shape[0])
			}
			p.i++
		}
		if err := p.nested(shape[1:]); err != nil {
			return err
		}
	}
	p.skipSpace()
	if p.i >= len(p.b) || p.b[p.i] != ']' {
		return fmt.Errorf("%w: nested data does not match shape: an array holds more than the %d elements the shape says", errData, shape[0])
	}
	p.i++
	return nil
}

// scalar parses one value at p.i and appends it.
func (p *dataParser) scalar() error {
	start := p.i
	if p.nt.bool {
		switch {
		case bytes.HasPrefix(p.b[p.i:], []byte("true")):
			p.i += 4
			p.out = append(p.out, 1)
		case bytes.HasPrefix(p.b[p.i:], []byte("false")):
			p.i += 5
			p.out = append(p.out, 0)
		default:
			return fmt.Errorf("%w: BOOL data must be true or false (byte %d)", errData, start)
		}
		return nil
	}
	for p.i < len(p.b) {
		c := p.b[p.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.i++
			continue
		}
		break
	}
	tok := p.b[start:p.i]
	if !validJSONNumber(tok) {
		end := min(start+20, len(p.b))
		return fmt.Errorf("%w: %s data must be numbers, found %q at byte %d", errData, p.dt, p.b[start:end], start)
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || v < p.nt.min || v > p.nt.max {
		return fmt.Errorf("%w: %s is out of range for %s", errData, tok, p.dt)
	}
	if p.nt.integer && v != math.Trunc(v) {
		return fmt.Errorf("%w: %s is not an integer (datatype %s)", errData, tok, p.dt)
	}
	p.out = append(p.out, float32(v))
	return nil
}

// validJSONNumber reports whether tok is a number as JSON writes it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validJSONNumber(tok []byte) bool {
	i := 0
	if i < len(tok) && tok[i] == '-' {
		i++
	}
	digits := func() int {
		s := i
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			i++
		}
		return i - s
	}
	if i < len(tok) && tok[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(tok) && tok[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(tok)
}

// binarySize is the size in bytes of one element of each datatype in the
// binary tensor data extension (little-endian, BOOL one byte).
var binarySize = map[string]int{
	"BOOL": 1, "UINT8": 1, "UINT16": 2, "UINT32": 4, "UINT64": 8,
	"INT8": 1, "INT16": 2, "INT32": 4, "INT64": 8, "FP32": 4, "FP64": 8,
}

// decodeBinary converts a tensor's binary data (the protocol's binary
// tensor data extension: the elements in row-major order, little-endian)
// of datatype dt into dst. The data must hold exactly n elements.
func decodeBinary(dst []float32, raw []byte, dt string, n int64) ([]float32, error) {
	size, ok := binarySize[dt]
	if !ok {
		return nil, fmt.Errorf("datatype %q is not supported as binary model input (want BOOL, UINT8..UINT64, INT8..INT64, FP32 or FP64)", dt)
	}
	if int64(len(raw)) != n*int64(size) {
		return nil, fmt.Errorf("%w: %d bytes of binary %s data, the shape needs %d", errData, len(raw), dt, n*int64(size))
	}
	le := binary.LittleEndian
	if dt == "FP32" { // the common case: a copy on little-endian machines
		at := len(dst)
		dst = slices.Grow(dst, int(n))[:at+int(n)]
		out := dst[at:]
		if nativeLittleEndian && n > 0 {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(raw)), raw)
		} else {
			for k := range out {
				out[k] = math.Float32frombits(le.Uint32(raw[4*k:]))
			}
		}
		if !kernel.FiniteF32(out) {
			for k, v := range out {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return nil, fmt.Errorf("%w: element %d is %v", errData, k, v)
				}
			}
		}
		return dst, nil
	}
	for i := 0; i < len(raw); i += size {
		var v float32
		switch dt {
		case "FP64":
			f := math.Float64frombits(le.Uint64(raw[i:]))
			if math.IsNaN(f) || math.Abs(f) > math.MaxFloat32 {
				return nil, fmt.Errorf("%w: element %d is %v, out of range for float32", errData, i/size, f)
			}
			v = float32(f)
		case "BOOL":
			if raw[i] > 1 {
				return nil, fmt.Errorf("%w: BOOL element %d is %d, not 0 or 1", errData, i/size, raw[i])
			}
			v = float32(raw[i])
		case "UINT8":
			v = float32(raw[i])
		case "INT8":
			v = float32(int8(raw[i]))
		case "UINT16":
			v = float32(le.Uint16(raw[i:]))
		case "INT16":
			v = float32(int16(le.Uint16(raw[i:])))
		case "UINT32":
			v = float32(le.Uint32(raw[i:]))
		case "INT32":
			v = float32(int32(le.Uint32(raw[i:])))
		case "UINT64":
			v = float32(le.Uint64(raw[i:]))
		case "INT64":
			v = float32(int64(le.Uint64(raw[i:])))
		}
		dst = append(dst, v)
	}
	return dst, nil
}
