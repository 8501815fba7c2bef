package ml

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fathom-ml/fathom/safetensors"
)

// metaKey is the safetensors metadata key that holds a saved model's JSON.
const metaKey = "fathom.ml"

// formatVersion is the version of the saved-model layout.
const formatVersion = 1

// saved is the JSON header of a saved model.
type saved struct {
	Format int             `json:"format"`
	Type   string          `json:"type"`
	Params json.RawMessage `json:"params,omitempty"`
}

// ErrNotModel is returned by LoadModel for a file that is not a saved
// ml model.
var ErrNotModel = errors.New("not a saved fathom ml model")

// SaveModel writes m to path as one safetensors file (temporary file and
// rename: a reader never sees a partial file).
func SaveModel(path string, m Model) error {
	head, arrays, err := encodeModel(m)
	if err != nil {
		return fmt.Errorf("ml: save %s: %w", path, err)
	}
	js, err := json.Marshal(saved{Format: formatVersion, Type: head.Type, Params: head.Params})
	if err != nil {
		return fmt.Errorf("ml: save %s: %w", path, err)
	}
	names := make([]string, 0, len(arrays))
	for k := range arrays {
		names = append(names, k)
	}
	sort.Strings(names)
	entries := make([]safetensors.Entry, 0, len(names))
	for _, k := range names {
		a := arrays[k]
		if err := a.check(); err != nil {
			return fmt.Errorf("ml: save %s: array %q: %w", path, k, err)
		}
		entries = append(entries, safetensors.F64(k, a.Shape, a.Data))
	}
	return safetensors.WriteFile(path, entries, map[string]string{metaKey: string(js)})
}

// LoadModel reads a model written by SaveModel.
func LoadModel(path string) (Model, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ml: load %s: %w", path, err)
	}
	js, ok := f.Metadata[metaKey]
	if !ok {
		return nil, fmt.Errorf("ml: load %s: %w (no %q metadata)", path, ErrNotModel, metaKey)
	}
	var s saved
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		return nil, fmt.Errorf("ml: load %s: %w: bad header: %v", path, ErrNotModel, err)
	}
	if s.Format != formatVersion {
		return nil, fmt.Errorf("ml: load %s: format version %d, this build reads %d", path, s.Format, formatVersion)
	}
	arrays := make(map[string]Array, len(f.Tensors))
	for _, e := range f.Tensors {
		v, err := e.Float64s()
		if err != nil {
			return nil, fmt.Errorf("ml: load %s: %w", path, err)
		}
		arrays[e.Name] = Array{Shape: e.Shape, Data: v}
	}
	m, err := DecodeModel(Node{Type: s.Type, Params: s.Params}, arrays)
	if err != nil {
		return nil, fmt.Errorf("ml: load %s: %w", path, err)
	}
	return m, nil
}

// Node is one model's entry in a saved file: its type and its params. A
// composite model (PipelineModel) keeps its children's Nodes in its own
// params and their arrays under a prefix (see EncodeModel).
type Node struct {
	Type   string          `json:"type"`
	Params json.RawMessage `json:"params,omitempty"`
}

func encodeModel(m Model) (Node, map[string]Array, error) {
	if m == nil {
		return Node{}, nil, errors.New("nil model")
	}
	enc, err := m.Encode()
	if err != nil {
		return Node{}, nil, fmt.Errorf("%s: %w", m.Type(), err)
	}
	n := Node{Type: m.Type()}
	if enc.Params != nil {
		if n.Params, err = json.Marshal(enc.Params); err != nil {
			return Node{}, nil, fmt.Errorf("%s: %w", m.Type(), err)
		}
	}
	return n, enc.Arrays, nil
}

// EncodeModel encodes m for a composite model: its Node, and its arrays
// renamed prefix + name, added to arrays.
func EncodeModel(m Model, prefix string, arrays map[string]Array) (Node, error) {
	n, own, err := encodeModel(m)
	if err != nil {
		return Node{}, err
	}
	for k, a := range own {
		arrays[prefix+k] = a
	}
	return n, nil
}

// DecodeModel rebuilds a model from its Node and its arrays.
func DecodeModel(n Node, arrays map[string]Array) (Model, error) {
	dec, ok := modelDecoder(n.Type)
	if !ok {
		return nil, fmt.Errorf("unknown model type %q (known: %v)", n.Type, modelTypes())
	}
	m, err := dec(n.Params, arrays)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Type, err)
	}
	return m, nil
}

// SubArrays returns the arrays whose names start with prefix, the prefix
// removed (a composite model's child's arrays).
func SubArrays(arrays map[string]Array, prefix string) map[string]Array {
	out := map[string]Array{}
	for k, a := range arrays {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = a
		}
	}
	return out
}

// Need returns arrays[name], checking its shape: each entry of shape that
// is ≥ 0 must match (−1 matches any size). Decoders use it to turn a
// damaged file into an error naming the array.
func Need(arrays map[string]Array, name string, shape ...int) (Array, error) {
	a, ok := arrays[name]
	if !ok {
		return Array{}, fmt.Errorf("array %q missing", name)
	}
	if len(a.Shape) != len(shape) {
		return Array{}, fmt.Errorf("array %q has shape %v, want %d dimensions", name, a.Shape, len(shape))
	}
	for i, s := range shape {
		if s >= 0 && a.Shape[i] != s {
			return Array{}, fmt.Errorf("array %q has shape %v, want %v", name, a.Shape, shape)
		}
	}
	return a, a.check()
}

func (a Array) check() error {
	n := 1
	for _, s := range a.Shape {
		if s < 0 {
			return fmt.Errorf("negative dimension in shape %v", a.Shape)
		}
		n *= s
	}
	if n != len(a.Data) {
		return fmt.Errorf("shape %v needs %d values, has %d", a.Shape, n, len(a.Data))
	}
	return nil
}

// DecodeParams unmarshals a model's params strictly (unknown fields are an
// error).
func DecodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	return nil
}
