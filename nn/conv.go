package nn

import (
	"fmt"

	"github.com/fathom-ml/fathom/tensor"
)

// Pair returns [k, k], for square kernel, stride, padding and dilation
// settings.
func Pair(k int) [2]int { return [2]int{k, k} }

// Conv2d is a 2-D convolution (cross-correlation, as torch.nn.Conv2d) of
// inputs [N, In, H, W] (or [In, H, W]) to [N, Out, OH, OW] with
// OH = ⌊(H + 2·padding − dilation·(kernel − 1) − 1)/stride⌋ + 1.
// Parameters: "weight" [Out, In/Groups, KH, KW] and "bias" [Out], with
// PyTorch's default initialization. It runs tensor.Conv2d (im2col + GEMM).
type Conv2d struct {
	Base
	Weight, Bias *tensor.Tensor
	Conv2dConfig
}

// Conv2dConfig configures a Conv2d. Zero Stride and Dilation mean 1; zero
// Groups means 1.
type Conv2dConfig struct {
	In, Out  int
	Kernel   [2]int // [height, width]
	Stride   [2]int
	Padding  [2]int // zeros added on both sides
	Dilation [2]int
	Groups   int
	NoBias   bool
}

// NewConv2d returns a Conv2d with a square kernel, stride 1, no padding.
func NewConv2d(rng *tensor.RNG, in, out, kernel int) *Conv2d {
	return NewConv2dWith(rng, Conv2dConfig{In: in, Out: out, Kernel: Pair(kernel)})
}

// NewConv2dWith returns a Conv2d configured by c.
func NewConv2dWith(rng *tensor.RNG, c Conv2dConfig) *Conv2d {
	for i := range 2 {
		c.Stride[i] = max(c.Stride[i], 1)
		c.Dilation[i] = max(c.Dilation[i], 1)
	}
	c.Groups = max(c.Groups, 1)
	if c.In <= 0 || c.Out <= 0 || c.Kernel[0] <= 0 || c.Kernel[1] <= 0 || c.Padding[0] < 0 || c.Padding[1] < 0 {
		panic(fmt.Sprintf("nn: NewConv2d: invalid configuration %+v", c))
	}
	if c.In%c.Groups != 0 || c.Out%c.Groups != 0 {
		panic(fmt.Sprintf("nn: NewConv2d: in=%d and out=%d must be divisible by groups=%d", c.In, c.Out, c.Groups))
	}
	m := &Conv2d{Conv2dConfig: c, Weight: tensor.Zeros(tensor.Float32, c.Out, c.In/c.Groups, c.Kernel[0], c.Kernel[1])}
	if !c.NoBias {
		m.Bias = tensor.Zeros(tensor.Float32, c.Out)
	}
	initAffine(rng, m.Weight, m.Bias)
	m.RegisterParameter("weight", &m.Weight)
	m.RegisterParameter("bias", &m.Bias)
	return m
}

// Forward convolves x.
func (m *Conv2d) Forward(x *tensor.Tensor) *tensor.Tensor { return m.forward(x, false) }

// forward convolves x, applying ReLU in the same pass when relu is set
// (Sequential fuses a Conv2d followed by a ReLU this way).
func (m *Conv2d) forward(x *tensor.Tensor, relu bool) *tensor.Tensor {
	return tensor.Conv2d(x, m.Weight, m.Bias, tensor.Conv2dOpts{
		Stride: m.Stride, Padding: m.Padding, Dilation: m.Dilation, Groups: m.Groups, Relu: relu})
}

// OutSize returns the output height and width for an input plane h×w, or
// an error when the kernel does not fit.
func (c Conv2dConfig) OutSize(h, w int) (oh, ow int, err error) {
	for i := range 2 {
		c.Stride[i], c.Dilation[i] = max(c.Stride[i], 1), max(c.Dilation[i], 1)
	}
	oh = convOut(h, c.Kernel[0], c.Stride[0], c.Padding[0], c.Dilation[0])
	ow = convOut(w, c.Kernel[1], c.Stride[1], c.Padding[1], c.Dilation[1])
	if oh < 1 || ow < 1 {
		return 0, 0, fmt.Errorf("kernel %v with padding %v and dilation %v does not fit an input of %d×%d", c.Kernel, c.Padding, c.Dilation, h, w)
	}
	return oh, ow, nil
}

