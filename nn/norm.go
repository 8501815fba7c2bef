package nn

import (
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/tensor"
)

// BatchNorm normalizes each channel over the batch (and spatial) dims,
// y = (x − E[x]) / √(Var[x] + Eps) · weight + bias (Ioffe & Szegedy,
// "Batch Normalization", ICML 2015), as torch.nn.BatchNorm1d/2d:
//
//   - training mode: E and Var are the batch statistics, Var biased (divided
//     by n); the running statistics, when tracked, are updated as
//     running = (1 − Momentum)·running + Momentum·batch with the unbiased
//     variance (divided by n − 1), and NumBatchesTracked is incremented;
//   - evaluation mode: the running statistics are used (the batch
//     statistics when they are not tracked).
//
// Momentum and Eps may be changed after construction; with
// CumulativeAverage the update factor is 1/NumBatchesTracked instead of
// Momentum (PyTorch's momentum=None).
//
// Parameters "weight" (ones) and "bias" (zeros) exist when affine; buffers
// "running_mean" (zeros), "running_var" (ones) and "num_batches_tracked"
// (an int64 scalar) when tracking, with PyTorch's names so state dicts
// interchange.
type BatchNorm struct {
	Base
	Weight, Bias      *tensor.Tensor // [Features], nil when not affine
	RunningMean       *tensor.Tensor // [Features], nil when not tracking
	RunningVar        *tensor.Tensor
	NumBatchesTracked *tensor.Tensor // int64 scalar
	Features          int
	Eps               float64
	Momentum          float64
	CumulativeAverage bool
	spatialDims       int // 1 for BatchNorm1d, 2 for BatchNorm2d
}

// BatchNormConfig configures NewBatchNorm1dWith and NewBatchNorm2dWith.
// The zero value of the flags gives PyTorch's defaults (affine, tracking).
type BatchNormConfig struct {
	Features            int
	Eps                 float64 // 0 means PyTorch's 1e-5
	Momentum            float64 // 0 means PyTorch's 0.1
	CumulativeAverage   bool
	NoAffine            bool
	NoTrackRunningStats bool
}

// NewBatchNorm1d returns a batch norm over inputs [N, C] or [N, C, L].
func NewBatchNorm1d(features int) *BatchNorm {
	return NewBatchNorm1dWith(BatchNormConfig{Features: features})
}

// NewBatchNorm2d returns a batch norm over inputs [N, C, H, W].
func NewBatchNorm2d(features int) *BatchNorm {
	return NewBatchNorm2dWith(BatchNormConfig{Features: features})
}

// NewBatchNorm1dWith returns a BatchNorm1d configured by c.
func NewBatchNorm1dWith(c BatchNormConfig) *BatchNorm { return newBatchNorm(c, 1) }

// NewBatchNorm2dWith returns a BatchNorm2d configured by c.
func NewBatchNorm2dWith(c BatchNormConfig) *BatchNorm { return newBatchNorm(c, 2) }

func newBatchNorm(c BatchNormConfig, spatial int) *BatchNorm {
	if c.Features <= 0 {
		panic(fmt.Sprintf("nn: BatchNorm%dd needs a positive number of features, got %d", spatial, c.Features))
	}
	b := &BatchNorm{Features: c.Features, Eps: c.Eps, Momentum: c.Momentum, CumulativeAverage: c.CumulativeAverage, spatialDims: spatial}
	if b.Eps == 0 {
		b.Eps = 1e-5
	}
	if b.Momentum == 0 {
		b.Momentum = 0.1
	}
	if !c.NoAffine {
		b.Weight = tensor.Ones(tensor.Float32, c.Features)
		b.Bias = tensor.Zeros(tensor.Float32, c.Features)
	}
	if !c.NoTrackRunningStats {
		b.RunningMean = tensor.Zeros(tensor.Float32, c.Features)
		b.RunningVar = tensor.Ones(tensor.Float32, c.Features)
		b.NumBatchesTracked = tensor.Scalar(0, tensor.Int64)
	}
	b.RegisterParameter("weight", &b.Weight)
	b.RegisterParameter("bias", &b.Bias)
	b.RegisterBuffer("running_mean", &b.RunningMean)
	b.RegisterBuffer("running_var", &b.RunningVar)
	b.RegisterBuffer("num_batches_tracked", &b.NumBatchesTracked)
	return b
}

