package onnx

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// A small ONNX interpreter used only in tests: the independent runtime
// that exported files are checked against (python3-onnx 1.12 has no
// onnx.reference). It follows the operator specifications directly, in
// float64 over plain slices, sharing no code with package tensor or nn:
// a bug in fathom's kernels or in the exporter shows up as a difference.

type refTensor struct {
	shape []int
	v     []float64
}

func (t *refTensor) size() int { return numelInts(t.shape) }

// strides returns row-major strides of shape.
func strides(shape []int) []int {
	s := make([]int, len(shape))
	k := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = k
		k *= shape[i]
	}
	return s
}

// refRun evaluates graph g on input x and returns its first output.
func refRun(g *GraphProto, x *refTensor) (*refTensor, error) {
	env := map[string]*refTensor{}
	for _, t := range g.Initializer {
		c, err := decodeTensor(t)
		if err != nil {
			return nil, err
		}
		env[t.Name] = &refTensor{shape: c.shape, v: c.vals}
	}
	for _, in := range g.Input {
		if _, ok := env[in.Name]; !ok {
			env[in.Name] = x
		}
	}
	for _, n := range g.Node {
		ins := make([]*refTensor, len(n.Input))
		for i, name := range n.Input {
			if name == "" {
				continue
			}
			t, ok := env[name]
			if !ok {
				return nil, fmt.Errorf("node %s: input %q undefined", n.Name, name)
			}
			ins[i] = t
		}
		y, err := refOp(n, ins)
		if err != nil {
			return nil, fmt.Errorf("node %s (%s): %w", n.Name, n.OpType, err)
		}
		env[n.Output[0]] = y
	}
	return env[g.Output[0].Name], nil
}

func unary(x *refTensor, f func(float64) float64) *refTensor {
	y := &refTensor{shape: slices.Clone(x.shape), v: make([]float64, len(x.v))}
	for i, v := range x.v {
		y.v[i] = f(v)
	}
	return y
}

// broadcast applies f elementwise with numpy broadcasting.
func broadcast(a, b *refTensor, f func(x, y float64) float64) (*refTensor, error) {
	r := max(len(a.shape), len(b.shape))
	pad := func(s []int) []int { return append(slices.Repeat([]int{1}, r-len(s)), s...) }
	as, bs := pad(a.shape), pad(b.shape)
	out := make([]int, r)
	for i := range r {
		switch {
		case as[i] == bs[i], bs[i] == 1:
			out[i] = as[i]
		case as[i] == 1:
			out[i] = bs[i]
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a.shape, b.shape)
		}
	}
	sa, sb, so := strides(as), strides(bs), strides(out)
	y := &refTensor{shape: out, v: make([]float64, numelInts(out))}
	for i := range y.v {
		ia, ib := 0, 0
		for d := range r {
			k := (i / so[d]) % out[d]
			if as[d] != 1 {
				ia += k * sa[d]
			}
			if bs[d] != 1 {
				ib += k * sb[d]
			}
		}
		y.v[i] = f(a.v[ia], b.v[ib])
	}
	return y, nil
}

func matmul2(a, b *refTensor, transB bool) *refTensor {
	m, k := a.shape[0], a.shape[1]
	n := b.shape[1]
	if transB {
		n = b.shape[0]
	}
	y := &refTensor{shape: []int{m, n}, v: make([]float64, m*n)}
	for i := range m {
		for j := range n {
			s := 0.0
			for p := range k {
				bv := b.v[p*n+j]
				if transB {
					bv = b.v[j*k+p]
				}
				s += a.v[i*k+p] * bv
			}
			y.v[i*n+j] = s
		}
	}
	return y
}

