package mlp

import (
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// topology is the shape of a network: layers[0] inputs, sigmoid hidden
// layers of layers[1 : len−1] units, and a softmax output of layers[len−1]
// units. Its weights are one flat vector laid out as Spark ML's: for each
// affine layer l (from in = layers[l] to out = layers[l+1] units), the
// in × out matrix W row-major (Spark's out × in column-major Breeze matrix,
// the same bytes), then the out biases.
type topology struct {
	layers []int
	wOff   []int // wOff[l]: offset of affine layer l's W
	bOff   []int // bOff[l]: offset of its biases
	size   int   // total number of weights
}

func newTopology(layers []int) topology {
	t := topology{layers: layers}
	off := 0
	for l := 0; l+1 < len(layers); l++ {
		in, out := layers[l], layers[l+1]
		t.wOff = append(t.wOff, off)
		off += in * out
		t.bOff = append(t.bOff, off)
		off += out
	}
	t.size = off
	return t
}

// affine returns the number of affine layers.
func (t topology) affine() int { return len(t.layers) - 1 }

// isBias reports whether weight i is a bias (not penalized by regParam).
func (t topology) isBias(i int) bool {
	for l := range t.affine() {
		if i >= t.bOff[l] && i < t.bOff[l]+t.layers[l+1] {
			return true
		}
	}
	return false
}

// splitmix64 is the generator of the initial weights (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014):
// fixed here, so that a seed means the same weights in every build.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float64 returns a uniform value in [0, 1).
func (s *splitmix64) float64() float64 { return float64(s.next()>>11) / (1 << 53) }

// initWeights draws the starting weights as Spark ML does
// (AffineLayerModel.randomWeights, after LeCun et al., "Efficient
// BackProp", 1998): every weight and bias of a layer with n inputs uniform
// in ±2.4/√n, so that a sigmoid unit starts where its curvature is
// greatest.
func (t topology) initWeights(seed int64) []float64 {
	w := make([]float64, t.size)
	rng := splitmix64(uint64(seed))
	for l := range t.affine() {
		in, out := t.layers[l], t.layers[l+1]
		bound := 2.4 / math.Sqrt(float64(in))
		lo, hi := t.wOff[l], t.bOff[l]+out
		for i := lo; i < hi; i++ {
			w[i] = (rng.float64()*2 - 1) * bound
		}
	}
	return w
}

// float is the precision the network computes in.
type float interface{ float32 | float64 }

// gemmFunc is kernel.Sgemm or kernel.Dgemm.
type gemmFunc[T float] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// rowGrain is the fewest rows worth a core in the elementwise passes.
const rowGrain = 64

// network evaluates the loss and gradient of a topology on one rank's rows
// (x: n × layers[0] row-major, y: class indices) in precision T with
// preallocated buffers: a forward pass of one GEMM per layer, then a
// backward pass of two GEMMs per layer (one for the first), everything
// else row-parallel. It is not safe for concurrent use.
type network[T float] struct {
	top  topology
	x    []T
	y    []int32
	n    int
	gemm gemmFunc[T]

	w    []T   // the weights in T
	act  [][]T // act[l]: n × layers[l+1]; the activations, then the deltas
	tmp  []T   // n × the widest hidden layer: delta·Wᵀ before the sigmoid's derivative
	gT   []T   // out × in: one layer's weight gradient, transposed
	part [][]float64
	// part[c] holds chunk c's partial sums: loss, then every layer's bias
	// gradient (at biasAt[l]); chunks are fixed by n and GOMAXPROCS and
	// summed in order, so the result does not depend on scheduling.
	biasAt []int
	chunks int
	size   int // rows per chunk
}

func newNetwork[T float](top topology, x []T, y []int32, n int, gemm gemmFunc[T]) *network[T] {
	nw := &network[T]{top: top, x: x, y: y, n: n, gemm: gemm, w: make([]T, top.size)}
	widest, biggest, sums := 0, 0, 1
	for l := range top.affine() {
		in, out := top.layers[l], top.layers[l+1]
		nw.act = append(nw.act, make([]T, n*out))
		if l+1 < top.affine() {
			widest = max(widest, out)
		}
		biggest = max(biggest, in*out)
		nw.biasAt = append(nw.biasAt, sums)
		sums += out
	}
	nw.tmp = make([]T, n*widest)
	nw.gT = make([]T, biggest)
	nw.chunks, nw.size = parallel.Chunks(n, rowGrain)
	nw.part = make([][]float64, nw.chunks)
	for c := range nw.part {
		nw.part[c] = make([]float64, sums)
	}
	return nw
}

// eachChunk calls fn(c, lo, hi) for every row chunk, in parallel.
func (nw *network[T]) eachChunk(fn func(c, lo, hi int)) {
	parallel.For(nw.chunks, 1, func(clo, chi int) {
		for c := clo; c < chi; c++ {
			lo := c * nw.size
			fn(c, lo, min(lo+nw.size, nw.n))
		}
	})
}

// setWeights converts w64 to T.
func (nw *network[T]) setWeights(w64 []float64) {
	for i, v := range w64 {
		nw.w[i] = T(v)
	}
}

// forward computes every hidden layer's activations and the output
// layer's logits (in act[L−1], biases added).
func (nw *network[T]) forward() {
	top, n := nw.top, nw.n
	in := nw.x
	for l := range top.affine() {
		k, out := top.layers[l], top.layers[l+1]
		z := nw.act[l]
		nw.gemm(false, false, n, out, k, 1, in, k, nw.w[top.wOff[l]:top.bOff[l]], out, 0, z, out)
		b := nw.w[top.bOff[l] : top.bOff[l]+out]
		hidden := l+1 < top.affine()
		nw.eachChunk(func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				row := z[i*out : (i+1)*out]
				for j := range row {
					row[j] += b[j]
				}
				if hidden {
					sigmoid(row)
				}
			}
		})
		in = z
	}
}