// Forward normalizes x: [N, C] or [N, C, L] for BatchNorm1d, [N, C, H, W]
// for BatchNorm2d.
func (b *BatchNorm) Forward(x *tensor.Tensor) *tensor.Tensor {
	shape := x.Shape()
	ok := len(shape) == b.spatialDims+2 || (b.spatialDims == 1 && len(shape) == 2)
	if !ok || shape[1] != b.Features {
		want := "[N, C, H, W]"
		if b.spatialDims == 1 {
			want = "[N, C] or [N, C, L]"
		}
		panic(fmt.Sprintf("nn: BatchNorm%dd(%d): input %v, want %s with C = %d", b.spatialDims, b.Features, shape, want, b.Features))
	}
	// Per-channel tensors broadcast as [C, 1, ...].
	bshape := make([]int, len(shape)-1)
	bshape[0] = b.Features
	for i := 1; i < len(bshape); i++ {
		bshape[i] = 1
	}
	n := shape[0]
	for d := 2; d < len(shape); d++ {
		n *= shape[d]
	}
	useBatch := b.Training() || b.RunningMean == nil
	if !useBatch {
		// y = x·scale + shift with scale = w/√(rv+eps), shift = b − rm·scale.
		scale := b.RunningVar.AddScalar(b.Eps).Rsqrt()
		if b.Weight != nil {
			scale = scale.Mul(b.Weight)
		}
		shift := b.RunningMean.Mul(scale).Neg()
		if b.Bias != nil {
			shift = shift.Add(b.Bias)
		}
		return x.Mul(scale.Reshape(bshape...)).Add(shift.Reshape(bshape...))
	}
	if n <= 1 && b.Training() {
		panic(fmt.Sprintf("nn: BatchNorm%dd: expected more than 1 value per channel when training, got input %v", b.spatialDims, shape))
	}
	y, mean, v := tensor.BatchNorm(x, b.Weight, b.Bias, b.Eps)
	if b.Training() && b.RunningMean != nil {
		b.NumBatchesTracked.AddScalarInPlace(1)
		f := b.Momentum
		if b.CumulativeAverage {
			f = 1 / b.NumBatchesTracked.Item()
		}
		dt := b.RunningMean.DType()
		bm := mean.To(dt)
		bv := v.MulScalar(float64(n) / float64(n-1)).To(dt)
		b.RunningMean.MulScalarInPlace(1-f).AxpyInPlace(f, bm)
		b.RunningVar.MulScalarInPlace(1-f).AxpyInPlace(f, bv)
	}
	return y
}

func (b *BatchNorm) describe() string {
	return fmt.Sprintf("BatchNorm%dd(%d, eps=%g, momentum=%g, affine=%v, track_running_stats=%v)",
		b.spatialDims, b.Features, b.Eps, b.Momentum, b.Weight != nil, b.RunningMean != nil)
}

// LayerNorm normalizes over the last len(Shape) dims of its input,
// y = (x − E[x]) / √(Var[x] + Eps) · weight + bias with the biased
// variance (Ba, Kiros & Hinton, "Layer Normalization", 2016), as
// torch.nn.LayerNorm. It behaves the same in training and evaluation.
// Parameters "weight" (ones) and "bias" (zeros) of shape Shape, absent
// without elementwise affine.
type LayerNorm struct {
	Base
	Weight, Bias *tensor.Tensor
	Shape        []int
	Eps          float64
}

// NewLayerNorm returns a LayerNorm over trailing dims of the given shape
// (eps 1e-5, affine).
func NewLayerNorm(shape ...int) *LayerNorm {
	return NewLayerNormWith(LayerNormConfig{Shape: shape})
}

