package nn

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/tensor"
)

// StateDict returns every parameter and buffer of the module tree by
// dotted name (PyTorch's state_dict). The tensors are detached views that
// share storage with the model: writing into them changes the model.
func StateDict(m Module) map[string]*tensor.Tensor {
	sd := map[string]*tensor.Tensor{}
	for _, e := range stateEntries(m) {
		sd[e.Name] = e.Tensor.Detach()
	}
	return sd
}

// stateEntries lists parameters then buffers in walk order, keeping
// tensors registered under several names under each of them.
func stateEntries(m Module) []Named {
	var out []Named
	for _, buffers := range []bool{false, true} {
		walk(m, "", buffers, func(name string, p **tensor.Tensor) {
			out = append(out, Named{name, *p})
		})
	}
	return out
}

// ShapeMismatch is a state dict entry whose shape differs from the model's.
type ShapeMismatch struct {
	Key         string
	Model, Dict []int
}

// StateDictError lists everything LoadStateDict found wrong.
type StateDictError struct {
	Missing    []string // in the model, not in the dict (strict only)
	Unexpected []string // in the dict, not in the model (strict only)
	Mismatched []ShapeMismatch
}

func (e *StateDictError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing keys: "+strings.Join(e.Missing, ", "))
	}
	if len(e.Unexpected) > 0 {
		parts = append(parts, "unexpected keys: "+strings.Join(e.Unexpected, ", "))
	}
	for _, m := range e.Mismatched {
		parts = append(parts, fmt.Sprintf("size mismatch for %s: state dict has shape %v, model has %v", m.Key, m.Dict, m.Model))
	}
	return "nn: loading state dict: " + strings.Join(parts, "; ")
}

// LoadStateDict copies the tensors of sd into the model's parameters and
// buffers of the same names, converting dtypes. With strict, every model
// tensor must be in sd and every key of sd in the model. A key present on
// both sides with different shapes is always an error. Nothing is copied
// unless everything checks out; the error is a *StateDictError naming every
// problem. Parameters are updated in place, so optimizers holding them
// see the loaded values.
func LoadStateDict(m Module, sd map[string]*tensor.Tensor, strict bool) error {
	entries := stateEntries(m)
	e := &StateDictError{}
	inModel := map[string]bool{}
	for _, en := range entries {
		inModel[en.Name] = true
		src, ok := sd[en.Name]
		if !ok {
			if strict {
				e.Missing = append(e.Missing, en.Name)
			}
			continue
		}
		if !slices.Equal(src.Shape(), en.Tensor.Shape()) {
			e.Mismatched = append(e.Mismatched, ShapeMismatch{en.Name, en.Tensor.Shape(), src.Shape()})
		}
	}
	if strict {
		for k := range sd {
			if !inModel[k] {
				e.Unexpected = append(e.Unexpected, k)
			}
		}
		slices.Sort(e.Unexpected)
	}
	if len(e.Missing)+len(e.Unexpected)+len(e.Mismatched) > 0 {
		return e
	}
	for _, en := range entries {
		if src, ok := sd[en.Name]; ok {
			en.Tensor.CopyFrom(src.Detach())
		}
	}
	return nil
}

// safetensors dtype names for tensor dtypes.
var stDTypes = map[tensor.DType]string{
	tensor.Float32: "F32", tensor.Float64: "F64", tensor.Int64: "I64", tensor.Int32: "I32",
	tensor.Uint8: "U8", tensor.Bool: "BOOL", tensor.Float16: "F16", tensor.BFloat16: "BF16",
}

// TensorEntry converts t to a safetensors entry: its dtype name and its
// elements as little-endian row-major bytes.
func TensorEntry(name string, t *tensor.Tensor) modelfile.Entry {
	dn, ok := stDTypes[t.DType()]
	if !ok {
		panic(fmt.Sprintf("nn: TensorEntry(%q): no safetensors dtype for %v", name, t.DType()))
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
	return modelfile.Entry{Name: name, DType: dn, Shape: t.Shape(), Data: b}
}

// EntryTensor converts a safetensors entry to a new tensor. It returns an
// error for dtypes package tensor does not have (I8, U16, F8, ...) and for
// data whose length does not match the shape.
func EntryTensor(e modelfile.Entry) (*tensor.Tensor, error) {
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
		return nil, fmt.Errorf("tensor %q: dtype %s is not supported (want F32, F64, F16, BF16, I64, I32, U8 or BOOL)", e.Name, e.DType)
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
// and rename, as modelfile.WriteFile does). metadata may be nil.
func SaveSafetensors(path string, m Module, metadata map[string]string) error {
	entries := stateEntries(m)
	out := make([]modelfile.Entry, len(entries))
	for i, e := range entries {
		out[i] = TensorEntry(e.Name, e.Tensor)
	}
	return modelfile.WriteFile(path, out, metadata)
}

// ReadStateDict reads a safetensors file into a state dict, returning its
// metadata as well.
func ReadStateDict(path string) (map[string]*tensor.Tensor, map[string]string, error) {
	f, err := modelfile.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	sd := make(map[string]*tensor.Tensor, len(f.Tensors))
	for _, e := range f.Tensors {
		t, err := EntryTensor(e)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		sd[e.Name] = t
	}
	return sd, f.Metadata, nil
}

// LoadSafetensors loads the safetensors file at path into m with
// LoadStateDict, and returns the file's metadata.
func LoadSafetensors(path string, m Module, strict bool) (map[string]string, error) {
	sd, meta, err := ReadStateDict(path)
	if err != nil {
		return nil, err
	}
	if err := LoadStateDict(m, sd, strict); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return meta, nil
}