// sigmoid sets v[i] = 1/(1+e^−v[i]): the vector kernel for float32, the
// correctly rounded math.Exp for float64.
func sigmoid[T float](v []T) {
	if v32, ok := any(v).([]float32); ok {
		kernel.SigmoidF32(v32, v32)
		return
	}
	for i, z := range v {
		v[i] = T(1 / (1 + math.Exp(-float64(z))))
	}
}

// lossGrad sets grad to the gradient of the summed cross-entropy of the
// rows at weights w64 and returns that sum (in float64; no averaging, no
// penalty: the caller adds them after the all-reduce).
func (nw *network[T]) lossGrad(w64, grad []float64) float64 {
	top, n, L := nw.top, nw.n, nw.top.affine()
	if n == 0 {
		clear(grad)
		return 0
	}
	nw.setWeights(w64)
	nw.forward()

	// Softmax and cross-entropy; the output delta (softmax − one-hot)
	// replaces the logits.
	k := top.layers[L]
	outB := nw.biasAt[L-1]
	z := nw.act[L-1]
	nw.eachChunk(func(c, lo, hi int) {
		p := nw.part[c]
		clear(p)
		for i := lo; i < hi; i++ {
			row := z[i*k : (i+1)*k]
			m := float64(row[0])
			for _, v := range row[1:] {
				m = max(m, float64(v))
			}
			s := 0.0
			for _, v := range row {
				s += math.Exp(float64(v) - m)
			}
			lse := m + math.Log(s)
			y := int(nw.y[i])
			p[0] += lse - float64(row[y])
			for j, v := range row {
				d := math.Exp(float64(v) - lse)
				if j == y {
					d--
				}
				row[j] = T(d)
				p[outB+j] += d
			}
		}
	})

	// Backward, from the output layer down.
	for l := L - 1; l >= 0; l-- {
		in, out := top.layers[l], top.layers[l+1]
		delta := nw.act[l]
		a := nw.x
		if l > 0 {
			a = nw.act[l-1]
		}
		// gT = deltaᵀ·a (out × in): the transposed product runs at full
		// GEMM speed with the long dimension n as k.
		nw.gemm(true, false, out, in, n, 1, delta, out, a, in, 0, nw.gT, in)
		g := grad[top.wOff[l]:top.bOff[l]]
		for o := range out {
			for j, v := range nw.gT[o*in : (o+1)*in] {
				g[j*out+o] = float64(v)
			}
		}
		if l == 0 {
			break
		}
		// The previous layer's delta: (delta·Wᵀ) ⊙ a(1 − a), in place of a.
		t := nw.tmp[:n*in]
		nw.gemm(false, true, n, in, out, 1, delta, out, nw.w[top.wOff[l]:top.bOff[l]], out, 0, t, in)
		b := nw.biasAt[l-1]
		nw.eachChunk(func(c, lo, hi int) {
			p := nw.part[c][b : b+in]
			for i := lo; i < hi; i++ {
				ar := a[i*in : (i+1)*in]
				tr := t[i*in : (i+1)*in]
				for j, s := range ar {
					d := tr[j] * s * (1 - s)
					ar[j] = d
					p[j] += float64(d)
				}
			}
		})
	}

	// The chunks' sums, in order.
	loss := 0.0
	for l := range L {
		clear(grad[top.bOff[l] : top.bOff[l]+top.layers[l+1]])
	}
	for _, p := range nw.part {
		loss += p[0]
		for l := range L {
			out := top.layers[l+1]
			g := grad[top.bOff[l] : top.bOff[l]+out]
			for j, v := range p[nw.biasAt[l] : nw.biasAt[l]+out] {
				g[j] += v
			}
		}
	}
	return loss
}