// LayerNormConfig configures NewLayerNormWith.
type LayerNormConfig struct {
	Shape    []int
	Eps      float64 // 0 means PyTorch's 1e-5
	NoAffine bool
}

// NewLayerNormWith returns a LayerNorm configured by c.
func NewLayerNormWith(c LayerNormConfig) *LayerNorm {
	if len(c.Shape) == 0 {
		panic("nn: NewLayerNorm needs the normalized shape")
	}
	l := &LayerNorm{Shape: append([]int(nil), c.Shape...), Eps: c.Eps}
	if l.Eps == 0 {
		l.Eps = 1e-5
	}
	if !c.NoAffine {
		l.Weight = tensor.Ones(tensor.Float32, c.Shape...)
		l.Bias = tensor.Zeros(tensor.Float32, c.Shape...)
	}
	l.RegisterParameter("weight", &l.Weight)
	l.RegisterParameter("bias", &l.Bias)
	return l
}

// Forward normalizes x, whose trailing dims must equal Shape.
func (l *LayerNorm) Forward(x *tensor.Tensor) *tensor.Tensor {
	shape := x.Shape()
	k := len(l.Shape)
	if len(shape) < k || !slices.Equal(shape[len(shape)-k:], l.Shape) {
		panic(fmt.Sprintf("nn: LayerNorm(%v): input %v does not end in the normalized shape", l.Shape, shape))
	}
	return tensor.LayerNorm(x, l.Weight, l.Bias, k, l.Eps)
}

func (l *LayerNorm) describe() string {
	return fmt.Sprintf("LayerNorm(%v, eps=%g, affine=%v)", l.Shape, l.Eps, l.Weight != nil)
}

func init() {
	registerLayer("batchnorm1d", []string{"in", "eps", "momentum", "affine", "track_running_stats"}, buildBatchNorm)
	registerLayer("batchnorm2d", []string{"in", "eps", "momentum", "affine", "track_running_stats"}, buildBatchNorm)
	registerLayer("layernorm", []string{"in", "eps", "affine"}, buildLayerNorm)
}

// buildBatchNorm builds batchnorm1d and batchnorm2d.
func buildBatchNorm(b *layerBuild) (Layer, []int, error) {
	s, in := b.spec, b.in
	if b.typ == "batchnorm2d" {
		if err := b.image(); err != nil {
			return b.fail("%v", err)
		}
	} else if len(in) != 1 && len(in) != 2 {
		return b.fail("input must be [C] or [C, L], got %v", in)
	}
	if err := b.checkIn(in[0], "channels"); err != nil {
		return b.fail("%v", err)
	}
	c := BatchNormConfig{Features: in[0], Eps: s.Eps, Momentum: s.Momentum,
		NoAffine: s.Affine != nil && !*s.Affine, NoTrackRunningStats: s.TrackRunningStats != nil && !*s.TrackRunningStats}
	n := 0.0
	if !c.NoAffine {
		n += 2 * float64(in[0]) // weight, bias
	}
	if !c.NoTrackRunningStats {
		n += 2*float64(in[0]) + 1 // running mean and variance, num_batches_tracked
	}
	if err := b.reserve(n); err != nil {
		return nil, nil, err
	}
	if b.typ == "batchnorm2d" {
		return NewBatchNorm2dWith(c), b.same(), nil
	}
	return NewBatchNorm1dWith(c), b.same(), nil
}

func buildLayerNorm(b *layerBuild) (Layer, []int, error) {
	s, in := b.spec, b.in
	if len(in) == 0 {
		return b.fail("input has no feature dim")
	}
	if err := b.checkIn(in[len(in)-1], "features"); err != nil {
		return b.fail("%v", err)
	}
	noAffine := s.Affine != nil && !*s.Affine
	if !noAffine {
		if err := b.reserve(2 * float64(in[len(in)-1])); err != nil {
			return nil, nil, err
		}
	}
	return NewLayerNormWith(LayerNormConfig{Shape: []int{in[len(in)-1]}, Eps: s.Eps, NoAffine: noAffine}), b.same(), nil
}
