package modelfile

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/safetensors"
	"github.com/fathom-ml/fathom/tensor"
)

// The bridge between tensors and safetensors entries: package nn keeps
// state dicts as tensors and knows nothing of files; this file turns them
// into safetensors entries and back.

// safetensors dtype names for tensor dtypes.
var stDTypes = map[tensor.DType]string{
	tensor.Float32: "F32", tensor.Float64: "F64", tensor.Int64: "I64", tensor.Int32: "I32",
	tensor.Uint8: "U8", tensor.Bool: "BOOL", tensor.Float16: "F16", tensor.BFloat16: "BF16",
	tensor.Int8: "I8",
}

// TensorEntry converts t to a safetensors entry: its dtype name and its
// elements as little-endian row-major bytes.
func TensorEntry(name string, t *tensor.Tensor) safetensors.Entry {
	dn, ok := stDTypes[t.DType()]
	if !ok {
		panic(fmt.Sprintf("modelfile: TensorEntry(%q): no safetensors dtype for %v", name, t.DType()))
	}
	n := t.Numel()
	le := binary.LittleEndian
	var b []byte
	switch t.DType() {
	case tensor.Float32:
		b = make([]byte, 4*n)
		for i, v := range t.Float32s() {
			le.PutUint32(b[4*i:], math.Float32bits(v))
		}
	case tensor.Float64:
		b = make([]byte, 8*n)
		for i, v := range t.Float64s() {
			le.PutUint64(b[8*i:], math.Float64bits(v))
		}
	case tensor.Int64:
		b = make([]byte, 8*n)
		for i, v := range t.Int64s() {
			le.PutUint64(b[8*i:], uint64(v))
		}
	case tensor.Int32:
		b = make([]byte, 4*n)
		for i, v := range t.Int32s() {
			le.PutUint32(b[4*i:], uint32(v))
		}
	case tensor.Uint8:
		b = slices.Clone(t.Uint8s())
	case tensor.Int8:
		b = make([]byte, n)
		for i, v := range t.Int8s() {
			b[i] = byte(v)
		}
	case tensor.Bool:
		b = make([]byte, n)
		for i, v := range t.Bools() {
			if v {
				b[i] = 1
			}
		}
	case tensor.Float16, tensor.BFloat16:
		b = make([]byte, 2*n)
		for i, v := range t.Uint16s() {
			le.PutUint16(b[2*i:], v)
		}
	}
	return safetensors.Entry{Name: name, DType: dn, Shape: t.Shape(), Data: b}
}

// EntryTensor converts a safetensors entry to a new tensor. It returns an
// error for dtypes package tensor does not have (I8, U16, F8, ...) and for
// data whose length does not match the shape.
func EntryTensor(e safetensors.Entry) (*tensor.Tensor, error) {
	n := 1
	for _, s := range e.Shape {
		n *= s
	}
	var dt tensor.DType
	found := false
	for d, name := range stDTypes {
		if name == e.DType {
			dt, found = d, true
		}
	}
	if !found {
		return nil, fmt.Errorf("tensor %q: dtype %s is not supported (want F32, F64, F16, BF16, I64, I32, U8, I8 or BOOL)", e.Name, e.DType)
	}
	if len(e.Data) != n*dt.Size() {
		return nil, fmt.Errorf("tensor %q: %d bytes for shape %v of %s (want %d)", e.Name, len(e.Data), e.Shape, e.DType, n*dt.Size())
	}
	le := binary.LittleEndian
	d := e.Data
	var t *tensor.Tensor
	switch dt {
	case tensor.Float32:
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(le.Uint32(d[4*i:]))
		}
		t = tensor.FromFloat32(v, n)
	case tensor.Float64:
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Float64frombits(le.Uint64(d[8*i:]))
		}
		t = tensor.FromFloat64(v, n)
	case tensor.Int64:
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(le.Uint64(d[8*i:]))
		}
		t = tensor.FromInt64(v, n)
	case tensor.Int32:
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(le.Uint32(d[4*i:]))
		}
		t = tensor.FromInt32(v, n)
	case tensor.Uint8:
		t = tensor.FromUint8(slices.Clone(d), n)
	case tensor.Int8:
		v := make([]int8, n)
		for i := range v {
			v[i] = int8(d[i])
		}
		t = tensor.FromInt8(v, n)
	case tensor.Bool:
		v := make([]bool, n)
		for i := range v {
			v[i] = d[i] != 0
		}
		t = tensor.FromBool(v, n)
	case tensor.Float16, tensor.BFloat16:
		v := make([]uint16, n)
		for i := range v {
			v[i] = le.Uint16(d[2*i:])
		}
		if dt == tensor.Float16 {
			t = tensor.FromFloat16Bits(v, n)
		} else {
			t = tensor.FromBFloat16Bits(v, n)
		}
	}
	return t.Reshape(e.Shape...), nil
}

// SaveSafetensors writes the state dict of m to path in the safetensors
// format (loadable by safetensors.torch.load_file), atomically (temp file
// and rename, as safetensors.WriteFile does). metadata may be nil.
func SaveSafetensors(path string, m nn.Module, metadata map[string]string) error {
	return safetensors.WriteFile(path, StateEntries(m), metadata)
}

// ReadStateDict reads a safetensors file into a state dict, returning its
// metadata as well.
func ReadStateDict(path string) (map[string]*tensor.Tensor, map[string]string, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	sd, err := entriesStateDict(f.Tensors)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return sd, f.Metadata, nil
}

// LoadSafetensors loads the safetensors file at path into m with
// LoadStateDict, and returns the file's metadata.
func LoadSafetensors(path string, m nn.Module, strict bool) (map[string]string, error) {
	sd, meta, err := ReadStateDict(path)
	if err != nil {
		return nil, err
	}
	if err := nn.LoadStateDict(m, sd, strict); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return meta, nil
}

// StateEntries converts the state dict of m to safetensors entries, in
// the state dict's order (nn.StateEntries).
func StateEntries(m nn.Module) []safetensors.Entry {
	named := nn.StateEntries(m)
	out := make([]safetensors.Entry, len(named))
	for i, e := range named {
		out[i] = TensorEntry(e.Name, e.Tensor)
	}
	return out
}

// LoadEntries loads safetensors entries into m's parameters and buffers
// strictly: every tensor of m must be there, with its shape, and nothing
// else.
func LoadEntries(m nn.Module, entries []safetensors.Entry) error {
	sd, err := entriesStateDict(entries)
	if err != nil {
		return err
	}
	return nn.LoadStateDict(m, sd, true)
}

// entriesStateDict converts entries to tensors by name.
func entriesStateDict(entries []safetensors.Entry) (map[string]*tensor.Tensor, error) {
	sd := make(map[string]*tensor.Tensor, len(entries))
	for _, e := range entries {
		t, err := EntryTensor(e)
		if err != nil {
			return nil, err
		}
		sd[e.Name] = t
	}
	return sd, nil
}
