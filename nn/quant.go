package nn

import (
	"fmt"
	"sync/atomic"

	"github.com/fathom-ml/fathom/tensor"
)

// Quantized layers: Linear and Conv2d with int8 weights, for inference
// (post-training quantization; package quant converts a float model). Their
// state is all buffers, saved and loaded like any other:
//
//	weight             Int8, the float layer's shape: per output channel q
//	weight_scale       Float32 [out]: weight(j, ...) ≈ weight_scale[j]·q(j, ...)
//	bias               Float32 [out] (absent without bias)
//	input_scale        Float32 [1]: activations x ≈ input_scale·(q − input_zero_point)
//	input_zero_point   Float32 [1], an integer in [0, 255]
//
// An input_scale of 0 means dynamic quantization: each call quantizes its
// input with the min-max map of that batch. Otherwise (static
// quantization) the stored map, calibrated on a data sample, is used. The
// weights are packed for the int8 GEMM on the first Forward after they
// change (a build, LoadStateDict), not on every call. Forward records no
// gradient: these layers are not trained.

// QLinear is an int8 Linear layer (spec type "qlinear", the fields of
// "linear").
type QLinear struct {
	Base
	Weight, WeightScale, Bias  *tensor.Tensor
	InputScale, InputZeroPoint *tensor.Tensor
	In, Out                    int
	packed                     atomic.Pointer[tensor.Int8Weights]
}

// QConv2d is an int8 Conv2d layer (spec type "qconv2d", the fields of
// "conv2d" but groups).
type QConv2d struct {
	Base
	Weight, WeightScale, Bias  *tensor.Tensor
	InputScale, InputZeroPoint *tensor.Tensor
	Conv2dConfig
	packed atomic.Pointer[tensor.Int8Weights]
}

// NewQLinear returns an int8 Linear layer of zero weights (unit scales,
// dynamic input quantization): the shape to load a state dict into.
func NewQLinear(in, out int, bias bool) *QLinear {
	l := &QLinear{In: in, Out: out}
	l.init([]int{out, in}, bias)
	return l
}

// NewQConv2d is NewQLinear for a convolution; c.Groups must be 0 or 1.
func NewQConv2d(c Conv2dConfig) *QConv2d {
	for i := range 2 {
		c.Stride[i] = max(c.Stride[i], 1)
		c.Dilation[i] = max(c.Dilation[i], 1)
	}
	if max(c.Groups, 1) != 1 {
		panic(fmt.Sprintf("nn: NewQConv2d: groups=%d (int8 convolutions have one group)", c.Groups))
	}
	c.Groups = 1
	m := &QConv2d{Conv2dConfig: c}
	m.init([]int{c.Out, c.In, c.Kernel[0], c.Kernel[1]}, !c.NoBias)
	return m
}

// qstate is implemented by the quantized layers: LoadStateDict tells them
// their weights changed.
type qstate interface {
	state() *qfields
}

// forEachModule calls fn for m and every descendant.
func forEachModule(m Module, fn func(Module)) {
	fn(m)
	for _, c := range m.NamedChildren() {
		forEachModule(c.Module, fn)
	}
}

type qfields struct {
	weight, weightScale, bias, inScale, inZero **tensor.Tensor
	packed                                     *atomic.Pointer[tensor.Int8Weights]
	conv                                       bool
}

func (l *QLinear) state() *qfields {
	return &qfields{&l.Weight, &l.WeightScale, &l.Bias, &l.InputScale, &l.InputZeroPoint, &l.packed, false}
}

func (m *QConv2d) state() *qfields {
	return &qfields{&m.Weight, &m.WeightScale, &m.Bias, &m.InputScale, &m.InputZeroPoint, &m.packed, true}
}

func (l *QLinear) init(shape []int, bias bool) { initQ(&l.Base, l.state(), shape, bias) }
func (m *QConv2d) init(shape []int, bias bool) { initQ(&m.Base, m.state(), shape, bias) }

func initQ(b *Base, f *qfields, shape []int, bias bool) {
	*f.weight = tensor.Zeros(tensor.Int8, shape...)
	*f.weightScale = tensor.Ones(tensor.Float32, shape[0])
	if bias {
		*f.bias = tensor.Zeros(tensor.Float32, shape[0])
	}
	*f.inScale = tensor.Zeros(tensor.Float32, 1)
	*f.inZero = tensor.Zeros(tensor.Float32, 1)
	b.RegisterBuffer("weight", f.weight)
	b.RegisterBuffer("weight_scale", f.weightScale)
	b.RegisterBuffer("bias", f.bias)
	b.RegisterBuffer("input_scale", f.inScale)
	b.RegisterBuffer("input_zero_point", f.inZero)
}

