package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fathom-ml/fathom/tensor"
)

// SpecError reports a layer of a Spec that cannot be built: its path (such
// as "model.layers[3]"), its type and what is wrong.
type SpecError struct {
	Path string
	Type string
	Err  error
}

func (e *SpecError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s (%s): %v", e.Path, e.Type, e.Err)
}

func (e *SpecError) Unwrap() error { return e.Err }

// Build builds the layers of a Spec as a Sequential for examples of shape
// input (without the batch dim), inferring each layer's input size from
// the previous layer's output. It returns the model and the shape of one
// output example. Errors are *SpecError values naming the layer, e.g.
//
//	layers[3] (linear): input has 3136 features but in=3000
//	layers[2] (conv2d): input must be [C, H, W], got [784]
//
// All randomness (initialization, dropout streams) comes from rng.
func Build(specs []LayerSpec, input []int, rng *tensor.RNG) (*Sequential, []int, error) {
	return buildSeq("layers", specs, input, rng)
}

// Build builds the model of s for examples of shape s.Input; errors name
// layers as "model.layers[i]".
func (s Spec) Build(rng *tensor.RNG) (*Sequential, []int, error) {
	if len(s.Input) == 0 {
		return nil, nil, fmt.Errorf("model.input: the input shape is missing")
	}
	for _, d := range s.Input {
		if d <= 0 {
			return nil, nil, fmt.Errorf("model.input: sizes must be positive, got %v", s.Input)
		}
	}
	if product(s.Input...) > maxElems {
		return nil, nil, fmt.Errorf("model.input: shape %v is too large", s.Input)
	}
	return buildSeq("model.layers", s.Layers, s.Input, rng)
}

func buildSeq(path string, specs []LayerSpec, input []int, rng *tensor.RNG) (*Sequential, []int, error) {
	seq := NewSequential()
	shape := slices.Clone(input)
	for i := range specs {
		p := fmt.Sprintf("%s[%d]", path, i)
		l, out, err := buildLayer(p, &specs[i], shape, rng)
		if err != nil {
			return nil, nil, err
		}
		if product(out...) > maxElems {
			return nil, nil, &SpecError{Path: p, Type: specs[i].Type, Err: fmt.Errorf("output shape %v is too large", out)}
		}
		seq.Append(l)
		shape = out
	}
	return seq, shape, nil
}

// Limits that keep a mistyped size from allocating without bound.
const (
	maxElems  = 1 << 40 // elements of one example's activation
	maxParams = 1 << 32 // elements of one parameter tensor
)

// product multiplies sizes in float64, so it cannot overflow.
func product(n ...int) float64 {
	p := 1.0
	for _, v := range n {
		p *= float64(v)
	}
	return p
}

