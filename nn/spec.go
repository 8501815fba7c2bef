package nn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Spec describes a model as data: the model section of a training config
// and the architecture stored in a model file. It round-trips through JSON
// and YAML with the same field names:
//
//	input: [1, 28, 28]
//	layers:
//	  - {type: conv2d, out: 32, kernel: 3, padding: 1}
//	  - {type: relu}
//	  - {type: maxpool2d, kernel: 2}
//	  - {type: flatten}
//	  - {type: linear, out: 10}
//
// Sizes that follow from the input (in-features, in-channels) are inferred
// by Build, so a spec names only output sizes; an explicit "in" is checked.
type Spec struct {
	// Input is the shape of one example, without the batch dim: [784] for
	// flat vectors, [C, H, W] for images, [L] for token ids, [L, E] for
	// sequences of vectors.
	Input  []int       `json:"input,omitempty" yaml:"input,omitempty"`
	Layers []LayerSpec `json:"layers" yaml:"layers"`
}

// LayerSpec is one layer of a Spec. Type selects the layer (case, '_' and
// '-' are ignored); each type accepts only the fields listed in
// LayerTypes, and Build reports any other non-zero field.
type LayerSpec struct {
	Type string `json:"type" yaml:"type"`

	In     int   `json:"in,omitempty" yaml:"in,omitempty"`     // optional check of the inferred input size
	Out    int   `json:"out,omitempty" yaml:"out,omitempty"`   // output features / channels / embedding size
	Bias   *bool `json:"bias,omitempty" yaml:"bias,omitempty"` // default true
	Num    int   `json:"num,omitempty" yaml:"num,omitempty"`   // embedding: number of rows
	Groups int   `json:"groups,omitempty" yaml:"groups,omitempty"`

	Kernel          IntPair `json:"kernel,omitzero" yaml:"kernel,omitempty"`
	Stride          IntPair `json:"stride,omitzero" yaml:"stride,omitempty"`
	Padding         IntPair `json:"padding,omitzero" yaml:"padding,omitempty"`
	Dilation        IntPair `json:"dilation,omitzero" yaml:"dilation,omitempty"`
	Size            IntPair `json:"size,omitzero" yaml:"size,omitempty"` // adaptive pooling output
	CountIncludePad *bool   `json:"count_include_pad,omitempty" yaml:"count_include_pad,omitempty"`
	CeilMode        bool    `json:"ceil_mode,omitempty" yaml:"ceil_mode,omitempty"` // pooling: round the output size up

	P                 *float64 `json:"p,omitempty" yaml:"p,omitempty"` // dropout probability
	Eps               float64  `json:"eps,omitempty" yaml:"eps,omitempty"`
	Momentum          float64  `json:"momentum,omitempty" yaml:"momentum,omitempty"`
	Affine            *bool    `json:"affine,omitempty" yaml:"affine,omitempty"`
	TrackRunningStats *bool    `json:"track_running_stats,omitempty" yaml:"track_running_stats,omitempty"`

	Slope       *float64 `json:"slope,omitempty" yaml:"slope,omitempty"` // leaky_relu, default 0.01
	Alpha       float64  `json:"alpha,omitempty" yaml:"alpha,omitempty"` // elu, default 1
	Beta        float64  `json:"beta,omitempty" yaml:"beta,omitempty"`   // softplus, default 1
	Threshold   float64  `json:"threshold,omitempty" yaml:"threshold,omitempty"`
	Approximate string   `json:"approximate,omitempty" yaml:"approximate,omitempty"` // gelu: none or tanh
	Dim         *int     `json:"dim,omitempty" yaml:"dim,omitempty"`                 // softmax, default −1
	PaddingIdx  *int     `json:"padding_idx,omitempty" yaml:"padding_idx,omitempty"`

	Heads      int    `json:"heads,omitempty" yaml:"heads,omitempty"`
	FF         int    `json:"ff,omitempty" yaml:"ff,omitempty"` // default 2048
	Activation string `json:"activation,omitempty" yaml:"activation,omitempty"`
	NormFirst  bool   `json:"norm_first,omitempty" yaml:"norm_first,omitempty"`

	Layers []LayerSpec `json:"layers,omitempty" yaml:"layers,omitempty"` // residual body
	Proj   bool        `json:"proj,omitempty" yaml:"proj,omitempty"`     // residual projection
}

// IntPair is a [height, width] setting written as one number for a square
// window (kernel: 3) or as two (kernel: [3, 5]).
type IntPair [2]int

// IsZero reports whether the pair is unset.
func (p IntPair) IsZero() bool { return p == IntPair{} }

// MarshalJSON writes one number when both are equal.
func (p IntPair) MarshalJSON() ([]byte, error) {
	if p[0] == p[1] {
		return json.Marshal(p[0])
	}
	return json.Marshal([2]int(p))
}

// UnmarshalJSON reads a number or a two-element array.
func (p *IntPair) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*p = IntPair{n, n}
		return nil
	}
	var a []int
	if err := json.Unmarshal(b, &a); err != nil || len(a) != 2 {
		return fmt.Errorf("want an integer or [height, width], got %s", b)
	}
	*p = IntPair{a[0], a[1]}
	return nil
}

// MarshalYAML writes one number when both are equal.
func (p IntPair) MarshalYAML() (any, error) {
	if p[0] == p[1] {
		return p[0], nil
	}
	return []int{p[0], p[1]}, nil
}

// UnmarshalText reads one integer, used for both sizes. YAML decoders
// call it for a scalar ("kernel: 3") and read a two-element sequence
// ("kernel: [3, 5]") into the array itself, so nn needs no YAML package.
func (p *IntPair) UnmarshalText(b []byte) error {
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("want an integer or [height, width], got %q", b)
	}
	*p = IntPair{v, v}
	return nil
}

// LayerTypes lists the layer types a Spec may use and the fields each
// accepts (besides "type"). Each layer's file registers its types (see
// registerLayer) when the package is initialized; read it, don't change it.
var LayerTypes = map[string][]string{}

// typeAliases maps other accepted spellings to LayerTypes keys (see
// registerAlias).
var typeAliases = map[string]string{}

// canonicalType returns the LayerTypes key for a spec type name.
func canonicalType(t string) (string, bool) {
	n := normType(t)
	if a, ok := typeAliases[n]; ok {
		n = a
	}
	_, ok := LayerTypes[n]
	return n, ok
}

// setFields returns the names of the non-zero fields of s, except "type".
func (s *LayerSpec) setFields() []string {
	var out []string
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "type" || v.Field(i).IsZero() {
			continue
		}
		out = append(out, name)
	}
	return out
}

// DecodeSpecJSON decodes a Spec strictly: unknown fields are errors.
func DecodeSpecJSON(data []byte) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("model spec: %w", err)
	}
	if dec.More() {
		return Spec{}, errors.New("model spec: data after the JSON object")
	}
	return s, nil
}

// knownTypes returns the sorted list of layer types for error messages.
func knownTypes() string {
	keys := make([]string, 0, len(LayerTypes))
	for k := range LayerTypes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