// setQuantized sets the layer's state from a float weight and bias and the
// input map (nil: dynamic).
func setQuantized(f *qfields, w, bias *tensor.Tensor, in *tensor.QuantParams) {
	q, s := tensor.QuantizeWeightInt8(w)
	*f.weight, *f.weightScale = q, s
	if bias != nil {
		*f.bias = bias.Detach().To(tensor.Float32).Clone()
	}
	if in != nil {
		*f.inScale = tensor.FromFloat32([]float32{in.Scale}, 1)
		*f.inZero = tensor.FromFloat32([]float32{float32(in.ZeroPoint)}, 1)
	}
	f.packed.Store(nil)
}

// QuantizeLinear returns l with its weight quantized to int8 per output
// channel; in is the static input map, or nil for dynamic quantization.
func QuantizeLinear(l *Linear, in *tensor.QuantParams) *QLinear {
	q := NewQLinear(l.In, l.Out, l.Bias != nil)
	setQuantized(q.state(), l.Weight, l.Bias, in)
	return q
}

// QuantizeConv2d is QuantizeLinear for a convolution. Grouped convolutions
// are not supported (an error).
func QuantizeConv2d(c *Conv2d, in *tensor.QuantParams) (*QConv2d, error) {
	if c.Groups > 1 {
		return nil, fmt.Errorf("conv2d with groups=%d: int8 convolutions have one group", c.Groups)
	}
	q := NewQConv2d(c.Conv2dConfig)
	setQuantized(q.state(), c.Weight, c.Bias, in)
	return q, nil
}

// weights returns the packed weights, packing them if they changed.
func (f *qfields) weights() *tensor.Int8Weights {
	if w := f.packed.Load(); w != nil {
		return w
	}
	newWeights := tensor.NewInt8Weights
	if f.conv {
		newWeights = tensor.NewInt8ConvWeights
	}
	w, err := newWeights(*f.weight, *f.weightScale)
	if err != nil {
		panic("nn: quantized layer: " + err.Error())
	}
	f.packed.Store(w)
	return w
}

// inputParams returns the static input map, or nil (dynamic).
func (f *qfields) inputParams() *tensor.QuantParams {
	s := (*f.inScale).Float32s()[0]
	if s == 0 {
		return nil
	}
	return &tensor.QuantParams{Scale: s, ZeroPoint: int32((*f.inZero).Float32s()[0])}
}

// stateLoaded drops the packed weights after LoadStateDict replaced them.
func (f *qfields) stateLoaded() { f.packed.Store(nil) }

// Forward maps x [..., In] to [..., Out].
func (l *QLinear) Forward(x *tensor.Tensor) *tensor.Tensor { return l.forwardRelu(x, false) }

func (l *QLinear) forwardRelu(x *tensor.Tensor, relu bool) *tensor.Tensor {
	f := l.state()
	return tensor.LinearInt8(x, f.weights(), l.Bias, f.inputParams(), relu)
}

// Forward convolves x [N, C, H, W] (or [C, H, W]).
func (m *QConv2d) Forward(x *tensor.Tensor) *tensor.Tensor { return m.forwardRelu(x, false) }

func (m *QConv2d) forwardRelu(x *tensor.Tensor, relu bool) *tensor.Tensor {
	f := m.state()
	c := m.Conv2dConfig
	return tensor.Conv2dInt8(x, f.weights(), m.Bias, f.inputParams(),
		tensor.Conv2dOpts{Stride: c.Stride, Padding: c.Padding, Dilation: c.Dilation, Relu: relu})
}

func qmode(f *qfields) string {
	if p := f.inputParams(); p != nil {
		return fmt.Sprintf("static, input scale=%.4g zero=%d", p.Scale, p.ZeroPoint)
	}
	return "dynamic"
}

func (l *QLinear) describe() string {
	return fmt.Sprintf("QLinear(in=%d, out=%d, bias=%v, int8 %s)", l.In, l.Out, l.Bias != nil, qmode(l.state()))
}

func (m *QConv2d) describe() string {
	c := m.Conv2dConfig
	return fmt.Sprintf("QConv2d(%d, %d, kernel=%v, stride=%v, padding=%v, bias=%v, int8 %s)",
		c.In, c.Out, c.Kernel, c.Stride, c.Padding, m.Bias != nil, qmode(m.state()))
}