func buildLayer(path string, s *LayerSpec, in []int, rng *tensor.RNG) (Layer, []int, error) {
	typ, ok := canonicalType(s.Type)
	if !ok {
		if s.Type == "" {
			return nil, nil, &SpecError{Path: path, Err: fmt.Errorf("the layer type is missing (known: %s)", knownTypes())}
		}
		return nil, nil, &SpecError{Path: path, Err: fmt.Errorf("unknown layer type %q (known: %s)", s.Type, knownTypes())}
	}
	fail := func(format string, a ...any) (Layer, []int, error) {
		return nil, nil, &SpecError{Path: path, Type: s.Type, Err: fmt.Errorf(format, a...)}
	}
	allowed := LayerTypes[typ]
	for _, f := range s.setFields() {
		if !slices.Contains(allowed, f) {
			if len(allowed) == 0 {
				return fail("field %q does not apply (%s takes no fields)", f, typ)
			}
			return fail("field %q does not apply (%s takes %s)", f, typ, strings.Join(allowed, ", "))
		}
	}
	for _, pr := range []struct {
		name string
		v    IntPair
	}{{"kernel", s.Kernel}, {"stride", s.Stride}, {"padding", s.Padding}, {"dilation", s.Dilation}, {"size", s.Size}} {
		if pr.v[0] < 0 || pr.v[1] < 0 {
			return fail("%s must not be negative, got %v", pr.name, [2]int(pr.v))
		}
	}
	if s.Out < 0 || s.In < 0 || s.Num < 0 || s.Groups < 0 || s.Heads < 0 || s.FF < 0 || s.Eps < 0 || s.Momentum < 0 {
		return fail("sizes and rates must not be negative")
	}
	needOut := func() error {
		if s.Out <= 0 {
			return fmt.Errorf("field \"out\" is required")
		}
		return nil
	}
	image := func() error {
		if len(in) != 3 {
			return fmt.Errorf("input must be [C, H, W], got %v", in)
		}
		return nil
	}
	checkIn := func(have int, what string) error {
		if s.In != 0 && s.In != have {
			return fmt.Errorf("input has %d %s but in=%d", have, what, s.In)
		}
		return nil
	}
	bias := s.Bias == nil || *s.Bias
	last := func(n int) []int { return append(slices.Clone(in[:len(in)-1]), n) }

	switch typ {
	case "linear":
		if len(in) == 0 {
			return fail("input has no feature dim")
		}
		if err := checkIn(in[len(in)-1], "features"); err != nil {
			return fail("%v", err)
		}
		if err := needOut(); err != nil {
			return fail("%v", err)
		}
		if product(in[len(in)-1], s.Out) > maxParams {
			return fail("a weight of %d×%d is too large", s.Out, in[len(in)-1])
		}
		return NewLinearWith(rng, LinearConfig{In: in[len(in)-1], Out: s.Out, NoBias: !bias}), last(s.Out), nil

	case "conv2d":
		if err := image(); err != nil {
			return fail("%v", err)
		}
		if err := checkIn(in[0], "channels"); err != nil {
			return fail("%v", err)
		}
		if err := needOut(); err != nil {
			return fail("%v", err)
		}
		if s.Kernel.IsZero() {
			return fail("field \"kernel\" is required")
		}
		g := max(s.Groups, 1)
		if in[0]%g != 0 || s.Out%g != 0 {
			return fail("input channels %d and out=%d must be divisible by groups=%d", in[0], s.Out, g)
		}
		if product(s.Out, in[0]/g, s.Kernel[0], s.Kernel[1]) > maxParams {
			return fail("a weight of %d×%d×%d×%d is too large", s.Out, in[0]/g, s.Kernel[0], s.Kernel[1])
		}
		c := Conv2dConfig{In: in[0], Out: s.Out, Kernel: s.Kernel, Stride: s.Stride, Padding: s.Padding, Dilation: s.Dilation, Groups: g, NoBias: !bias}
		oh, ow, err := c.OutSize(in[1], in[2])
		if err != nil {
			return fail("%v", err)
		}
		return NewConv2dWith(rng, c), []int{s.Out, oh, ow}, nil

	case "maxpool2d", "avgpool2d":
		if err := image(); err != nil {
			return fail("%v", err)
		}
		if s.Kernel.IsZero() {
			return fail("field \"kernel\" is required")
		}
		k := [2]int(s.Kernel)
		st := [2]int(s.Stride)
		if s.Stride.IsZero() {
			st = k
		}
		dil := [2]int{max(s.Dilation[0], 1), max(s.Dilation[1], 1)}
		for i := range 2 {
			if k[i] <= 0 || st[i] <= 0 {
				return fail("kernel and stride must be positive, got kernel %v, stride %v", k, st)
			}
			if 2*s.Padding[i] > k[i] {
				return fail("padding %v may be at most half the kernel %v", [2]int(s.Padding), k)
			}
		}
		oh, ow := tensor.Pool2dOutSize(in[1], in[2], k, st, s.Padding, dil, s.CeilMode)
		if oh < 1 || ow < 1 {
			return fail("kernel %v does not fit an input of %d×%d", k, in[1], in[2])
		}
		out := []int{in[0], oh, ow}
		if typ == "maxpool2d" {
			return &MaxPool2d{Kernel: k, Stride: st, Padding: s.Padding, Dilation: dil, CeilMode: s.CeilMode}, out, nil
		}
		return &AvgPool2d{Kernel: k, Stride: st, Padding: s.Padding, CeilMode: s.CeilMode,
			CountIncludePad: s.CountIncludePad == nil || *s.CountIncludePad}, out, nil

	case "adaptiveavgpool2d":
		if err := image(); err != nil {
			return fail("%v", err)
		}
		if s.Size[0] <= 0 || s.Size[1] <= 0 {
			return fail("field \"size\" is required and must be positive")
		}
		return NewAdaptiveAvgPool2d(s.Size[0], s.Size[1]), []int{in[0], s.Size[0], s.Size[1]}, nil

	case "batchnorm1d", "batchnorm2d":
		if typ == "batchnorm2d" {
			if err := image(); err != nil {
				return fail("%v", err)
			}
		} else if len(in) != 1 && len(in) != 2 {
			return fail("input must be [C] or [C, L], got %v", in)
		}
		if err := checkIn(in[0], "channels"); err != nil {
			return fail("%v", err)
		}
		c := BatchNormConfig{Features: in[0], Eps: s.Eps, Momentum: s.Momentum,
			NoAffine: s.Affine != nil && !*s.Affine, NoTrackRunningStats: s.TrackRunningStats != nil && !*s.TrackRunningStats}
		if typ == "batchnorm2d" {
			return NewBatchNorm2dWith(c), slices.Clone(in), nil
		}
		return NewBatchNorm1dWith(c), slices.Clone(in), nil

	case "layernorm":
		if len(in) == 0 {
			return fail("input has no feature dim")
		}
		if err := checkIn(in[len(in)-1], "features"); err != nil {
			return fail("%v", err)
		}
		return NewLayerNormWith(LayerNormConfig{Shape: []int{in[len(in)-1]}, Eps: s.Eps, NoAffine: s.Affine != nil && !*s.Affine}), slices.Clone(in), nil

	case "dropout":
		if s.P == nil {
			return fail("field \"p\" is required")
		}
		if *s.P < 0 || *s.P > 1 {
			return fail("p=%g is outside [0, 1]", *s.P)
		}
		return NewDropout(rng, *s.P), slices.Clone(in), nil

	case "flatten":
		n := 1
		for _, d := range in {
			n *= d
		}
		return NewFlatten(), []int{n}, nil

	case "identity":
		return NewIdentity(), slices.Clone(in), nil
	case "relu":
		return NewReLU(), slices.Clone(in), nil
	case "sigmoid":
		return NewSigmoid(), slices.Clone(in), nil
	case "tanh":
		return NewTanh(), slices.Clone(in), nil
	case "silu":
		return NewSiLU(), slices.Clone(in), nil
	case "leakyrelu":
		slope := 0.01
		if s.Slope != nil {
			slope = *s.Slope
		}
		return NewLeakyReLU(slope), slices.Clone(in), nil
	case "elu":
		a := s.Alpha
		if a == 0 {
			a = 1
		}
		return NewELU(a), slices.Clone(in), nil
	case "softplus":
		sp := NewSoftplus()
		if s.Beta != 0 {
			sp.Beta = s.Beta
		}
		if s.Threshold != 0 {
			sp.Threshold = s.Threshold
		}
		return sp, slices.Clone(in), nil
	case "gelu":
		switch s.Approximate {
		case "", "none", "tanh":
		default:
			return fail("approximate=%q, want none or tanh", s.Approximate)
		}
		return &GELU{Approximate: s.Approximate}, slices.Clone(in), nil
	case "softmax", "logsoftmax":
		d := -1
		if s.Dim != nil {
			d = *s.Dim
		}
		// The spec's shapes have no batch dim; dim counts in the batched
		// tensor, so 0 (the batch) is refused.
		if d == 0 || d > len(in) || d < -len(in) {
			return fail("dim=%d is outside the example dims (1..%d or -%d..-1)", d, len(in), len(in))
		}
		if typ == "softmax" {
			return NewSoftmax(d), slices.Clone(in), nil
		}
		return NewLogSoftmax(d), slices.Clone(in), nil

	case "embedding":
		if s.Num <= 0 {
			return fail("field \"num\" (number of rows) is required")
		}
		if err := needOut(); err != nil {
			return fail("%v", err)
		}
		if product(s.Num, s.Out) > maxParams {
			return fail("a table of %d×%d is too large", s.Num, s.Out)
		}
		c := EmbeddingConfig{Num: s.Num, Dim: s.Out}
		if s.PaddingIdx != nil {
			if *s.PaddingIdx < -s.Num || *s.PaddingIdx >= s.Num {
				return fail("padding_idx=%d is outside [-%d, %d)", *s.PaddingIdx, s.Num, s.Num)
			}
			c.HasPadding, c.PaddingIdx = true, *s.PaddingIdx
		}
		return NewEmbeddingWith(rng, c), append(slices.Clone(in), s.Out), nil

	case "residual":
		if len(s.Layers) == 0 {
			return fail("field \"layers\" (the residual body) is required")
		}
		body, out, err := buildSeq(path+".layers", s.Layers, in, rng)
		if err != nil {
			return nil, nil, err
		}
		if slices.Equal(out, in) {
			if s.Proj {
				return fail("proj is set but the body keeps the shape %v", in)
			}
			return NewResidual(body, nil), out, nil
		}
		if !s.Proj {
			return fail("the body maps %v to %v; set proj: true to add a projection to the shortcut", in, out)
		}
		proj, err := projection(in, out, rng)
		if err != nil {
			return fail("%v", err)
		}
		return NewResidual(body, proj), out, nil

	case "transformerencoderlayer":
		if len(in) != 2 {
			return fail("input must be [L, E] (sequence length, embedding size), got %v", in)
		}
		if s.Heads <= 0 {
			return fail("field \"heads\" is required")
		}
		if in[1]%s.Heads != 0 {
			return fail("embedding size %d is not divisible by heads=%d", in[1], s.Heads)
		}
		if product(in[1], max(s.FF, 2048)) > maxParams {
			return fail("a feed-forward weight of %d×%d is too large", max(s.FF, 2048), in[1])
		}
		p := 0.1
		if s.P != nil {
			p = *s.P
		}
		if p < 0 || p > 1 {
			return fail("p=%g is outside [0, 1]", p)
		}
		switch s.Activation {
		case "", "relu", "gelu":
		default:
			return fail("activation=%q, want relu or gelu", s.Activation)
		}
		return NewTransformerEncoderLayer(rng, TransformerEncoderLayerConfig{
			DModel: in[1], Heads: s.Heads, FF: s.FF, Dropout: p, Activation: s.Activation,
			Eps: s.Eps, BatchFirst: true, NormFirst: s.NormFirst}), slices.Clone(in), nil
	}
	return fail("layer type is known but has no builder")
}

// projection returns the shortcut layer mapping shape in to out: a Linear
// for feature vectors, a 1×1 convolution (strided to the output's spatial
// size) for images.
func projection(in, out []int, rng *tensor.RNG) (Layer, error) {
	switch {
	case len(in) == 1 && len(out) == 1:
		return NewLinear(rng, in[0], out[0]), nil
	case len(in) == 3 && len(out) == 3:
		if in[1]%out[1] != 0 || in[2]%out[2] != 0 {
			return nil, fmt.Errorf("cannot project %v to %v with a strided 1×1 convolution", in, out)
		}
		st := IntPair{in[1] / out[1], in[2] / out[2]}
		c := Conv2dConfig{In: in[0], Out: out[0], Kernel: Pair(1), Stride: st}
		if oh, ow, _ := c.OutSize(in[1], in[2]); oh != out[1] || ow != out[2] {
			return nil, fmt.Errorf("cannot project %v to %v with a strided 1×1 convolution", in, out)
		}
		return NewConv2dWith(rng, c), nil
	}
	return nil, fmt.Errorf("cannot project %v to %v (projections map [F] to [F'] or [C, H, W] to [C', H', W'])", in, out)
}