func convOut(in, k, s, p, d int) int {
	n := in + 2*p - d*(k-1) - 1
	if n < 0 {
		return 0
	}
	return n/s + 1
}

func (m *Conv2d) describe() string {
	s := fmt.Sprintf("Conv2d(%d, %d, kernel=%v, stride=%v", m.In, m.Out, m.Kernel, m.Stride)
	if m.Padding != [2]int{} {
		s += fmt.Sprintf(", padding=%v", m.Padding)
	}
	if m.Dilation != Pair(1) {
		s += fmt.Sprintf(", dilation=%v", m.Dilation)
	}
	if m.Groups != 1 {
		s += fmt.Sprintf(", groups=%d", m.Groups)
	}
	return s + fmt.Sprintf(", bias=%v)", m.Bias != nil)
}

// MaxPool2d takes the maximum over windows of inputs [N, C, H, W] (or
// [C, H, W]), as torch.nn.MaxPool2d. Padding counts as −∞ and may be at
// most half the kernel. CeilMode rounds the output size up (a last, partial
// window covers the end of the input).
type MaxPool2d struct {
	Base
	Kernel, Stride, Padding, Dilation [2]int
	CeilMode                          bool
}

// NewMaxPool2d returns a MaxPool2d with a square kernel and stride equal to
// the kernel (PyTorch's default).
func NewMaxPool2d(kernel int) *MaxPool2d {
	return &MaxPool2d{Kernel: Pair(kernel), Stride: Pair(kernel), Dilation: Pair(1)}
}

// Forward pools x.
func (m *MaxPool2d) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.MaxPool2d(x, m.Kernel, m.Stride, m.Padding, m.Dilation, m.CeilMode)
}

func (m *MaxPool2d) describe() string {
	return fmt.Sprintf("MaxPool2d(kernel=%v, stride=%v, padding=%v, dilation=%v%s)", m.Kernel, m.Stride, m.Padding, m.Dilation, ceilText(m.CeilMode))
}

// ceilText is the describe() suffix of a pooling layer's ceil mode.
func ceilText(ceil bool) string {
	if ceil {
		return ", ceil_mode=true"
	}
	return ""
}

// AvgPool2d averages over windows, as torch.nn.AvgPool2d. With
// CountIncludePad (the default) padding counts as zeros in the divisor;
// CeilMode rounds the output size up, as in MaxPool2d.
type AvgPool2d struct {
	Base
	Kernel, Stride, Padding [2]int
	CeilMode                bool
	CountIncludePad         bool
}

// NewAvgPool2d returns an AvgPool2d with a square kernel, stride equal to
// the kernel and CountIncludePad.
func NewAvgPool2d(kernel int) *AvgPool2d {
	return &AvgPool2d{Kernel: Pair(kernel), Stride: Pair(kernel), CountIncludePad: true}
}

// Forward pools x.
func (m *AvgPool2d) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.AvgPool2d(x, m.Kernel, m.Stride, m.Padding, m.CeilMode, m.CountIncludePad)
}

func (m *AvgPool2d) describe() string {
	return fmt.Sprintf("AvgPool2d(kernel=%v, stride=%v, padding=%v%s)", m.Kernel, m.Stride, m.Padding, ceilText(m.CeilMode))
}

// AdaptiveAvgPool2d averages inputs [N, C, H, W] down to [N, C, Size[0],
// Size[1]] with PyTorch's window rule (torch.nn.AdaptiveAvgPool2d).
type AdaptiveAvgPool2d struct {
	Base
	Size [2]int
}

// NewAdaptiveAvgPool2d returns an AdaptiveAvgPool2d to h×w.
func NewAdaptiveAvgPool2d(h, w int) *AdaptiveAvgPool2d { return &AdaptiveAvgPool2d{Size: [2]int{h, w}} }

// Forward pools x.
func (m *AdaptiveAvgPool2d) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.AdaptiveAvgPool2d(x, m.Size[0], m.Size[1])
}

func (m *AdaptiveAvgPool2d) describe() string { return fmt.Sprintf("AdaptiveAvgPool2d(%v)", m.Size) }

// Embedding maps integer indices to rows of a table (torch.nn.Embedding):
// an Int64 (or Int32) input of any shape gives shape+[Dim]. Parameter
// "weight" [Num, Dim], initialized N(0, 1) as PyTorch does. With a padding
// index, that row starts at zero and receives no gradient.
type Embedding struct {
	Base
	Weight     *tensor.Tensor
	Num, Dim   int
	HasPadding bool
	PaddingIdx int // in [0, Num) when HasPadding
}

