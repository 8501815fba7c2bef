package tensor

import (
	"fmt"
	"math"
	"sync"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// Int8 inference: weights quantized per output channel to int8
// (symmetric, W(j,·) ≈ scale_j·q, q in [−127, 127]), activations to uint8
// with an affine map (x ≈ scale·(q − zero), q in [0, 255]), products on the
// int8 GEMM of internal/kernel (AVX512-VNNI where the CPU has it) with the
// dequantization, bias and ReLU fused into its tile epilogue. The scheme
// is that of Jacob et al. (CVPR 2018) and of PyTorch's fbgemm backend.
// These ops are for inference only: they record nothing for autograd.

// QuantParams is the affine map of uint8 activations: x ≈ Scale·(q − ZeroPoint).
type QuantParams struct {
	Scale     float32
	ZeroPoint int32
}

// ChooseQuantParams returns the uint8 map for values in [lo, hi]. The range
// is first widened to contain 0, so that 0 (ReLU outputs, padding) is exact.
// Asymmetric maps [lo, hi] onto [0, 255]; symmetric centres it (zero point
// 128, scale max(|lo|, |hi|)/127.5), as for activations of either sign.
func ChooseQuantParams(lo, hi float32, symmetric bool) QuantParams {
	lo, hi = min(lo, 0), max(hi, 0)
	if symmetric {
		a := max(-lo, hi)
		if !(a > 0) || math.IsInf(float64(a), 0) {
			return QuantParams{Scale: 1, ZeroPoint: 128}
		}
		return QuantParams{Scale: a / 127.5, ZeroPoint: 128}
	}
	s, z := kernel.AffineU8(lo, hi)
	return QuantParams{Scale: s, ZeroPoint: z}
}

// QuantizeWeightInt8 quantizes w [out, ...] per output channel (dim 0),
// symmetrically: it returns q (Int8, w's shape, values in [−127, 127]) and
// scale (Float32 [out]) with w ≈ scale[j]·q[j, ...]. An all-zero channel
// gets scale 1.
func QuantizeWeightInt8(w *Tensor) (q, scale *Tensor) {
	if len(w.shape) < 1 || !w.dtype.IsFloat() {
		panic(fmt.Sprintf("tensor: QuantizeWeightInt8: want a float weight [out, ...], got %v %v", w.dtype, w.shape))
	}
	out := w.shape[0]
	vals := w.Detach().To(Float32).Contiguous()
	v := data[float32](vals)[vals.offset : vals.offset+vals.Numel()]
	per := 0
	if out > 0 {
		per = len(v) / out
	}
	qs := make([]int8, len(v))
	sc := make([]float32, out)
	for j := range out {
		row := v[j*per : (j+1)*per]
		var a float32
		for _, x := range row {
			a = max(a, float32(math.Abs(float64(x))))
		}
		s := a / 127
		if !(s > 0) || math.IsInf(float64(s), 0) {
			s = 1
		}
		sc[j] = s
		for i, x := range row {
			r := math.RoundToEven(float64(x / s))
			qs[j*per+i] = int8(min(max(r, -127), 127))
		}
	}
	return FromInt8(qs, w.shape...), FromFloat32(sc, out)
}

// Int8Weights is a weight matrix quantized per output channel and packed
// for the int8 GEMM: Out rows of In values (a Linear weight, or a Conv2d
// weight [OC, C, KH, KW] seen as OC × C·KH·KW). Packing happens once, in
// NewInt8Weights; the value is read-only and safe for concurrent use.
type Int8Weights struct {
	Out, In int
	packed  *kernel.PackedI8
	scale   []float32
	// A convolution's filter [OC, C, KH, KW] is packed with its taps in
	// (KH, KW, C) order, the order of kernel.Im2rowU8 (NewInt8ConvWeights).
	conv      bool
	c, kh, kw int
}

// NewInt8Weights packs q (Int8 [out, ...]) with its per-channel scale
// (Float32 [out]).
func NewInt8Weights(q, scale *Tensor) (*Int8Weights, error) {
	w, err := checkInt8Weights(q, scale)
	if err != nil {
		return nil, err
	}
	w.packed = kernel.PackI8(w.Out, w.In, q.Int8s(), w.In)
	return w, nil
}

// checkInt8Weights validates q and scale as NewInt8Weights takes them and
// returns the weights not yet packed.
func checkInt8Weights(q, scale *Tensor) (*Int8Weights, error) {
	if q.dtype != Int8 || len(q.shape) < 1 {
		return nil, fmt.Errorf("quantized weight must be int8 [out, ...], got %v %v", q.dtype, q.shape)
	}
	out := q.shape[0]
	if scale.dtype != Float32 || scale.Numel() != out {
		return nil, fmt.Errorf("weight scale must be float32 [%d], got %v %v", out, scale.dtype, scale.shape)
	}
	in := 0
	if out > 0 {
		in = q.Numel() / out
	}
	if in > kernel.MaxI8K {
		return nil, fmt.Errorf("quantized weight has %d inputs per channel, more than the int8 GEMM's %d", in, kernel.MaxI8K)
	}
	sc := scale.Float32s()
	for j, s := range sc {
		if !(s > 0) || math.IsInf(float64(s), 0) {
			return nil, fmt.Errorf("weight scale[%d] = %g, want a positive finite number", j, s)
		}
	}
	return &Int8Weights{Out: out, In: in, scale: sc}, nil
}

// NewInt8ConvWeights packs a quantized filter bank q (Int8 [OC, C, KH, KW])
// with its per-channel scale for Conv2dInt8.
func NewInt8ConvWeights(q, scale *Tensor) (*Int8Weights, error) {
	if q.dtype != Int8 || len(q.shape) != 4 {
		return nil, fmt.Errorf("quantized filters must be int8 [OC, C, KH, KW], got %v %v", q.dtype, q.shape)
	}
	w, err := checkInt8Weights(q, scale)
	if err != nil {
		return nil, err
	}
	oc, c, kh, kw := q.shape[0], q.shape[1], q.shape[2], q.shape[3]
	src := q.Int8s()
	perm := make([]int8, len(src))
	for o := range oc {
		for ci := range c {
			for i := range kh {
				for j := range kw {
					perm[o*w.In+(i*kw+j)*c+ci] = src[o*w.In+(ci*kh+i)*kw+j]
				}
			}
		}
	}
	w.packed = kernel.PackI8(oc, w.In, perm, w.In)
	w.conv, w.c, w.kh, w.kw = true, c, kh, kw
	return w, nil
}

// Bytes returns the memory the packed weights hold.
func (w *Int8Weights) Bytes() int { return w.packed.Bytes() + 4*len(w.scale) }

// MinMax returns the smallest and largest element of a float32 tensor
// (the observation of a min-max observer).
func MinMax(x *Tensor) (lo, hi float32) {
	v := x.Detach().To(Float32).Contiguous()
	d := data[float32](v)[v.offset : v.offset+v.Numel()]
	if len(d) == 0 {
		return 0, 0
	}
	return minMaxF32(d)
}

// minMaxF32 returns the smallest and largest of d (not empty) in one
// pass, on several cores when d is large.
func minMaxF32(d []float32) (lo, hi float32) { return kernel.MinMaxF32(d) }

// u8Scratch holds the quantized activations of LinearInt8 between calls.
var u8Scratch = sync.Pool{New: func() any { return new([]uint8) }}

func getU8(n int) *[]uint8 {
	b := u8Scratch.Get().(*[]uint8)
	if cap(*b) < n {
		*b = make([]uint8, n)
	}
	return b
}

// quantizeRows quantizes the float32 values d (rows of in) to uint8 with p,
// on several cores when large.
func quantizeRows(dst []uint8, d []float32, p QuantParams) {
	inv := 1 / p.Scale
	parallel.For(len(d), 1<<17, func(lo, hi int) {
		kernel.QuantizeU8(dst[lo:hi], d[lo:hi], inv, p.ZeroPoint)
	})
}

// activationParams returns p, or (p nil: dynamic quantization) the
// asymmetric min-max map of d.
func activationParams(d []float32, p *QuantParams) QuantParams {
	if p != nil {
		return *p
	}
	if len(d) == 0 {
		return QuantParams{Scale: 1}
	}
	lo, hi := minMaxF32(d)
	return ChooseQuantParams(lo, hi, false)
}

func (p QuantParams) check(op string) {
	if !(p.Scale > 0) || math.IsInf(float64(p.Scale), 0) || p.ZeroPoint < 0 || p.ZeroPoint > 255 {
		panic(fmt.Sprintf("tensor: %s: activation scale %g and zero point %d (want a positive scale, zero point in [0, 255])", op, p.Scale, p.ZeroPoint))
	}
}

// LinearInt8 returns x·Wᵀ + b (then ReLU with relu) for x [..., In] float32,
// computed in int8: x is quantized to uint8 with p, or with p nil each row
// with the min-max map of that row alone (dynamic quantization per row:
// finer than one map per batch, and a row's result does not depend on the
// rest of its batch), and the int32 products are dequantized with the bias
// added in the GEMM's epilogue. The quantization happens inside the GEMM,
// block by block, while the rows are in cache. b is nil or Float32 [Out].
// The result is Float32 [..., Out] and records no gradient.
func LinearInt8(x *Tensor, w *Int8Weights, b *Tensor, p *QuantParams, relu bool) *Tensor {
	if len(x.shape) == 0 || x.shape[len(x.shape)-1] != w.In {
		panic(fmt.Sprintf("tensor: LinearInt8: input %v does not match weights of %d inputs", x.shape, w.In))
	}
	bias := int8Bias("LinearInt8", b, w.Out)
	m := numelOf(x.shape[:len(x.shape)-1])
	qp := QuantParams{Scale: 1}
	if p != nil {
		qp = *p
		qp.check("LinearInt8")
	}
	if x.dtype == Uint8 {
		return linearU8In(x, w, bias, p, relu, nil)
	}
	xc := x.Detach().To(Float32).Contiguous()
	d := data[float32](xc)[xc.offset : xc.offset+xc.Numel()]
	outShape := append(append([]int(nil), x.shape[:len(x.shape)-1]...), w.Out)
	out := emptyUninit(Float32, outShape)
	c := data[float32](out)
	if w.In == 0 {
		// No inputs: the product is zero, the output the bias.
		for i := range m {
			for j := range w.Out {
				v := float32(0)
				if bias != nil {
					v = bias[j]
				}
				if relu {
					v = max(v, 0)
				}
				c[i*w.Out+j] = v
			}
		}
		return out
	}
	// The GEMM quantizes x block by block as it goes.
	kernel.GemmF32I8F32(m, d, w.In, w.packed, &kernel.I8Dequant{
		AScale: qp.Scale, AZero: qp.ZeroPoint, PerRow: p == nil, WScale: w.scale, Bias: bias, ReLU: relu,
	}, c, w.Out)
	return out
}

// LinearInt8U8 is LinearInt8 with static input map p whose output is
// quantized again, with out (the input map of the next int8 layer), in the
// GEMM's epilogue: bias, ReLU and requantization fused, so no float32
// activations are written between the two layers. x is Float32
// (quantized with p inside the GEMM) or Uint8 (already quantized with p,
// the output of another LinearInt8U8); the result is Uint8 [..., Out].
// LinearInt8 takes such a Uint8 input too.
func LinearInt8U8(x *Tensor, w *Int8Weights, b *Tensor, p QuantParams, relu bool, out QuantParams) *Tensor {
	if len(x.shape) == 0 || x.shape[len(x.shape)-1] != w.In {
		panic(fmt.Sprintf("tensor: LinearInt8U8: input %v does not match weights of %d inputs", x.shape, w.In))
	}
	p.check("LinearInt8U8")
	out.check("LinearInt8U8")
	return linearU8In(x, w, int8Bias("LinearInt8U8", b, w.Out), &p, relu, &out)
}

// linearU8In runs the int8 Linear on x (Uint8 quantized with p, or
// Float32 when out is set) into Float32, or Uint8 with map out.
func linearU8In(x *Tensor, w *Int8Weights, bias []float32, p *QuantParams, relu bool, out *QuantParams) *Tensor {
	if p == nil {
		panic("tensor: LinearInt8: a uint8 input needs its quantization map (static input map)")
	}
	m := numelOf(x.shape[:len(x.shape)-1])
	outShape := append(append([]int(nil), x.shape[:len(x.shape)-1]...), w.Out)
	deq := kernel.I8Dequant{AScale: p.Scale, AZero: p.ZeroPoint, WScale: w.scale, Bias: bias, ReLU: relu}
	var xu []uint8
	var xf []float32
	if x.dtype == Uint8 {
		xc := x.Contiguous()
		xu = data[uint8](xc)[xc.offset : xc.offset+xc.Numel()]
	} else {
		xc := x.Detach().To(Float32).Contiguous()
		xf = data[float32](xc)[xc.offset : xc.offset+xc.Numel()]
	}
	if out == nil {
		y := emptyUninit(Float32, outShape)
		c := data[float32](y)
		if w.In == 0 {
			// No inputs: the bias alone.
			row := orZeros(bias, w.Out)
			for i := range m {
				for j, v := range row {
					if relu {
						v = max(v, 0)
					}
					c[i*w.Out+j] = v
				}
			}
			return y
		}
		kernel.GemmU8I8F32(m, xu, w.In, w.packed, &deq, c, w.Out)
		return y
	}
	y := emptyUninit(Uint8, outShape)
	c := data[uint8](y)
	if m == 0 {
		return y
	}
	if w.In == 0 {
		// No inputs: the bias alone, quantized.
		row := orZeros(bias, w.Out)
		for i := range m {
			for j, v := range row {
				if relu {
					v = max(v, 0)
				}
				c[i*w.Out+j] = uint8(min(max(math.RoundToEven(float64(v/out.Scale))+float64(out.ZeroPoint), 0), 255))
			}
		}
		return y
	}
	rq := &kernel.I8Requant{I8Dequant: deq, OutScale: out.Scale, OutZero: out.ZeroPoint}
	if xu != nil {
		kernel.GemmU8I8U8(m, xu, w.In, w.packed, rq, c, w.Out)
	} else {
		kernel.GemmF32I8U8(m, xf, w.In, w.packed, rq, c, w.Out)
	}
	return y
}

func orZeros(b []float32, n int) []float32 {
	if b == nil {
		return make([]float32, n)
	}
	return b
}

func int8Bias(op string, b *Tensor, out int) []float32 {
	if b == nil {
		return nil
	}
	if b.Numel() != out || len(b.shape) != 1 {
		panic(fmt.Sprintf("tensor: %s: bias %v does not match %d outputs", op, b.shape, out))
	}
	return b.Detach().To(Float32).Float32s()
}

// Conv2dInt8 is Conv2d (opts.Groups must be 1; opts.Relu applies) with
// weights w (a quantized [OC, C, KH, KW] filter bank, NewInt8ConvWeights) and
// activations quantized as in LinearInt8 (one map for the batch): the
// batch is quantized once, each image's bytes are unfolded position-major
// (channels innermost, kernel.Im2rowU8, padding at the zero point) and
// multiplied by the weights in one int8 GEMM whose epilogue adds the bias
// (and ReLU) and stores the positions × channels tiles transposed, into
// NCHW. x is [N, C, H, W] or [C, H, W]; the result is Float32 and records
// no gradient.
func Conv2dInt8(x *Tensor, w *Int8Weights, b *Tensor, p *QuantParams, opts Conv2dOpts) *Tensor {
	return conv2dInt8(x, w, b, p, opts, 1, 1)
}

// Conv2dInt8Pool is Conv2dInt8 followed by a max pooling of kernel and
// stride pool (no padding, no dilation, no ceil mode: MaxPool2d with
// those options), in one op: the unfolding puts each pooling window's
// output positions on consecutive rows (kernel.Im2rowU8Pooled) and the
// GEMM's epilogue keeps only their maximum, so the convolution's full
// output is never written. pool[0]·pool[1] must be at most
// Int8MaxPoolWindow().
func Conv2dInt8Pool(x *Tensor, w *Int8Weights, b *Tensor, p *QuantParams, opts Conv2dOpts, pool [2]int) *Tensor {
	if pool[0] < 1 || pool[1] < 1 || pool[0]*pool[1] > kernel.I8MaxPool() {
		panic(fmt.Sprintf("tensor: Conv2dInt8Pool: pooling window %v (at most %d positions)", pool, kernel.I8MaxPool()))
	}
	return conv2dInt8(x, w, b, p, opts, pool[0], pool[1])
}

// Int8MaxPoolWindow is the largest pooling window (in positions) that
// Conv2dInt8Pool fuses on this CPU.
func Int8MaxPoolWindow() int { return kernel.I8MaxPool() }

// Scratch of the int8 convolution, by purpose (one sync.Pool each, so a Get
// finds a buffer of the right size).
var (
	im2rowScratch = sync.Pool{New: func() any { return new([]uint8) }}
	hwcScratch    = sync.Pool{New: func() any { return new([]uint8) }}
)

func getBuf[T any](p *sync.Pool, n int) *[]T {
	b := p.Get().(*[]T)
	if cap(*b) < n {
		*b = make([]T, n)
	}
	return b
}

func conv2dInt8(x *Tensor, w *Int8Weights, b *Tensor, p *QuantParams, opts Conv2dOpts, ph, pw int) *Tensor {
	if len(x.shape) == 3 {
		return conv2dInt8(x.Unsqueeze(0), w, b, p, opts, ph, pw).Squeeze(0)
	}
	if max(opts.Groups, 1) != 1 {
		panic("tensor: Conv2dInt8: grouped convolutions are not supported")
	}
	if !w.conv {
		panic("tensor: Conv2dInt8: weights not packed by NewInt8ConvWeights")
	}
	if len(x.shape) != 4 || x.shape[1] != w.c {
		panic(fmt.Sprintf("tensor: Conv2dInt8: input %v does not match filters of %d channels", x.shape, w.c))
	}
	g := newConvGeom(x.shape, []int{w.Out, w.c, w.kh, w.kw}, opts)
	bias := int8Bias("Conv2dInt8", b, w.Out)
	xc := x.Detach().To(Float32).Contiguous()
	d := data[float32](xc)[xc.offset : xc.offset+xc.Numel()]
	qp := activationParams(d, p)
	qp.check("Conv2dInt8")
	qh, qw := g.oh/ph, g.ow/pw // output grid (pooled)
	out := emptyUninit(Float32, []int{g.n, g.oc, qh, qw})
	o := data[float32](out)
	ld := (g.kg + 3) &^ 3 // rows the GEMM reads in place
	rows, op := qh*qw*ph*pw, qh*qw
	// Quantize the whole batch once, then unfold each image's bytes.
	xb := getU8(len(d))
	defer u8Scratch.Put(xb)
	xq := (*xb)[:len(d)]
	quantizeRows(xq, d, qp)
	// Positions × channels stored transposed, straight into NCHW; with
	// pooling, each window's positions reduced to their maximum first.
	deq := &kernel.I8Dequant{AScale: qp.Scale, AZero: qp.ZeroPoint, WScale: w.scale, Bias: bias, ReLU: opts.Relu,
		TransC: true, Pool: ph * pw}
	parallel.For(g.n, 1, func(lo, hi int) {
		ab, hb := getBuf[uint8](&im2rowScratch, rows*ld), getBuf[uint8](&hwcScratch, g.c*g.hw)
		defer im2rowScratch.Put(ab)
		defer hwcScratch.Put(hb)
		a, hwc := (*ab)[:rows*ld], (*hb)[:g.c*g.hw]
		for n := lo; n < hi; n++ {
			img := xq[n*g.c*g.hw : (n+1)*g.c*g.hw]
			if g.c > 1 { // CHW → HWC
				for c := range g.c {
					for q, v := range img[c*g.hw : (c+1)*g.hw] {
						hwc[q*g.c+c] = v
					}
				}
				img = hwc
			}
			kernel.Im2rowU8Pooled(a, img, g.c, g.win, uint8(qp.ZeroPoint), ld, ph, pw)
			kernel.GemmU8I8F32(rows, a, ld, w.packed, deq, o[n*g.oc*op:(n+1)*g.oc*op], op)
		}
	})
	return out
}

// Int8Layer is one layer of LinearInt8Chain: packed weights, bias (nil or
// Float32 [Out]), the static input map (nil: dynamic, each row quantized
// with its own min-max map, as LinearInt8 does) and whether a ReLU follows.
type Int8Layer struct {
	W     *Int8Weights
	Bias  *Tensor
	Input *QuantParams
	ReLU  bool
}

// LinearInt8Chain runs int8 Linear layers one after the other on x
// [..., In] (Float32): the result is that of calling LinearInt8 on each
// layer's output in turn (LinearInt8U8 between two static layers), bit for
// bit, but the chain runs block of rows by block of rows, every layer on a
// block before the next block (kernel.GemmChainF32I8): the activations
// between layers stay in the core's cache as uint8, only the last layer's
// output is allocated, and the cores synchronize once rather than once per
// layer. Each layer's In must be the previous layer's Out. The result is
// Float32 [..., Out of the last layer] and records no gradient.
func LinearInt8Chain(x *Tensor, layers []Int8Layer) *Tensor {
	if len(layers) == 0 {
		panic("tensor: LinearInt8Chain: no layers")
	}
	for i, l := range layers {
		if i > 0 && l.W.In != layers[i-1].W.Out {
			panic(fmt.Sprintf("tensor: LinearInt8Chain: layer %d takes %d inputs after %d outputs", i, l.W.In, layers[i-1].W.Out))
		}
		if l.W.conv {
			panic("tensor: LinearInt8Chain: convolution weights")
		}
		if l.Input != nil {
			l.Input.check("LinearInt8Chain")
		}
	}
	if len(x.shape) == 0 || x.shape[len(x.shape)-1] != layers[0].W.In {
		panic(fmt.Sprintf("tensor: LinearInt8Chain: input %v does not match weights of %d inputs", x.shape, layers[0].W.In))
	}
	simple := x.dtype != Uint8
	for _, l := range layers {
		simple = simple && l.W.In > 0 && l.W.Out > 0
	}
	if !simple {
		return linearInt8Steps(x, layers)
	}
	m := numelOf(x.shape[:len(x.shape)-1])
	xc := x.Detach().To(Float32).Contiguous()
	d := data[float32](xc)[xc.offset : xc.offset+xc.Numel()]
	last := layers[len(layers)-1].W
	out := emptyUninit(Float32, append(append([]int(nil), x.shape[:len(x.shape)-1]...), last.Out))
	ks := make([]kernel.I8Layer, len(layers))
	for i, l := range layers {
		d := kernel.I8Dequant{WScale: l.W.scale, Bias: int8Bias("LinearInt8Chain", l.Bias, l.W.Out), ReLU: l.ReLU, PerRow: l.Input == nil}
		if l.Input != nil {
			d.AScale, d.AZero = l.Input.Scale, l.Input.ZeroPoint
		}
		ks[i] = kernel.I8Layer{W: l.W.packed, I8Dequant: d}
	}
	kernel.GemmChainF32I8(m, d, layers[0].W.In, ks, data[float32](out), last.Out)
	return out
}

// linearInt8Steps is LinearInt8Chain one layer at a time.
func linearInt8Steps(x *Tensor, layers []Int8Layer) *Tensor {
	for i, l := range layers {
		if i+1 < len(layers) && l.Input != nil && layers[i+1].Input != nil {
			x = LinearInt8U8(x, l.W, l.Bias, *l.Input, l.ReLU, *layers[i+1].Input)
			continue
		}
		x = LinearInt8(x, l.W, l.Bias, l.Input, l.ReLU)
	}
	return x
}