func ints(n *NodeProto, name string, def ...int) []int {
	v := n.intsAttr(name)
	if v == nil {
		return def
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// pool2 runs a 2-D window op over x [N, C, H, W] (and Conv through f).
func refPool(n *NodeProto, x *refTensor, avg bool) *refTensor {
	k := ints(n, "kernel_shape")
	st := ints(n, "strides", 1, 1)
	pd := ints(n, "pads", 0, 0, 0, 0)
	dl := ints(n, "dilations", 1, 1)
	ceil := n.intAttr("ceil_mode", 0) != 0
	include := n.intAttr("count_include_pad", 0) != 0
	N, C, H, W := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	outSize := func(in, k, s, p0, p1, d int) int {
		span := in + p0 + p1 - d*(k-1) - 1
		o := span/s + 1
		if ceil {
			o = (span+s-1)/s + 1
			if (o-1)*s >= in+p0 { // the last window must start inside the input or left padding
				o--
			}
		}
		return o
	}
	OH, OW := outSize(H, k[0], st[0], pd[0], pd[2], dl[0]), outSize(W, k[1], st[1], pd[1], pd[3], dl[1])
	y := &refTensor{shape: []int{N, C, OH, OW}, v: make([]float64, N*C*OH*OW)}
	for b := range N {
		for c := range C {
			for oh := range OH {
				for ow := range OW {
					best, sum, cnt, padCnt := math.Inf(-1), 0.0, 0, 0
					for i := range k[0] {
						for j := range k[1] {
							h := oh*st[0] - pd[0] + i*dl[0]
							w := ow*st[1] - pd[1] + j*dl[1]
							if h < 0 || w < 0 || h >= H || w >= W {
								if h < H+pd[2] && w < W+pd[3] {
									padCnt++
								}
								continue
							}
							v := x.v[((b*C+c)*H+h)*W+w]
							best = max(best, v)
							sum += v
							cnt++
						}
					}
					r := best
					if avg {
						if include {
							cnt += padCnt
						}
						r = sum / float64(cnt)
					}
					y.v[((b*C+c)*OH+oh)*OW+ow] = r
				}
			}
		}
	}
	return y
}

func refConv(n *NodeProto, x, w, bias *refTensor) *refTensor {
	st := ints(n, "strides", 1, 1)
	pd := ints(n, "pads", 0, 0, 0, 0)
	dl := ints(n, "dilations", 1, 1)
	g := int(n.intAttr("group", 1))
	N, C, H, W := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	M, CG, KH, KW := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
	OH := (H+pd[0]+pd[2]-dl[0]*(KH-1)-1)/st[0] + 1
	OW := (W+pd[1]+pd[3]-dl[1]*(KW-1)-1)/st[1] + 1
	_ = C
	y := &refTensor{shape: []int{N, M, OH, OW}, v: make([]float64, N*M*OH*OW)}
	for b := range N {
		for m := range M {
			grp := m / (M / g)
			for oh := range OH {
				for ow := range OW {
					s := 0.0
					if bias != nil {
						s = bias.v[m]
					}
					for cg := range CG {
						c := grp*CG + cg
						for i := range KH {
							for j := range KW {
								h, ww := oh*st[0]-pd[0]+i*dl[0], ow*st[1]-pd[1]+j*dl[1]
								if h < 0 || ww < 0 || h >= H || ww >= W {
									continue
								}
								s += x.v[((b*C+c)*H+h)*W+ww] * w.v[((m*CG+cg)*KH+i)*KW+j]
							}
						}
					}
					y.v[((b*M+m)*OH+oh)*OW+ow] = s
				}
			}
		}
	}
	return y
}

// perChannel applies f(v, c) with c the dim-1 index.
func perChannel(x *refTensor, f func(v float64, c int) float64) *refTensor {
	inner := 1
	for _, d := range x.shape[2:] {
		inner *= d
	}
	C := x.shape[1]
	return &refTensor{shape: slices.Clone(x.shape), v: func() []float64 {
		out := make([]float64, len(x.v))
		for i, v := range x.v {
			out[i] = f(v, (i/inner)%C)
		}
		return out
	}()}
}

// lastAxis applies f to each run of the last d values.
func lastAxis(x *refTensor, d int, f func(in, out []float64)) *refTensor {
	y := &refTensor{shape: slices.Clone(x.shape), v: make([]float64, len(x.v))}
	for i := 0; i < len(x.v); i += d {
		f(x.v[i:i+d], y.v[i:i+d])
	}
	return y
}

func refOp(n *NodeProto, in []*refTensor) (*refTensor, error) {
	var x *refTensor
	if len(in) > 0 {
		x = in[0]
	}
	switch n.OpType {
	case "Constant":
		c, err := decodeTensor(n.attr("value").T)
		if err != nil {
			return nil, err
		}
		return &refTensor{shape: c.shape, v: c.vals}, nil
	case "Identity", "Dropout":
		return x, nil
	case "Relu":
		return unary(x, func(v float64) float64 { return max(v, 0) }), nil
	case "Sigmoid":
		return unary(x, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }), nil
	case "Tanh":
		return unary(x, math.Tanh), nil
	case "Erf":
		return unary(x, math.Erf), nil
	case "Softplus":
		return unary(x, func(v float64) float64 { return math.Log(1 + math.Exp(v)) }), nil
	case "LeakyRelu":
		a := n.floatAttr("alpha", 0.01)
		return unary(x, func(v float64) float64 {
			if v < 0 {
				return a * v
			}
			return v
		}), nil
	case "Elu":
		a := n.floatAttr("alpha", 1)
		return unary(x, func(v float64) float64 {
			if v < 0 {
				return a * (math.Exp(v) - 1)
			}
			return v
		}), nil
	case "Add":
		return broadcast(x, in[1], func(a, b float64) float64 { return a + b })
	case "Sub":
		return broadcast(x, in[1], func(a, b float64) float64 { return a - b })
	case "Mul":
		return broadcast(x, in[1], func(a, b float64) float64 { return a * b })
	case "Div":
		return broadcast(x, in[1], func(a, b float64) float64 { return a / b })
	case "Gemm":
		y := matmul2(x, in[1], n.intAttr("transB", 0) != 0)
		if len(in) > 2 && in[2] != nil {
			return broadcast(y, in[2], func(a, b float64) float64 { return a + b })
		}
		return y, nil
	case "MatMul":
		if b := in[1]; len(b.shape) > 2 {
			// batched: [..., M, K] × [..., K, N] with equal batch dims
			r := len(x.shape)
			m, k, n := x.shape[r-2], x.shape[r-1], b.shape[r-1]
			batch := x.size() / (m * k)
			y := &refTensor{shape: append(slices.Clone(x.shape[:r-1]), n), v: make([]float64, batch*m*n)}
			for i := range batch {
				p := matmul2(&refTensor{shape: []int{m, k}, v: x.v[i*m*k : (i+1)*m*k]}, &refTensor{shape: []int{k, n}, v: b.v[i*k*n : (i+1)*k*n]}, false)
				copy(y.v[i*m*n:], p.v)
			}
			return y, nil
		}
		// [..., K] × [K, N]
		k := x.shape[len(x.shape)-1]
		flat := &refTensor{shape: []int{x.size() / k, k}, v: x.v}
		y := matmul2(flat, in[1], false)
		y.shape = append(slices.Clone(x.shape[:len(x.shape)-1]), in[1].shape[1])
		return y, nil
	case "Transpose":
		perm := ints(n, "perm")
		r := len(x.shape)
		if perm == nil {
			for i := range r {
				perm = append(perm, r-1-i)
			}
		}
		shape := make([]int, r)
		for i, p := range perm {
			shape[i] = x.shape[p]
		}
		y := &refTensor{shape: shape, v: make([]float64, len(x.v))}
		sx, sy := strides(x.shape), strides(shape)
		for i := range y.v {
			src := 0
			for dim := range r {
				src += (i / sy[dim]) % shape[dim] * sx[perm[dim]]
			}
			y.v[i] = x.v[src]
		}
		return y, nil
	case "Conv":
		var b *refTensor
		if len(in) > 2 {
			b = in[2]
		}
		return refConv(n, x, in[1], b), nil
	case "MaxPool":
		return refPool(n, x, false), nil
	case "AveragePool":
		return refPool(n, x, true), nil
	case "GlobalAveragePool":
		hw := x.shape[2] * x.shape[3]
		y := &refTensor{shape: []int{x.shape[0], x.shape[1], 1, 1}, v: make([]float64, x.shape[0]*x.shape[1])}
		for i := range y.v {
			for _, v := range x.v[i*hw : (i+1)*hw] {
				y.v[i] += v / float64(hw)
			}
		}
		return y, nil
	case "Pad":
		p := make([]int, len(in[1].v))
		for i, v := range in[1].v {
			p[i] = int(v)
		}
		N, C, H, W := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
		OH, OW := H+p[2]+p[6], W+p[3]+p[7]
		y := &refTensor{shape: []int{N, C, OH, OW}, v: make([]float64, N*C*OH*OW)}
		for b := range N * C {
			for h := range H {
				for w := range W {
					y.v[(b*OH+h+p[2])*OW+w+p[3]] = x.v[(b*H+h)*W+w]
				}
			}
		}
		return y, nil
	case "BatchNormalization":
		eps := n.floatAttr("epsilon", 1e-5)
		sc, b, mu, vr := in[1], in[2], in[3], in[4]
		return perChannel(x, func(v float64, c int) float64 {
			return (v-mu.v[c])/math.Sqrt(vr.v[c]+eps)*sc.v[c] + b.v[c]
		}), nil
	case "LayerNormalization":
		eps := n.floatAttr("epsilon", 1e-5)
		d := x.shape[len(x.shape)-1]
		return lastAxis(x, d, func(a, out []float64) {
			mean, vr := 0.0, 0.0
			for _, v := range a {
				mean += v / float64(d)
			}
			for _, v := range a {
				vr += (v - mean) * (v - mean) / float64(d)
			}
			for i, v := range a {
				out[i] = (v-mean)/math.Sqrt(vr+eps)*in[1].v[i] + in[2].v[i]
			}
		}), nil
	case "Softmax", "LogSoftmax":
		axis := int(n.intAttr("axis", -1))
		if axis != -1 && axis != len(x.shape)-1 {
			return nil, fmt.Errorf("test runtime: softmax over axis %d of %v", axis, x.shape)
		}
		d := x.shape[len(x.shape)-1]
		return lastAxis(x, d, func(a, out []float64) {
			m := slices.Max(a)
			s := 0.0
			for _, v := range a {
				s += math.Exp(v - m)
			}
			for i, v := range a {
				if n.OpType == "Softmax" {
					out[i] = math.Exp(v-m) / s
				} else {
					out[i] = v - m - math.Log(s)
				}
			}
		}), nil
	case "Flatten":
		return &refTensor{shape: []int{x.shape[0], x.size() / x.shape[0]}, v: x.v}, nil
	case "Reshape":
		shape := make([]int, len(in[1].v))
		for i, v := range in[1].v {
			shape[i] = int(v)
			if v == 0 {
				shape[i] = x.shape[i]
			}
		}
		if k := slices.Index(shape, -1); k >= 0 {
			shape[k] = 1
			shape[k] = x.size() / numelInts(shape)
		}
		return &refTensor{shape: shape, v: x.v}, nil
	}
	return nil, fmt.Errorf("test runtime: op %s not implemented", n.OpType)
}

// refRunFloat32 runs g on float32 input of shape.
func refRunFloat32(t *testing.T, g *GraphProto, x []float32, shape ...int) *refTensor {
	t.Helper()
	in := &refTensor{shape: shape, v: make([]float64, len(x))}
	for i, v := range x {
		in.v[i] = float64(v)
	}
	y, err := refRun(g, in)
	if err != nil {
		t.Fatal(err)
	}
	return y
}