// EmbeddingConfig configures NewEmbeddingWith. PaddingIdx may be negative
// (counted from the end, as in PyTorch) and is used when HasPadding.
type EmbeddingConfig struct {
	Num, Dim   int
	HasPadding bool
	PaddingIdx int
}

// NewEmbedding returns an Embedding of num rows of size dim.
func NewEmbedding(rng *tensor.RNG, num, dim int) *Embedding {
	return NewEmbeddingWith(rng, EmbeddingConfig{Num: num, Dim: dim})
}

// NewEmbeddingWith returns an Embedding configured by c.
func NewEmbeddingWith(rng *tensor.RNG, c EmbeddingConfig) *Embedding {
	if c.Num <= 0 || c.Dim <= 0 {
		panic(fmt.Sprintf("nn: NewEmbedding(num=%d, dim=%d): sizes must be positive", c.Num, c.Dim))
	}
	e := &Embedding{Num: c.Num, Dim: c.Dim, HasPadding: c.HasPadding, Weight: tensor.Zeros(tensor.Float32, c.Num, c.Dim)}
	InitNormal(rng, e.Weight, 0, 1)
	if c.HasPadding {
		p := c.PaddingIdx
		if p < 0 {
			p += c.Num
		}
		if p < 0 || p >= c.Num {
			panic(fmt.Sprintf("nn: NewEmbedding: padding index %d is outside [-%d, %d)", c.PaddingIdx, c.Num, c.Num))
		}
		e.PaddingIdx = p
		e.Weight.Narrow(0, p, 1).Zero()
	}
	e.RegisterParameter("weight", &e.Weight)
	return e
}

// Forward looks up the rows of idx.
func (e *Embedding) Forward(idx *tensor.Tensor) *tensor.Tensor {
	out := tensor.Embedding(e.Weight, idx)
	if e.HasPadding && out.RequiresGrad() {
		// Route no gradient to the padding row: where idx == padding, take
		// the detached value.
		keep := idx.NeScalar(float64(e.PaddingIdx)).Unsqueeze(-1)
		out = tensor.Where(keep, out, out.Detach())
	}
	return out
}

func (e *Embedding) describe() string {
	if e.HasPadding {
		return fmt.Sprintf("Embedding(%d, %d, padding_idx=%d)", e.Num, e.Dim, e.PaddingIdx)
	}
	return fmt.Sprintf("Embedding(%d, %d)", e.Num, e.Dim)
}

func init() {
	registerLayer("conv2d", []string{"in", "out", "kernel", "stride", "padding", "dilation", "groups", "bias"}, buildConv2d)
	registerLayer("maxpool2d", []string{"kernel", "stride", "padding", "dilation", "ceil_mode"}, buildPool2d)
	registerLayer("avgpool2d", []string{"kernel", "stride", "padding", "ceil_mode", "count_include_pad"}, buildPool2d)
	registerLayer("adaptiveavgpool2d", []string{"size"}, buildAdaptiveAvgPool2d)
	registerLayer("embedding", []string{"num", "out", "padding_idx"}, buildEmbedding)
}

func buildConv2d(b *layerBuild) (Layer, []int, error) {
	c, shape, err := b.conv2d(max(b.spec.Groups, 1))
	if err != nil {
		return nil, nil, err
	}
	if err := b.reserve(product(c.Out, c.In/c.Groups, c.Kernel[0], c.Kernel[1]) + b.biasValues(c.Out)); err != nil {
		return nil, nil, err
	}
	return NewConv2dWith(b.rng, c), shape, nil
}