// seqFuser is a layer that can run together with the layers after it in
// one op (Sequential.Forward asks it first): forwardFused returns the
// output and how many of the following layers it consumed.
type seqFuser interface {
	forwardFused(x *tensor.Tensor, next []Layer) (*tensor.Tensor, int)
}

// forwardFused runs the convolution with a following ReLU and a following
// non-overlapping max pooling (kernel = stride, no padding, dilation or
// ceil mode, a window of at most tensor.Int8MaxPoolWindow() positions) as
// one op, tensor.Conv2dInt8Pool: the pooling happens in the int8 GEMM's
// epilogue and the full-size convolution output is never written.
func (m *QConv2d) forwardFused(x *tensor.Tensor, next []Layer) (*tensor.Tensor, int) {
	used := 0
	relu := false
	if len(next) > 0 {
		if _, ok := next[0].(*ReLU); ok {
			relu, used = true, 1
		}
	}
	if len(next) > used {
		if p, ok := next[used].(*MaxPool2d); ok && fusablePool(p) {
			f := m.state()
			c := m.Conv2dConfig
			y := tensor.Conv2dInt8Pool(x, f.weights(), m.Bias, f.inputParams(),
				tensor.Conv2dOpts{Stride: c.Stride, Padding: c.Padding, Dilation: c.Dilation, Relu: relu}, p.Kernel)
			return y, used + 1
		}
	}
	return m.forwardRelu(x, relu), used
}

// forwardFused runs the layer with a following ReLU and, when int8
// Linear layers (each with its ReLU, if any) follow, the whole chain as
// one op, tensor.LinearInt8Chain: block of rows by block of rows, the
// activations between the layers kept as uint8 in cache (requantized in
// the GEMM's epilogue between static layers, quantized row by row with
// each row's map between dynamic ones), the results those of running the
// layers one by one.
func (l *QLinear) forwardFused(x *tensor.Tensor, next []Layer) (*tensor.Tensor, int) {
	var chain []tensor.Int8Layer
	used := 0
	for q := l; q != nil; {
		relu := false
		if len(next) > used {
			if _, ok := next[used].(*ReLU); ok {
				relu, used = true, used+1
			}
		}
		f := q.state()
		chain = append(chain, tensor.Int8Layer{W: f.weights(), Bias: q.Bias, Input: f.inputParams(), ReLU: relu})
		q = nil
		if len(next) > used {
			if nl, ok := next[used].(*QLinear); ok && nl.In == chain[len(chain)-1].W.Out {
				q, used = nl, used+1
			}
		}
	}
	if len(chain) == 1 {
		return l.forwardRelu(x, chain[0].ReLU), used
	}
	return tensor.LinearInt8Chain(x, chain), used
}

// fusablePool reports whether Conv2dInt8Pool computes p.
func fusablePool(p *MaxPool2d) bool {
	return p.Kernel == p.Stride && p.Padding == [2]int{} && p.Dilation[0] <= 1 && p.Dilation[1] <= 1 &&
		!p.CeilMode && p.Kernel[0] >= 1 && p.Kernel[1] >= 1 && p.Kernel[0]*p.Kernel[1] <= tensor.Int8MaxPoolWindow()
}

// reluFuser is a layer that applies a following ReLU in its own pass
// (Sequential.Forward uses it).
type reluFuser interface {
	forwardRelu(x *tensor.Tensor, relu bool) *tensor.Tensor
}

func init() {
	registerLayer("qlinear", []string{"in", "out", "bias"}, buildQLinear)
	registerLayer("qconv2d", []string{"in", "out", "bias", "kernel", "stride", "padding", "dilation"}, buildQConv2d)
}

func buildQLinear(b *layerBuild) (Layer, []int, error) {
	in, err := b.linearIn()
	if err != nil {
		return nil, nil, err
	}
	out := b.spec.Out
	if err := b.reserve(product(in, out) + b.biasValues(out) + float64(out) + 2); err != nil {
		return nil, nil, err
	}
	return NewQLinear(in, out, b.bias()), b.last(out), nil
}

func buildQConv2d(b *layerBuild) (Layer, []int, error) {
	c, shape, err := b.conv2d(1)
	if err != nil {
		return nil, nil, err
	}
	if err := b.reserve(product(c.Out, c.In, c.Kernel[0], c.Kernel[1]) + b.biasValues(c.Out) + float64(c.Out) + 2); err != nil {
		return nil, nil, err
	}
	return NewQConv2d(c), shape, nil
}