// conv2d checks the input and fields of a Conv2d-shaped layer (conv2d,
// qconv2d) with g groups and returns its configuration and output shape.
func (b *layerBuild) conv2d(g int) (Conv2dConfig, []int, error) {
	s, in := b.spec, b.in
	if err := b.image(); err != nil {
		return Conv2dConfig{}, nil, b.errorf("%v", err)
	}
	if err := b.checkIn(in[0], "channels"); err != nil {
		return Conv2dConfig{}, nil, b.errorf("%v", err)
	}
	if err := b.needOut(); err != nil {
		return Conv2dConfig{}, nil, b.errorf("%v", err)
	}
	if s.Kernel.IsZero() {
		return Conv2dConfig{}, nil, b.errorf("field \"kernel\" is required")
	}
	if in[0]%g != 0 || s.Out%g != 0 {
		return Conv2dConfig{}, nil, b.errorf("input channels %d and out=%d must be divisible by groups=%d", in[0], s.Out, g)
	}
	if product(s.Out, in[0]/g, s.Kernel[0], s.Kernel[1]) > maxParams {
		return Conv2dConfig{}, nil, b.errorf("a weight of %d×%d×%d×%d is too large", s.Out, in[0]/g, s.Kernel[0], s.Kernel[1])
	}
	c := Conv2dConfig{In: in[0], Out: s.Out, Kernel: s.Kernel, Stride: s.Stride, Padding: s.Padding, Dilation: s.Dilation, Groups: g, NoBias: !b.bias()}
	oh, ow, err := c.OutSize(in[1], in[2])
	if err != nil {
		return Conv2dConfig{}, nil, b.errorf("%v", err)
	}
	return c, []int{s.Out, oh, ow}, nil
}

// buildPool2d builds maxpool2d and avgpool2d.
func buildPool2d(b *layerBuild) (Layer, []int, error) {
	s, in := b.spec, b.in
	if err := b.image(); err != nil {
		return b.fail("%v", err)
	}
	if s.Kernel.IsZero() {
		return b.fail("field \"kernel\" is required")
	}
	k := [2]int(s.Kernel)
	st := [2]int(s.Stride)
	if s.Stride.IsZero() {
		st = k
	}
	dil := [2]int{max(s.Dilation[0], 1), max(s.Dilation[1], 1)}
	for i := range 2 {
		if k[i] <= 0 || st[i] <= 0 {
			return b.fail("kernel and stride must be positive, got kernel %v, stride %v", k, st)
		}
		if 2*s.Padding[i] > k[i] {
			return b.fail("padding %v may be at most half the kernel %v", [2]int(s.Padding), k)
		}
	}
	oh, ow := tensor.Pool2dOutSize(in[1], in[2], k, st, s.Padding, dil, s.CeilMode)
	if oh < 1 || ow < 1 {
		return b.fail("kernel %v does not fit an input of %d×%d", k, in[1], in[2])
	}
	out := []int{in[0], oh, ow}
	if b.typ == "maxpool2d" {
		return &MaxPool2d{Kernel: k, Stride: st, Padding: s.Padding, Dilation: dil, CeilMode: s.CeilMode}, out, nil
	}
	return &AvgPool2d{Kernel: k, Stride: st, Padding: s.Padding, CeilMode: s.CeilMode,
		CountIncludePad: s.CountIncludePad == nil || *s.CountIncludePad}, out, nil
}

func buildAdaptiveAvgPool2d(b *layerBuild) (Layer, []int, error) {
	s, in := b.spec, b.in
	if err := b.image(); err != nil {
		return b.fail("%v", err)
	}
	if s.Size[0] <= 0 || s.Size[1] <= 0 {
		return b.fail("field \"size\" is required and must be positive")
	}
	return NewAdaptiveAvgPool2d(s.Size[0], s.Size[1]), []int{in[0], s.Size[0], s.Size[1]}, nil
}

func buildEmbedding(b *layerBuild) (Layer, []int, error) {
	s := b.spec
	if s.Num <= 0 {
		return b.fail("field \"num\" (number of rows) is required")
	}
	if err := b.needOut(); err != nil {
		return b.fail("%v", err)
	}
	if product(s.Num, s.Out) > maxParams {
		return b.fail("a table of %d×%d is too large", s.Num, s.Out)
	}
	c := EmbeddingConfig{Num: s.Num, Dim: s.Out}
	if s.PaddingIdx != nil {
		if *s.PaddingIdx < -s.Num || *s.PaddingIdx >= s.Num {
			return b.fail("padding_idx=%d is outside [-%d, %d)", *s.PaddingIdx, s.Num, s.Num)
		}
		c.HasPadding, c.PaddingIdx = true, *s.PaddingIdx
	}
	if err := b.reserve(product(s.Num, s.Out)); err != nil {
		return nil, nil, err
	}
	return NewEmbeddingWith(b.rng, c), append(b.same(), s.Out), nil
}
